package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path"
	"slices"
	"sort"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/archive"
)

// Members go from a cached archive into a package in one streaming pass:
// decompress, select, hash, tar and compress, with no extracted tree on disk.
//
// Each archive source is read once, while the first package that uses it is
// written (the package "streams" the source). archive.Select runs in a
// goroutine (a feed) and pkg/deb asks for the package's files in dpkg's order
// through deb.Entry.OpenSized. A member is handed straight to the writer when
// it is the next one the writer asks this source for; any other member the
// plan wants is spooled into the build's private folder: one that arrives
// before the writer needs it (the archive's order is not dpkg's), one used
// twice, and the members of the other packages of the same source, which are
// written afterwards from the spool. The decision depends only on the two
// orders, never on timing, so what is spooled is the same on every run, and
// the bytes of the .deb never depend on it.
//
// Streaming keeps the payload off the disk at about the same wall time (xz
// dominates). Several packages of one source (Kubernetes' server tarball:
// master, node, client) are written one after the other, so only the first
// streams and the others' members are spooled: the packages of a build share
// the run's compression pool anyway (its workers and memory), so writing them
// at once would gain no CPU, only more blocks waiting for the same workers.
// The measurements are in cmd/updeb-bench/README.md ("Streaming vs spooling").
//
// An archive's verdict comes at its end (a later hostile entry, the gzip or
// xz checksum): the package is written into the build folder and moved to
// the output folder only once every feed it read from returned nil.

// member is a file taken from a source: either the verified cache file itself
// (raw sources) or a spool file holding one archive member (spool.go).
type member struct {
	path    string
	size    int64 // of the member, not of its spool file
	spooled bool
}

// memberKey names a file inside a source; path is "" for raw sources.
type memberKey struct{ source, path string }

// members hands out the files of a build's sources. Its maps belong to the
// build's goroutine; feeds own theirs until they finish.
type members struct {
	dir     string // spool folder, private to the build
	lim     archive.Limits
	log     *slog.Logger
	srcs    map[string]*source.Verified
	uses    map[memberKey]int            // how many files of the plan each member becomes
	left    map[memberKey]int            // how many of those are still to be opened
	read    map[memberKey]member         // raw sources and every member of finished feeds
	done    map[string]bool              // archive sources already read
	feeding map[string]*feed             // sources being read for the package being written
	users   map[string]map[memberKey]int // per package: members it takes, and how often
}

func newMembers(plan *recipe.Resolved, srcs map[string]*source.Verified, dir string, lim archive.Limits, log *slog.Logger) (*members, error) {
	ms := &members{dir: dir, lim: lim, log: log, srcs: srcs, uses: map[memberKey]int{}, left: map[memberKey]int{},
		read: map[memberKey]member{}, done: map[string]bool{}, users: map[string]map[memberKey]int{}}
	for _, p := range plan.Packages {
		ms.users[p.Name] = map[memberKey]int{}
		for _, f := range p.Files {
			if f.Source == "" {
				continue
			}
			vs := srcs[f.Source]
			if vs == nil {
				return nil, fmt.Errorf("no source named %q", f.Source)
			}
			k := keyOf(f)
			if archive.Kind(vs.Source.Kind) == archive.Raw {
				// The cached file is packaged as it is, not read through
				// archive.Select: its limit for one file is applied here,
				// as to an archive's members (and by deb.Inspect, which
				// updeb publish reads the package with).
				if err := archive.CheckRawSize(vs.Artifact.Path, vs.Artifact.Size, lim); err != nil {
					return nil, fmt.Errorf("source %s (%s) for %s: %w", f.Source, vs.Source.URL, f.Dest, err)
				}
				if err := checkRawContent(vs); err != nil {
					return nil, fmt.Errorf("source %s (%s) for %s: %w", f.Source, vs.Source.URL, f.Dest, err)
				}
				ms.read[k] = member{path: vs.Artifact.Path, size: vs.Artifact.Size}
				continue
			}
			ms.uses[k]++
			ms.left[k]++
			ms.users[p.Name][k]++
		}
	}
	return ms, nil
}

