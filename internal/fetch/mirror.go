package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/weblink"
)

// Mirror maps upstream URLs starting with Prefix to To (see the package doc).
type Mirror struct {
	Prefix string // e.g. https://github.com/
	To     string // e.g. file:///srv/mirror/github.com/ or http://mirror.internal/github/
}

// Check reports a mirror whose Prefix is not an http(s) URL or whose To is not
// file:///ABSOLUTE/PATH/ or an http(s) URL; both must be plain (package
// srcurl's grammar; a folder without "." or ".." segments).
func (m Mirror) Check() error {
	if p, err := srcurl.Check(m.Prefix); err != nil || p.RawQuery != "" {
		return fmt.Errorf("mirror prefix %q: want an http:// or https:// URL prefix without . or .. segments, query or fragment", srcurl.Redact(m.Prefix))
	}
	t, err := url.Parse(m.To)
	switch {
	case err != nil, t.RawQuery != "", t.Fragment != "", strings.ContainsAny(m.To, "\x00\r\n"):
	case t.Scheme == "file" && strings.HasPrefix(t.Path, "/") && (t.Host == "" || t.Host == "localhost"):
		if c := path.Clean(t.Path); c == t.Path || c+"/" == t.Path {
			return nil
		}
	case t.Scheme == "http" || t.Scheme == "https":
		if _, err := srcurl.Check(m.To); err == nil && t.RawQuery == "" {
			return nil
		}
	}
	return fmt.Errorf("mirror %q: to %q: want file:///ABSOLUTE/PATH/, http:// or https://, without credentials", m.Prefix, srcurl.Redact(m.To))
}

func checkMirrors(ms []Mirror) error {
	for _, m := range ms {
		if err := m.Check(); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
	}
	return nil
}

// MirrorError is a mirrored URL refused because what it maps to is not a
// regular file inside the mirror's folder (a symlink out of it, a device, a
// FIFO, a folder), or not a URL below the mirror's prefix. Nothing was read.
type MirrorError struct {
	URL    string // the upstream URL
	Target string // what it mapped to
	Err    error
}

func (e *MirrorError) Error() string {
	return fmt.Sprintf("fetch %s: mirror %s refused: %v", e.URL, e.Target, e.Err)
}

func (e *MirrorError) Unwrap() error { return e.Err }

// target is where a URL is fetched from.
type target struct {
	url      string // what is fetched: the upstream URL, an HTTP mirror's URL, or file:// for display
	dir      string // a file mirror's folder, "" otherwise
	name     string // below dir: the decoded path, slash-separated
	mirrored bool
}

// mapMirror returns where to fetch u (already accepted by srcurl.Check):
// below the longest mirror prefix that matches it at a segment boundary, or
// u itself. A file mirror maps u's decoded path segments below its folder
// (srcurl refuses every spelling of "." and ".."); an HTTP mirror gets the
// rest of u appended to its To, and the result must be a URL below To.
func mapMirror(ms []Mirror, u string) (target, error) {
	best, rest := -1, ""
	for i, m := range ms {
		if r, ok := matchPrefix(m.Prefix, u); ok && (best < 0 || len(m.Prefix) > len(ms[best].Prefix)) {
			best, rest = i, r
		}
	}
	if best < 0 {
		return target{url: u}, nil
	}
	m := ms[best]
	to, _ := url.Parse(m.To)
	if to.Scheme == "file" {
		escaped, _, _ := strings.Cut(rest, "?")
		segs, err := srcurl.Segments(strings.TrimPrefix(escaped, "/"))
		display := strings.TrimSuffix(m.To, "/") + "/" + strings.TrimPrefix(escaped, "/")
		if err == nil && (len(segs) == 0 || segs[len(segs)-1] == "") {
			err = errors.New("maps to a folder, not a file")
		}
		if err != nil {
			return target{}, &MirrorError{URL: u, Target: display, Err: err}
		}
		return target{url: display, dir: to.Path, name: strings.Join(segs, "/"), mirrored: true}, nil
	}
	mapped := strings.TrimSuffix(m.To, "/") + "/" + strings.TrimPrefix(rest, "/")
	mu, err := srcurl.Check(mapped)
	if err == nil && !strings.HasPrefix(mu.EscapedPath(), strings.TrimSuffix(to.EscapedPath(), "/")+"/") {
		err = fmt.Errorf("is not below %s", m.To)
	}
	if err != nil {
		return target{}, &MirrorError{URL: u, Target: mapped, Err: err}
	}
	return target{url: mapped, mirrored: true}, nil
}

