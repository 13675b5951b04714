package build

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/recipe"
)

// member is a file taken from a source: either the verified cache file itself
// (raw sources) or a spool file holding one archive member.
type member struct {
	path string
	size int64
}

// memberKey names a file inside a source; path is "" for raw sources.
type memberKey struct{ source, path string }

// selectMembers reads each archive source once, in one pass, taking only the
// files the packages name. Archive members are spooled into dir (private to
// this build, removed afterwards) because the .deb wants its files in dpkg's
// order, not the archive's; raw sources are used in place.
func selectMembers(ctx context.Context, plan *recipe.Plan, srcs map[string]*verifiedSource, dir string, lim archive.Limits) (map[memberKey]member, error) {
	wanted := map[string]map[string]bool{}
	for _, p := range plan.Packages {
		for _, f := range p.Files {
			if f.Source == "" {
				continue
			}
			if wanted[f.Source] == nil {
				wanted[f.Source] = map[string]bool{}
			}
			wanted[f.Source][f.Path] = true
		}
	}
	out := map[memberKey]member{}
	for _, name := range sortedKeys(wanted) {
		vs := srcs[name]
		if vs == nil {
			return nil, fmt.Errorf("no source named %q", name)
		}
		kind := archive.Kind(vs.plan.Kind)
		if kind == archive.Raw {
			out[memberKey{name, ""}] = member{path: vs.fetched.Path, size: vs.fetched.Size}
			continue
		}
		want := sortedKeys(wanted[name])
		n := 0
		err := archive.Select(ctx, vs.fetched.Path, kind, want, lim, func(m archive.Member, r io.Reader) error {
			n++
			p := filepath.Join(dir, fmt.Sprintf("%s-%d", name, n))
			f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			written, err := io.Copy(f, r)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if written != m.Size {
				return fmt.Errorf("%s: %s: read %d bytes, header says %d", vs.plan.URL, m.Name, written, m.Size)
			}
			out[memberKey{name, m.Name}] = member{path: p, size: m.Size}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("source %s (%s): %w", name, vs.plan.URL, err)
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
