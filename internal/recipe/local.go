package recipe

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// OpenLocal opens a file the resolved recipe reads besides the sources (see
// Resolved.LocalFiles), confined to where it belongs: a file of the recipe's
// folder (ResolvedFile.LocalPath) inside that folder, the folder itself inside
// the one that holds the recipe file; a keyring inside the project root. A
// symlink that leads out, or anything but a regular file (a device, a FIFO),
// is refused with an error wrapping confined.ErrRefused. Lint checks every
// such file this way, and the build reads them only through it, so what lint
// passed is what the build packages.
func (r *Recipe) OpenLocal(abs string) (*os.File, fs.FileInfo, error) {
	if rel, ok := below(r.FilesDir, abs); ok && r.dir != "" {
		return confined.Open(r.dir, r.filesRel, rel)
	}
	if rel, ok := below(r.Root, abs); ok {
		return confined.Open(r.Root, rel)
	}
	return nil, nil, fmt.Errorf("%s: %w: neither in the recipe's folder %s nor in the project %s", abs, confined.ErrRefused, r.FilesDir, r.Root)
}

// below returns p relative to dir, slash-separated, when p is inside dir
// (which may be the root folder: a project mounted at / in a container).
func below(dir, p string) (string, bool) {
	if dir == "" {
		return "", false
	}
	rel, ok := strings.CutPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
	if !ok || rel == "" {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// checkLocal is Load's file check: OpenLocal, with a message for a file that
// does not exist.
func (r *Recipe) checkLocal(abs string) error {
	f, _, err := r.OpenLocal(abs)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("%s does not exist", abs)
		}
		return err
	}
	return f.Close()
}

// maxPublicKey bounds what lint reads of a pinned Sigstore public key: a PEM
// key is well under a kilobyte, an RSA-16384 one under 3.
const maxPublicKey = 64 << 10

// checkPublicKey is Load's check of a pinned Sigstore key: read through
// OpenLocal, it must be one PEM public key sigstore.Policy accepts.
func (r *Recipe) checkPublicKey(abs string) error {
	f, _, err := r.OpenLocal(abs)
	if err != nil {
		return err
	}
	defer f.Close()
	key, err := io.ReadAll(io.LimitReader(f, maxPublicKey+1))
	if err != nil {
		return err
	}
	if len(key) > maxPublicKey {
		return fmt.Errorf("%s is larger than %d KiB: not a PEM public key", abs, maxPublicKey>>10)
	}
	if _, err := sigstore.KeyFingerprint(key); err != nil {
		// "PublicKey is not a PEM public key: ...", "PublicKey: ...": name the file instead.
		return fmt.Errorf("%s%s", abs, strings.TrimPrefix(strings.TrimPrefix(err.Error(), sigstore.ErrPolicy.Error()+": "), "PublicKey"))
	}
	return nil
}

// MaintainerScripts returns the maintainer scripts package pp of this
// recipe carries: updeb's generated parts merged with the recipe's
// fragments (ResolvedPackage.MergeScripts), each fragment read through
// OpenLocal, at most MaxFragment bytes.
func (r *Recipe) MaintainerScripts(pp *ResolvedPackage) ([]Script, error) {
	content := map[string][]byte{}
	for _, f := range pp.Fragments {
		data, err := r.ReadFragment(f)
		if err != nil {
			return nil, err
		}
		content[f.Script] = data
	}
	return pp.MergeScripts(content)
}

// ReadFragment reads a maintainer-script fragment through OpenLocal, at
// most MaxFragment+1 bytes (MergeScripts refuses more).
func (r *Recipe) ReadFragment(f Fragment) ([]byte, error) {
	fh, _, err := r.OpenLocal(f.LocalPath)
	if err != nil {
		return nil, fmt.Errorf("scripts.%s: %w", f.Script, err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFragment+1))
	if err != nil {
		return nil, fmt.Errorf("scripts.%s: %s: %w", f.Script, f.LocalPath, err)
	}
	return data, nil
}

// Fragments returns the maintainer-script fragments of every package of
// the recipe, resolved to their files (once each), for updeb lint's shell
// checks.
func (r *Recipe) Fragments() []Fragment {
	var out []Fragment
	seen := map[string]bool{}
	for _, p := range r.Packages {
		for _, name := range scriptNames {
			rel, ok := p.Scripts[name]
			if !ok {
				continue
			}
			f := Fragment{Script: name, File: rel, LocalPath: filepath.Join(r.FilesDir, filepath.FromSlash(rel))}
			if !seen[f.Script+"\x00"+f.LocalPath] {
				seen[f.Script+"\x00"+f.LocalPath] = true
				out = append(out, f)
			}
		}
	}
	return out
}
