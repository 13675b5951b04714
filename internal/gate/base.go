package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/debversion"
)

// ErrBase is wrapped when the base revision cannot be read (not a git
// repository, unknown revision): invalid input.
var ErrBase = errors.New("gate: cannot read the base revision")

// Base is the git revision recipes are compared with.
type Base struct {
	Git string // the git executable
	Rev string // any revision git understands: main, origin/main, HEAD~1, a hash
}

// git runs git in dir and returns its standard output.
func (b *Base) git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.Git, append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// load returns the recipe r as it was at the base revision, checked out with
// its recipe folder and keyrings under dir, or nil when the recipe is new.
func (b *Base) load(ctx context.Context, r *recipe.Recipe, dir string) (*recipe.Recipe, error) {
	file, err := filepath.Abs(r.Path)
	if err != nil {
		return nil, err
	}
	topOut, err := b.git(ctx, filepath.Dir(file), "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase, err)
	}
	top := strings.TrimSpace(string(topOut))
	if _, err := b.git(ctx, top, "rev-parse", "--verify", "--quiet", b.Rev+"^{commit}"); err != nil {
		return nil, fmt.Errorf("%w: %s is not a commit in %s", ErrBase, b.Rev, top)
	}
	rel := func(p string) (string, error) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			real = p
		}
		return filepath.Rel(top, real)
	}
	relFile, err := rel(file)
	if err != nil {
		return nil, err
	}
	relRoot, err := rel(r.Root)
	if err != nil {
		return nil, err
	}
	exists := func(p string) bool {
		_, err := b.git(ctx, top, "cat-file", "-e", b.Rev+":"+filepath.ToSlash(p))
		return err == nil
	}
	if !exists(relFile) {
		return nil, nil
	}
	text, err := b.git(ctx, top, "show", b.Rev+":"+filepath.ToSlash(relFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase, err)
	}
	// The old recipe's folder and keyrings, as they were at the revision.
	filesDir := strings.TrimSuffix(relFile, filepath.Ext(relFile))
	paths := []string{relFile}
	old, err := recipe.Parse(relFile, text)
	if err == nil {
		filesDir = filepath.Join(filepath.Dir(relFile), filepath.FromSlash(old.FilesRel()))
		for _, s := range old.Sources {
			if s.Signature.Keyring != "" {
				paths = append(paths, filepath.Join(relRoot, s.Signature.Keyring))
			}
			if s.Checksums != nil && s.Checksums.Clearsigned != nil {
				paths = append(paths, filepath.Join(relRoot, s.Checksums.Clearsigned.Keyring))
			}
		}
	}
	paths = append(paths, filesDir)
	var present []string
	for _, p := range sortedUnique(paths) {
		if exists(p) {
			present = append(present, filepath.ToSlash(p))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tarball := filepath.Join(dir, "base.tar")
	if _, err := b.git(ctx, top, append([]string{"archive", "--format=tar", "--output", tarball, b.Rev, "--"}, present...)...); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase, err)
	}
	if out, err := exec.CommandContext(ctx, "tar", "-xf", tarball, "-C", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("extracting the base revision: %v: %s", err, out)
	}
	return recipe.Load(filepath.Join(dir, relFile), recipe.LoadOptions{Root: filepath.Join(dir, relRoot)})
}

// compareBase adds the checks against the base revision to c.
func compareBase(ctx context.Context, r *recipe.Recipe, opts Options, rr *RecipeReport, c *checks) {
	base := opts.Base
	old, err := base.load(ctx, r, filepath.Join(opts.TempDir, "base", r.Name))
	switch {
	case errors.Is(err, ErrBase):
		c.fail("base", err, "%v", err)
		return
	case err != nil:
		c.fail("base", fmt.Errorf("%w: %w", ErrBase, err), "the recipe at %s does not load: %v", base.Rev, err)
		return
	case old == nil:
		c.add("version", Pass, "new recipe (not at %s)", base.Rev)
		return
	}
	d, err := diffRecipes(r, old, opts.Build.ResolveOptions)
	if err != nil {
		c.fail("base", fmt.Errorf("%w: %w", ErrBase, err), "%v", err)
		return
	}
	rr.Base = d.oldVersion
	st, detail := versionCheck(d, base.Rev)
	c.add("version", st, "%s", detail)
	if len(d.trust) > 0 {
		c.add("trust", Warn, "REVIEW: %s", strings.Join(d.trust, "; "))
	} else {
		c.add("trust", Pass, "keyrings and signer lists unchanged since %s", base.Rev)
	}
	rr.Changes = d.changes
}