// MirrorFile returns the file, slash-separated below a file mirror's
// folder, that a file mirror m maps u to: the layout a mirrors: entry with a
// folder reads (what updeb mirror export writes).
func MirrorFile(m Mirror, u string) (string, error) {
	if _, err := srcurl.Check(u); err != nil {
		return "", err
	}
	t, err := mapMirror([]Mirror{m}, u)
	if err != nil {
		return "", err
	}
	if t.dir == "" {
		return "", fmt.Errorf("%s is not below the file mirror %s", u, m.Prefix)
	}
	return t.name, nil
}

// matchPrefix reports whether prefix starts u and ends at a segment
// boundary (https://github.com/helm matches .../helm/x, not .../helmfile/x),
// and returns the rest of u. Scheme and host are compared as one origin
// however they are spelled (a host's case, a final dot, a default port
// named or not): https://Releases.Example.org:443/x went to upstream past a
// mirror of https://releases.example.org/, without a word.
func matchPrefix(prefix, u string) (rest string, ok bool) {
	po, pp := splitOrigin(prefix)
	uo, up := splitOrigin(u)
	if po == "" || po != uo || !strings.HasPrefix(up, pp) {
		return "", false
	}
	if strings.HasSuffix(pp, "/") || len(up) == len(pp) || strings.ContainsRune("/?", rune(up[len(pp)])) {
		return up[len(pp):], true
	}
	return "", false
}

// splitOrigin splits an http(s) URL into its origin, written one way
// (scheme, host in lower case without a final dot, port; "" for what is no
// such URL), and the rest (path and query) as written.
func splitOrigin(s string) (origin, rest string) {
	scheme, after, ok := strings.Cut(s, "://")
	if !ok {
		return "", s
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	o, err := url.Parse(scheme + "://" + after[:end])
	if err != nil || o.Host == "" || o.User != nil {
		return "", s
	}
	return strings.ToLower(scheme) + "://" + weblink.Host(o), after[end:]
}

// copyFile reads a file mirror's file into tmp, with the size limit. The file
// is opened inside the mirror's folder (confined.Open): a symlink out of it,
// a device or a FIFO is refused before a byte is read. The copy (gigabytes,
// seconds) stops at ctx's end.
func (f *Fetcher) copyFile(ctx context.Context, t target, upstream string, tmp *os.File, h *digest.Hasher) error {
	src, fi, err := confined.Open(t.dir, t.name)
	if errors.Is(err, confined.ErrRefused) {
		return &MirrorError{URL: upstream, Target: t.url, Err: err}
	}
	if errors.Is(err, fs.ErrNotExist) {
		// The whole folder not there is no file to bring over again:
		// the stick or share that holds it is not mounted, or the
		// mirrors: entry names another folder.
		folder := ""
		if _, err := os.Stat(t.dir); errors.Is(err, fs.ErrNotExist) {
			folder = filepath.Clean(t.dir)
		}
		return &MissingError{URL: upstream, Where: "mirror " + t.url, Folder: folder}
	}
	if err != nil {
		return &NetworkError{URL: upstream, Target: t.url, Attempts: 1, Err: err}
	}
	defer src.Close()
	r := ctxio.Reader(ctx, io.LimitReader(src, f.o.MaxSize+1))
	if f.o.Progress != nil {
		r = &copyProgress{r: r, f: f, p: Progress{URL: upstream, Total: fi.Size()}}
	}
	n, err := io.CopyBuffer(io.MultiWriter(tmp, h), r, make([]byte, copyBuffer))
	f.progress(Progress{URL: upstream, Received: n, Total: fi.Size(), Done: true, Err: err})
	if diskfull.Is(err) {
		return diskfull.Wrap(err, f.cache.Dir())
	}
	if ctx.Err() != nil {
		return fmt.Errorf("copying %s: %w", t.url, ctx.Err())
	}
	if err != nil {
		return &NetworkError{URL: upstream, Target: t.url, Attempts: 1, Err: err}
	}
	if n > f.o.MaxSize {
		return &SizeError{URL: upstream, Limit: f.o.MaxSize, Size: n}
	}
	return nil
}

// copyProgress reports a mirror copy's progress every progressEvery.
type copyProgress struct {
	r    io.Reader
	f    *Fetcher
	p    Progress
	last time.Time
}

func (c *copyProgress) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.Received += int64(n)
	if now := time.Now(); now.Sub(c.last) >= progressEvery {
		c.last = now
		c.f.progress(c.p)
	}
	return n, err
}
