package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/digest"
)

// assemble turns a planned package into the deb writer's input. The files'
// bytes are watched on their way (binaries), for the lintian overrides.
// Only the files whose packaged sha256 is used (needsSHA256) get it taken:
// without SHA-NI it costs half of what zstd does.
func assemble(r *recipe.Recipe, plan *recipe.Resolved, pp *recipe.ResolvedPackage, ms *members, srcs map[string]*source.Verified) (*deb.Package, error) {
	p := &deb.Package{
		Control:         pp.DebControl(),
		Conffiles:       pp.Conffiles,
		SourceDateEpoch: plan.SourceDateEpoch,
	}
	bins := newBinaries()
	for _, f := range pp.Files {
		e := deb.Entry{Path: f.Dest, Type: deb.TypeFile, Mode: f.PackedMode(), Owner: f.Owner, NoSHA256: !needsSHA256(f, srcs)}
		dest := f.Dest
		if f.LocalPath != "" {
			fh, st, err := r.OpenLocal(f.LocalPath)
			if err != nil {
				return nil, err
			}
			fh.Close()
			open := openLocal(r, f.LocalPath, st)
			bins.files[dest] = open
			e.Size, e.Open = st.Size(), func() (io.ReadCloser, error) {
				rc, err := open()
				if err != nil {
					return nil, err
				}
				return bins.watch(dest, rc), nil
			}
		} else {
			k := keyOf(f)
			if open, ok := ms.onDisk(k); ok {
				bins.files[dest] = open
			}
			e.OpenSized = func() (io.ReadCloser, int64, error) {
				rc, n, err := ms.open(k)
				if err != nil {
					return nil, 0, err
				}
				return bins.watch(dest, rc), n, nil
			}
		}
		p.Entries = append(p.Entries, e)
	}
	for _, d := range pp.Directories {
		p.Entries = append(p.Entries, deb.Entry{Path: d.Path, Type: deb.TypeDir, Mode: d.Mode, Owner: d.Owner})
	}
	for _, l := range pp.Symlinks {
		p.Entries = append(p.Entries, deb.Entry{Path: l.Dest, Type: deb.TypeSymlink, Linkname: l.Target})
	}
	for _, l := range pp.Hardlinks {
		p.Entries = append(p.Entries, deb.Entry{Path: l.Dest, Type: deb.TypeHardlink, Linkname: l.Target})
	}
	for _, g := range pp.GeneratedFiles {
		content := g.Content
		e := deb.Entry{Path: g.Dest, Type: deb.TypeFile, Mode: g.Mode, Size: int64(len(content)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(content)), nil }}
		if g.Dest == recipe.OverridesPath(pp.Name) {
			e.Size, e.Open, e.OpenSized = 0, nil, bins.overrides(pp)
		}
		p.Entries = append(p.Entries, e)
	}
	scripts, err := r.MaintainerScripts(pp)
	if err != nil {
		return nil, err
	}
	for _, s := range scripts {
		p.Scripts = append(p.Scripts, deb.Script{Name: s.Name, Content: []byte(s.Content)})
	}
	p.Triggers = strings.Join(pp.Triggers, "\n")
	p.Amend = bins.libc6(pp, ms.log)
	return p, nil
}

// openLocal opens a recipe-folder file again when the writer needs its bytes:
// confined like the first time, and refused unless it is still the same file
// with the same size (never a file swapped in since it was checked).
func openLocal(r *recipe.Recipe, path string, was os.FileInfo) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		f, now, err := r.OpenLocal(path)
		if err != nil {
			return nil, err
		}
		if !os.SameFile(was, now) || now.Size() != was.Size() {
			f.Close()
			return nil, fmt.Errorf("%s changed while the build read it", path)
		}
		return f, nil
	}
}

// needsSHA256 says whether writePackage uses f's packaged sha256: a
// recipe-folder file's names it in the provenance, a raw source's is
// checked against the bytes that were verified (checkRawPackaged).
func needsSHA256(f recipe.ResolvedFile, srcs map[string]*source.Verified) bool {
	return f.LocalPath != "" || rawVerifiedSHA256(f, srcs) != ""
}