// recipeDiff is what changed between a recipe and its base version, from
// their plans for every architecture either has.
type recipeDiff struct {
	newVersion, oldVersion string   // Debian versions ("" when no architecture plans)
	changed                bool     // the packages change: plans or the local files they read differ
	changes                []string // per package: added, removed, files and control fields (sorted)
	trust                  []string // keyring and signer changes (sorted)
}

// diffRecipes compares the plans of r and old, architecture by architecture.
// An architecture only one of them plans is added or removed.
func diffRecipes(r, old *recipe.Recipe, po recipe.ResolveOptions) (recipeDiff, error) {
	var d recipeDiff
	for _, a := range sortedUnique(append(r.ArchNames(), old.ArchNames()...)) {
		np, nerr := planFor(r, a, po)
		op, oerr := planFor(old, a, po)
		switch {
		case nerr != nil && oerr != nil:
			continue
		case oerr != nil:
			d.changes = append(d.changes, "architecture "+a+" added")
			d.changed, d.newVersion = true, np.DebianVersion
			continue
		case nerr != nil:
			d.changes = append(d.changes, "architecture "+a+" removed")
			d.changed, d.oldVersion = true, op.DebianVersion
			continue
		}
		d.newVersion, d.oldVersion = np.DebianVersion, op.DebianVersion
		same, err := samePlan(np, op, r.Root, old.Root)
		if err != nil {
			return d, err
		}
		d.changed = d.changed || !same
		d.changes = append(d.changes, diffPackages(a, np, op)...)
		d.trust = append(d.trust, diffTrust(np, op, r.Root, old.Root)...)
	}
	d.changes, d.trust = sortedUnique(d.changes), sortedUnique(d.trust)
	return d, nil
}

// versionCheck is the version rule: when the packages change, the Debian
// version must increase (dpkg's ordering); unchanged packages may keep it.
func versionCheck(d recipeDiff, rev string) (Status, string) {
	switch c, err := debversion.CompareStrings(d.newVersion, d.oldVersion); {
	case err != nil:
		return Fail, err.Error()
	case !d.changed:
		return Pass, fmt.Sprintf("unchanged since %s (%s)", rev, d.newVersion)
	case c <= 0:
		return Fail, fmt.Sprintf("the packages change but the Debian version %s does not increase over %s at %s: raise version, revision or epoch", d.newVersion, d.oldVersion, rev)
	default:
		return Pass, fmt.Sprintf("%s -> %s", d.oldVersion, d.newVersion)
	}
}

func planFor(r *recipe.Recipe, arch string, po recipe.ResolveOptions) (*recipe.Resolved, error) {
	if !slices.Contains(r.ArchNames(), arch) {
		return nil, fmt.Errorf("no architecture %s", arch)
	}
	return r.Resolve(arch, po)
}

// samePlan compares two plans whose recipes live under different roots:
// paths are compared relative to their roots and the files they name by
// content.
func samePlan(a, b *recipe.Resolved, rootA, rootB string) (bool, error) {
	ja, err := json.Marshal(a)
	if err != nil {
		return false, err
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return false, err
	}
	if !bytes.Equal(bytes.ReplaceAll(ja, []byte(rootA), nil), bytes.ReplaceAll(jb, []byte(rootB), nil)) {
		return false, nil
	}
	for _, f := range a.LocalFiles() {
		ca, errA := confined.ReadFile(f, maxCompared)
		cb, errB := confined.ReadFile(filepath.Join(rootB, strings.TrimPrefix(f, rootA)), maxCompared)
		if errA != nil || errB != nil || !bytes.Equal(ca, cb) {
			return false, nil
		}
	}
	return true, nil
}