// checkRawContent refuses a raw source whose kind the recipe left to its
// URL (whose name ends in no suffix updeb reads as an archive) when its
// bytes are an archive or compressed file: a release served as
// /download?os=linux, named only by its Content-Disposition, would be
// installed as /usr/bin/tool, a tarball that cannot run. A kind: raw the
// recipe writes says the packed bytes are meant.
func checkRawContent(vs *source.Verified) error {
	if !vs.Source.KindFromURL {
		return nil
	}
	f, _, err := confined.OpenFile(vs.Artifact.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return err
	}
	name, kind, ok := archive.ContentFormat(head[:n])
	if !ok || kind == archive.Raw {
		return nil
	}
	const is = "the file is %s, an archive or compressed file, and the recipe says no kind: its URL's name ends in no suffix updeb reads as an archive, so it would be packaged as it is: "
	if kind == "" {
		return fmt.Errorf(is+"updeb does not unpack %s: take the release's .tar.gz, .tar.xz or .zip, or write kind: raw to package these bytes as they are", name, name)
	}
	return fmt.Errorf(is+"write kind: %s and the path of the file inside it, or kind: raw to package these bytes as they are", name, kind)
}

// keyOf is the member a planned file comes from. The archive reader hands out
// cleaned names ("./bridge" -> "bridge").
func keyOf(f recipe.ResolvedFile) memberKey {
	name := f.Path
	if name != "" {
		name = path.Clean(name)
	}
	return memberKey{f.Source, name}
}

// spoolAll reads every archive source into the spool before any package is
// written: the path of Options.SpoolAll.
func (ms *members) spoolAll(ctx context.Context) error {
	ms.start(ctx, "", nil)
	return ms.finish()
}

// start begins a pass over every archive source that pkg uses and no earlier
// package read (every unread source when pkg is ""). stream holds the members
// pkg may take as they stream: those it uses once and no other file of the
// plan uses. The caller must call finish, after cancelling ctx if it gives up.
func (ms *members) start(ctx context.Context, pkg string, stream map[memberKey]bool) {
	ms.feeding = map[string]*feed{}
	want := map[string][]string{}
	for k := range ms.uses {
		if ms.done[k.source] || (pkg != "" && !ms.usedBy(pkg, k.source)) {
			continue
		}
		want[k.source] = append(want[k.source], k.path)
	}
	for _, name := range sortedKeys(want) {
		vs := ms.srcs[name]
		f := &feed{name: name, vs: vs, dir: ms.dir, log: ms.log, stream: map[string]bool{}, spooled: map[string]member{},
			req: make(chan request), finished: make(chan struct{})}
		for k := range stream {
			if k.source == name {
				f.stream[k.path] = true
			}
		}
		sort.Strings(want[name])
		ms.feeding[name] = f
		ms.done[name] = true
		go f.run(ctx, want[name], ms.lim)
	}
}

func (ms *members) usedBy(pkg, source string) bool {
	for k := range ms.users[pkg] {
		if k.source == source {
			return true
		}
	}
	return false
}

// streamable is what package pkg may take as it streams (see start).
func (ms *members) streamable(pkg string) map[memberKey]bool {
	out := map[memberKey]bool{}
	for k, n := range ms.users[pkg] {
		if n == 1 && ms.uses[k] == 1 && !ms.done[k.source] {
			out[k] = true
		}
	}
	return out
}

// finish waits for the feeds of the current pass and keeps what they spooled.
// It returns the first feed's error: the package written meanwhile must be
// discarded (archive.Select's contract).
func (ms *members) finish() error {
	var errs []error
	for _, name := range sortedKeys(ms.feeding) {
		f := ms.feeding[name]
		<-f.finished
		if f.err != nil {
			errs = append(errs, f.err)
		}
		for p, m := range f.spooled {
			ms.read[memberKey{name, p}] = m
		}
	}
	ms.feeding = nil
	return errors.Join(errs...)
}

// open is deb.Entry.OpenSized for the member k.
func (ms *members) open(k memberKey) (io.ReadCloser, int64, error) {
	ms.left[k]--
	last := ms.left[k] <= 0
	if f := ms.feeding[k.source]; f != nil {
		return f.open(k.path, last)
	}
	m, ok := ms.read[k]
	if !ok {
		return nil, 0, fmt.Errorf("source %s has no member %q", k.source, k.path)
	}
	return openMember(m, last)
}

