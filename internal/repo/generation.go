package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/atomicfile"
)

// architectures returns the configured architectures plus those of every
// architecture-specific package and of the live Release (never fewer).
func (r *Repo) architectures(st *suiteState) ([]string, error) {
	set := map[string]bool{}
	for _, a := range r.opts.Release.Architectures {
		if !archPattern.MatchString(a) || a == "all" {
			return nil, fmt.Errorf("%w: configured architecture %q", ErrInvalid, a)
		}
		set[a] = true
	}
	if st.release != nil {
		for _, a := range st.release.archs {
			set[a] = true
		}
	}
	for _, c := range st.comps {
		for k := range c {
			if k.arch != "all" {
				set[k.arch] = true
			}
		}
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("%w: suite %s has only Architecture: all packages and no configured architecture: say which binary-<arch> indexes to write", ErrInvalid, st.suite)
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out, nil
}

// nextDate is the Release Date of a new generation: now, but always at least
// one second after the live generation's. apt and HTTP caches compare
// Last-Modified (whole seconds) with If-Modified-Since, so two publishes in the
// same second must not look alike, or a client that fetched the first keeps it.
func nextDate(now time.Time, live *parsedRelease) time.Time {
	now = now.UTC().Truncate(time.Second)
	if live != nil && !live.date.IsZero() && !now.After(live.date) {
		return live.date.Add(time.Second)
	}
	return now
}

// writeGeneration writes st as the suite's next generation and makes it live.
// See the package documentation for the order of operations and why.
func (r *Repo) writeGeneration(ctx context.Context, st *suiteState) (int, error) {
	archs, err := r.architectures(st)
	if err != nil {
		return 0, err
	}
	comps := make([]string, 0, len(st.comps))
	for c := range st.comps {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	var files []indexFile
	for _, c := range comps {
		for _, a := range archs {
			fs, err := compressed(c+"/binary-"+a, st.comps[c].packagesFor(a))
			if err != nil {
				return 0, err
			}
			files = append(files, fs...)
		}
	}
	date := nextDate(r.opts.Now(), st.release)
	release := releaseFile(r.opts.Release, st.suite, date, archs, comps, files)
	inRelease, err := r.opts.Signer.ClearSign(release, date)
	if err != nil {
		return 0, err
	}
	detached, err := r.opts.Signer.DetachSign(release, date)
	if err != nil {
		return 0, err
	}
	if err := r.writeKeyring(); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}

	next := st.generation + 1
	parent := filepath.Dir(r.genDir(st.suite, next))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return 0, err
	}
	staging, err := os.MkdirTemp(parent, ".staging-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(staging) // a no-op once renamed
	if err := os.Chmod(staging, 0o755); err != nil {
		return 0, err
	}
	all := append(files,
		indexFile{"Release", release}, indexFile{"InRelease", inRelease}, indexFile{"Release.gpg", detached})
	dirs := map[string]bool{staging: true}
	for _, f := range all {
		name := filepath.Join(staging, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return 0, err
		}
		if err := writeFileSync(name, f.data); err != nil {
			return 0, err
		}
		// The files' mtime is the Release Date, so that a web server's
		// Last-Modified moves forward with every generation (see nextDate).
		if err := os.Chtimes(name, date, date); err != nil {
			return 0, err
		}
		dirs[filepath.Dir(name)] = true
	}
	// by-hash: this generation's indexes, then the live generation's, so a
	// client holding the previous InRelease finds what it lists.
	for _, f := range files {
		for _, h := range hashAlgorithms {
			dir := filepath.Join(staging, filepath.FromSlash(path.Dir(f.path)), "by-hash", h.field)
			if err := linkOrCopy(filepath.Join(staging, filepath.FromSlash(f.path)), filepath.Join(dir, h.sum(f.data))); err != nil {
				return 0, err
			}
			dirs[dir] = true
		}
	}
	if st.release != nil {
		for _, e := range st.release.files {
			if strings.Contains(e.path, "..") || len(e.hex) < 64 || strings.ContainsAny(e.hex, "/.") {
				continue
			}
			rel := filepath.Join(filepath.FromSlash(path.Dir(e.path)), "by-hash", e.algorithm, e.hex)
			src := filepath.Join(st.dir, rel)
			if _, err := os.Stat(src); err != nil {
				continue // not served by the previous generation either
			}
			if err := linkOrCopy(src, filepath.Join(staging, rel)); err != nil {
				return 0, err
			}
			dirs[filepath.Dir(filepath.Join(staging, rel))] = true
		}
	}
	if err := syncDirs(dirs); err != nil {
		return 0, err
	}
	final := r.genDir(st.suite, next)
	// A leftover next generation can only come from a publish killed before its
	// switch: it was never live, so it is replaced.
	if err := os.RemoveAll(final); err != nil {
		return 0, err
	}
	if err := os.Rename(staging, final); err != nil {
		return 0, err
	}
	if err := atomicfile.SyncDir(parent); err != nil {
		return 0, err
	}
	r.hook("staged")

	tmpLink := filepath.Join(r.distsDir(), "."+st.suite+".link")
	if err := os.Remove(tmpLink); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	if err := os.Symlink(path.Join(".gen", st.suite, strconv.Itoa(next)), tmpLink); err != nil {
		return 0, err
	}
	if err := os.Rename(tmpLink, filepath.Join(r.distsDir(), st.suite)); err != nil {
		return 0, err
	}
	if err := atomicfile.SyncDir(r.distsDir()); err != nil {
		return 0, err
	}
	r.hook("switched")
	r.cleanGenerations(st.suite, next)
	r.opts.Logger.Info("published", "suite", st.suite, "generation", next, "components", comps, "architectures", archs)
	return next, nil
}

// cleanGenerations removes every generation of suite but live and live-1, and
// staging directories of killed publishes. Failures are only logged: the
// repository is already consistent.
func (r *Repo) cleanGenerations(suite string, live int) {
	parent := filepath.Dir(r.genDir(suite, live))
	des, err := os.ReadDir(parent)
	if err != nil {
		r.opts.Logger.Warn("cannot list old generations", "dir", parent, "err", err)
		return
	}
	for _, de := range des {
		n, err := strconv.Atoi(de.Name())
		if err == nil && (n == live || n == live-1) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(parent, de.Name())); err != nil {
			r.opts.Logger.Warn("cannot remove old generation", "dir", de.Name(), "err", err)
		}
	}
}

// writeKeyring writes the signer's public key at the repository root, binary
// (archive-keyring.gpg, for signed-by) and armored (archive-keyring.asc).
func (r *Repo) writeKeyring() error {
	bin, asc, err := r.opts.Signer.PublicKey()
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"archive-keyring.gpg": bin, "archive-keyring.asc": asc} {
		// 0644: a new client fetches the key from the same web server.
		if err := atomicfile.WriteFile(filepath.Join(r.root, name), data, 0o644); err != nil {
			return err
		}
	}
	return atomicfile.SyncDir(r.root)
}

// linkOrCopy hard-links src to dst (creating dst's directory), copying when
// the file system refuses links. An existing dst is the same content by name.
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	err := os.Link(src, dst)
	if err == nil || errors.Is(err, os.ErrExist) {
		return nil
	}
	data, rerr := os.ReadFile(src)
	if rerr != nil {
		return rerr
	}
	return writeFileSync(dst, data)
}

func syncDirs(dirs map[string]bool) error {
	for d := range dirs {
		if err := atomicfile.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}