// rawVerifiedSHA256 is the sha256 of the bytes verified for f's source if
// that is a raw source (a file packaged as it was downloaded), "" for any
// other file.
func rawVerifiedSHA256(f recipe.ResolvedFile, srcs map[string]*source.Verified) string {
	vs := srcs[f.Source]
	if vs == nil || vs.Source.Kind != "raw" {
		return ""
	}
	return verifiedSHA256(vs)
}

// verifiedSHA256 is the sha256 of the bytes verified for a source, whatever
// vouched for them (a pinned digest of any algorithm, a signature).
func verifiedSHA256(vs *source.Verified) string {
	if vs.Artifact != nil && vs.Artifact.Digests[digest.SHA256] != "" {
		return vs.Artifact.Digests[digest.SHA256]
	}
	return vs.Source.Pinned[digest.SHA256]
}

// checkRawPackaged checks that the bytes packaged from each raw source, read
// straight from the cache, are the bytes that were verified: the cache file
// could have changed in between.
func checkRawPackaged(pp *recipe.ResolvedPackage, srcs map[string]*source.Verified, files []deb.FileResult) error {
	byDest := map[string]deb.FileResult{}
	for _, fr := range files {
		byDest[fr.Path] = fr
	}
	for _, f := range pp.Files {
		if want := rawVerifiedSHA256(f, srcs); want != "" && byDest[f.Dest].SHA256 != want {
			return &digest.MismatchError{Subject: f.Dest + " (from " + srcs[f.Source].Source.URL + ")", Algorithm: digest.SHA256, Want: want, Got: byDest[f.Dest].SHA256}
		}
	}
	return nil
}

// writePackage writes one .deb and its provenance record into stage, the
// job's staging folder. The .deb is written into tmp, the build's private
// folder, while the archive sources it is the first to use are read (see
// members), and moved to stage only once those reads succeeded and the raw
// sources' digests are checked. Nothing reaches the output folder here: the
// whole recipe is committed at once (see commit.go). It also returns the
// record's recordBody.
func writePackage(ctx context.Context, r *recipe.Recipe, plan *recipe.Resolved, pp *recipe.ResolvedPackage, ms *members, tmp, stage string, srcs map[string]*source.Verified, opts Options) (Output, string, error) {
	p, err := assemble(r, plan, pp, ms, srcs)
	if err != nil {
		return Output{}, "", err
	}
	p.Compression, p.XZWorkers, p.Pool, p.XZMode = opts.Compression, opts.XZWorkers, opts.Pool, opts.XZMode
	if opts.Progress != nil {
		p.Progress = progressOf(pp.OutputFile, opts.Progress)
		defer opts.Progress(Progress{File: pp.OutputFile, Done: true})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ms.start(ctx, pp.Name, ms.streamable(pp.Name))
	staged := filepath.Join(tmp, pp.OutputFile)
	res, err := deb.Write(ctx, staged, p)
	if err != nil {
		cancel()
	}
	// An archive's error explains a writer's that follows from it.
	if ferr := ms.finish(); ferr != nil && (err == nil || !errors.Is(ferr, context.Canceled)) {
		os.Remove(staged)
		return Output{}, "", ferr
	}
	if err != nil {
		return Output{}, "", err
	}
	defer os.Remove(staged)
	if err := checkRawPackaged(pp, srcs, res.Files); err != nil {
		return Output{}, "", err
	}
	path := filepath.Join(stage, pp.OutputFile)
	if err := os.Rename(staged, path); err != nil {
		return Output{}, "", err
	}
	body, err := writeProvenance(ctx, path+ProvenanceSuffix, r, plan, pp, res, srcs, opts)
	if err != nil {
		return Output{}, "", err
	}
	return Output{Package: pp.Name, File: pp.OutputFile, Size: res.Size, SHA256: res.SHA256}, body, nil
}

// progressEvery paces the reports of one package.
const progressEvery = 100 * time.Millisecond

// progressOf turns deb.Package.Progress calls (one per write into data.tar)
// into a report at most every progressEvery.
func progressOf(file string, report func(Progress)) func(in, out int64) {
	var last time.Time
	return func(in, out int64) {
		if now := time.Now(); now.Sub(last) >= progressEvery {
			last = now
			report(Progress{File: file, In: in, Out: out})
		}
	}
}