// onDisk returns an opener of member k when a file holds it now (a raw
// source, or a member spooled by an earlier package). Opening it does not
// count as a use: a spool file stays for the use that writes it.
func (ms *members) onDisk(k memberKey) (func() (io.ReadCloser, error), bool) {
	m, ok := ms.read[k]
	if !ok || ms.feeding[k.source] != nil {
		return nil, false
	}
	return func() (io.ReadCloser, error) {
		rc, _, err := openMember(m, false)
		return rc, err
	}, true
}

// feed runs archive.Select over one source and serves the writer's requests.
type feed struct {
	name   string
	vs     *source.Verified
	dir    string
	log    *slog.Logger
	stream map[string]bool // members handed over as they stream, if asked for in time

	req      chan request
	held     *request // the writer's request the feed has not answered yet
	finished chan struct{}
	// Written by run before finished is closed; read by others only after.
	spooled map[string]member
	err     error
	enc     *zstd.Encoder // the spool's, made at the first spool file
}

type request struct {
	name  string
	last  bool       // no later request names this member: its spool file may go
	reply chan reply // buffered: the feed never waits for the writer to read it
}

type reply struct {
	rc   io.ReadCloser
	size int64
	err  error
}

func (f *feed) run(ctx context.Context, want []string, lim archive.Limits) {
	// The cache file is read again: its bytes must still be the verified ones.
	err := archive.SelectPinned(ctx, f.vs.Artifact.Path, verifiedSHA256(f.vs), archive.Kind(f.vs.Source.Kind), want, lim, func(m archive.Member, r io.Reader) error {
		return f.member(ctx, m, r)
	})
	if err != nil {
		f.err = fmt.Errorf("source %s (%s): %w", f.name, f.vs.Source.URL, err)
	}
	if f.held != nil {
		f.answer(f.held)
	}
	close(f.finished)
}

// member handles one wanted member, in archive order.
func (f *feed) member(ctx context.Context, m archive.Member, r io.Reader) error {
	if f.stream[m.Name] {
		// Wait until the writer asks this source for its next member.
		if err := f.take(ctx, true); err != nil {
			return err
		}
		if f.held.name == m.Name {
			q := f.held
			f.held = nil
			rc := &streamed{r: r, closed: make(chan struct{})}
			q.reply <- reply{rc: rc, size: m.Size}
			select {
			case <-rc.closed:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if err := f.spool(m, r); err != nil {
		return err
	}
	if err := f.take(ctx, false); err != nil {
		return err
	}
	if f.held != nil && f.held.name == m.Name {
		f.answer(f.held)
		f.held = nil
	}
	return nil
}

// take receives the writer's requests until it holds one it cannot answer
// from the spool: waiting for it when block is set, else only as long as
// requests are pending.
func (f *feed) take(ctx context.Context, block bool) error {
	for f.held == nil {
		var q request
		if block {
			select {
			case q = <-f.req:
			case <-ctx.Done():
				return ctx.Err()
			}
		} else {
			select {
			case q = <-f.req:
			default:
				return nil
			}
		}
		if _, ok := f.spooled[q.name]; ok {
			f.answer(&q)
			continue
		}
		f.held = &q
	}
	return nil
}

// answer replies from the spool, or with the archive's error.
func (f *feed) answer(q *request) {
	m, ok := f.spooled[q.name]
	switch {
	case f.err != nil:
		q.reply <- reply{err: f.err}
	case !ok:
		q.reply <- reply{err: fmt.Errorf("source %s (%s): member %q was not read", f.name, f.vs.Source.URL, q.name)}
	default:
		rc, size, err := openMember(m, q.last)
		q.reply <- reply{rc: rc, size: size, err: err}
	}
}

// open asks the feed for a member, from the writer's goroutine.
func (f *feed) open(name string, last bool) (io.ReadCloser, int64, error) {
	q := request{name: name, last: last, reply: make(chan reply, 1)}
	select {
	case f.req <- q:
		r := <-q.reply
		return r.rc, r.size, r.err
	case <-f.finished:
		q.reply = make(chan reply, 1)
		f.answer(&q)
		r := <-q.reply
		return r.rc, r.size, r.err
	}
}

// streamed is a member's reader lent to the writer; Close gives it back.
type streamed struct {
	r      io.Reader
	once   sync.Once
	closed chan struct{}
}

func (s *streamed) Read(p []byte) (int, error) { return s.r.Read(p) }

func (s *streamed) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Sorted(maps.Keys(m))
	return keys
}