// diffTrust lists keyring and signer changes: a reviewer must see them.
func diffTrust(np, op *recipe.Resolved, newRoot, oldRoot string) []string {
	type anchor struct {
		keyring string
		signers []string
	}
	anchors := func(p *recipe.Resolved, root string) map[string]anchor {
		m := map[string]anchor{}
		for _, s := range p.Sources {
			if s.Signature != nil {
				m["source "+s.Name+" signature"] = anchor{strings.TrimPrefix(s.Signature.KeyringPath, root+"/"), s.Signature.Signers}
			}
			if s.Sigstore != nil { // the signer is the anchor: a change is for review, like a keyring's
				who := "Sigstore " + s.Sigstore.Signer()
				if s.Sigstore.PublicKeyPath != "" { // the key itself, so that a changed file is seen
					fpr, err := trust.KeyFingerprint(s.Sigstore)
					if err != nil {
						fpr = "unreadable"
					}
					who += " (" + fpr + ")"
				}
				m["source "+s.Name+" signature"] = anchor{who, nil}
			}
			if s.Checksums != nil && s.Checksums.Clearsigned != nil {
				m["source "+s.Name+" checksum file"] = anchor{strings.TrimPrefix(s.Checksums.Clearsigned.KeyringPath, root+"/"), s.Checksums.Clearsigned.Signers}
			}
		}
		return m
	}
	na, oa := anchors(np, newRoot), anchors(op, oldRoot)
	name := func(k string) string {
		if strings.HasPrefix(k, "Sigstore ") {
			return k
		}
		return "keyring " + k
	}
	var out []string
	for what, n := range na {
		o, ok := oa[what]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: now verified with %s (new)", what, name(n.keyring)))
			continue
		case o.keyring != n.keyring:
			out = append(out, fmt.Sprintf("%s: %s replaces %s", what, name(n.keyring), name(o.keyring)))
		case strings.HasPrefix(n.keyring, "Sigstore "):
		default:
			ca, _ := confined.ReadFile(filepath.Join(newRoot, n.keyring), maxCompared)
			cb, _ := confined.ReadFile(filepath.Join(oldRoot, o.keyring), maxCompared)
			if !bytes.Equal(ca, cb) {
				out = append(out, fmt.Sprintf("keyring %s changed: check its keys with 'updeb keys list %s'", n.keyring, n.keyring))
			}
		}
		if !slices.Equal(n.signers, o.signers) {
			out = append(out, fmt.Sprintf("%s: signers %v, were %v", what, n.signers, o.signers))
		}
	}
	for what, o := range oa {
		if _, ok := na[what]; !ok {
			out = append(out, fmt.Sprintf("%s: no longer verified (%s dropped)", what, name(o.keyring)))
		}
	}
	return out
}

// diffPackages lists packages added or removed and, per package, files added
// or removed and control fields changed (Version aside: the version check
// covers it).
func diffPackages(arch string, np, op *recipe.Resolved) []string {
	index := func(p *recipe.Resolved) map[string]*recipe.ResolvedPackage {
		m := map[string]*recipe.ResolvedPackage{}
		for i := range p.Packages {
			m[p.Packages[i].Name] = &p.Packages[i]
		}
		return m
	}
	ni, oi := index(np), index(op)
	var out []string
	for name, n := range ni {
		o, ok := oi[name]
		if !ok {
			out = append(out, fmt.Sprintf("%s [%s]: new package", name, arch))
			continue
		}
		nf, of := fileList(n), fileList(o)
		for f := range nf {
			if !of[f] {
				out = append(out, fmt.Sprintf("%s [%s]: + %s", name, arch, f))
			}
		}
		for f := range of {
			if !nf[f] {
				out = append(out, fmt.Sprintf("%s [%s]: - %s", name, arch, f))
			}
		}
		nc, oc := n.Control(0), o.Control(0)
		fields := map[string]bool{}
		for _, f := range append(nc.Fields, oc.Fields...) {
			fields[f.Name] = true
		}
		for f := range fields {
			if f == "Version" || f == "Installed-Size" {
				continue
			}
			nv, ov := nc.Value(f), oc.Value(f)
			if nv != ov {
				out = append(out, fmt.Sprintf("%s [%s]: %s: %q -> %q", name, arch, f, ov, nv))
			}
		}
	}
	for name := range oi {
		if _, ok := ni[name]; !ok {
			out = append(out, fmt.Sprintf("%s [%s]: package removed", name, arch))
		}
	}
	return out
}

// fileList is every path a package installs, with its mode or link target.
func fileList(p *recipe.ResolvedPackage) map[string]bool {
	m := map[string]bool{}
	for _, f := range p.Files {
		m[fmt.Sprintf("%s (%04o)", f.Dest, f.Mode)] = true
	}
	for _, d := range p.Directories {
		m[d+"/"] = true
	}
	for _, l := range p.Symlinks {
		m[l.Dest+" -> "+l.Target] = true
	}
	for _, g := range p.GeneratedFiles {
		m[g.Dest] = true
	}
	return m
}

// maxCompared bounds a recipe-folder file or keyring the gate compares
// between two trees (read whole; packaged files are megabytes at most).
const maxCompared = 256 << 20
