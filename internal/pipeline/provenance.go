package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"

	"path/filepath"
	"slices"
	"time"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/gitread"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/dsse"
	"github.com/updeb/updeb/pkg/provenance"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// ProvenanceSuffix is appended to a .deb's name for its provenance record.
const ProvenanceSuffix = recipe.ProvenanceSuffix

// writeProvenance writes the provenance record of one package: its sources
// with what vouched for them, the recipe, the recipe-folder files and the
// keyrings it used, in a DSSE envelope signed with Options.ProvenanceKey (or
// unsigned without one). It returns the record's recordBody, for the state.
func writeProvenance(ctx context.Context, path string, r *recipe.Recipe, plan *recipe.Resolved, pp *recipe.ResolvedPackage, res *deb.Result, srcs map[string]*source.Verified, opts Options) (string, error) {
	b := provenance.Build{
		Recipe:          plan.Recipe,
		Architecture:    pp.Architecture, // "all" for an Architecture: all package, whichever architecture's build wrote it
		DebianVersion:   plan.DebianVersion,
		Component:       plan.Component,
		Suite:           plan.Suite,
		SourceDateEpoch: plan.SourceDateEpoch,
		UpdebVersion:    opts.UpdebVersion,
		Outputs:         map[string]digest.Set{pp.OutputFile: {digest.SHA256: res.SHA256}},
	}
	used := map[string]bool{}
	for _, f := range pp.Files {
		used[f.Source] = true
	}
	keys := map[string]string{} // keyring or Sigstore public key -> role
	for _, name := range source.SortedNames(srcs) {
		vs := srcs[name]
		if !used[name] {
			continue
		}
		b.Inputs = append(b.Inputs, provenance.Input{URI: vs.Source.URL, Digests: vs.Artifact.Digests, VerifiedBy: vs.By})
		for _, a := range vs.Aux {
			role, digests := auxRole(vs, a.URL), a.Digests
			if role == logEntryRole+vs.Source.URL {
				var err error
				if digests, err = loggedEntryDigests(a); err != nil {
					return "", err
				}
			}
			b.Inputs = append(b.Inputs, provenance.Input{URI: a.URL, Digests: digests, VerifiedBy: []string{role}})
		}
		if s := vs.Source.Signature; s != nil {
			keys[s.KeyringPath] = provenance.RoleKeyring
		}
		if s := vs.Source.Sigstore; s != nil && s.PublicKeyPath != "" {
			keys[s.PublicKeyPath] = provenance.RoleSigstoreKey
		}
		if c := vs.Source.Checksums; c != nil && c.Clearsigned != nil {
			keys[c.Clearsigned.KeyringPath] = provenance.RoleKeyring
		}
	}
	for _, k := range sortedKeys(keys) {
		d, err := localSHA256(r, k)
		if err != nil {
			return "", err
		}
		b.Inputs = append(b.Inputs, localInput(r, k, keys[k], d))
	}
	// A recipe-folder file is named with the digest of the bytes the writer
	// packaged, not of a second read.
	packaged := map[string]string{}
	for _, fr := range res.Files {
		packaged[fr.Path] = fr.SHA256
	}
	seen := map[string]bool{}
	for _, f := range pp.Files {
		if f.LocalPath != "" && !seen[f.LocalPath] {
			seen[f.LocalPath] = true
			b.Inputs = append(b.Inputs, localInput(r, f.LocalPath, provenance.RoleRecipeFile, packaged[f.Dest]))
		}
	}
	for _, f := range pp.Fragments {
		data, err := r.ReadFragment(f)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		b.Inputs = append(b.Inputs, localInput(r, f.LocalPath, provenance.RoleScriptFragment, hex.EncodeToString(sum[:])))
	}
	if rec, ok := recipeInput(ctx, r, opts.Source.Logger); ok {
		b.Inputs = append(b.Inputs, rec)
	}
	st := provenance.New(b)
	data, err := seal(st, plan, opts)
	if err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	return recordBody(st)
}

// auxRole says what an unpinned input was to its source, in the record.
func auxRole(vs *source.Verified, url string) string {
	switch {
	case vs.Source.Checksums != nil && vs.Source.Checksums.URL == url:
		return "checksums-for:" + vs.Source.URL
	case slices.Contains(vs.Source.AuxURLs(), url): // OpenPGP signature, cosign .sig/.cert, Sigstore bundle
		return "signature-of:" + vs.Source.URL
	case vs.Source.Sigstore != nil:
		return logEntryRole + vs.Source.URL // the Rekor entry of its cosign signature
	}
	return "auxiliary"
}

// logEntryRole begins the role of a cosign signature's Rekor entry.
const logEntryRole = "transparency-log-entry-of:"

// loggedEntryDigests returns the digest the record gives the Rekor entry a:
// that of the entry's body as the log holds it, not of Rekor's answer, whose
// inclusion proof changes as the log grows (so that a build from a cold cache
// on another day writes the same record).
func loggedEntryDigests(a *fetch.Result) (digest.Set, error) {
	answer, err := confined.ReadFile(a.Path, maxLogEntry)
	if err != nil {
		return nil, fmt.Errorf("the Rekor entry fetched from %s: %w", a.URL, err)
	}
	sum, err := sigstore.LoggedEntrySHA256(answer)
	if err != nil {
		return nil, fmt.Errorf("the Rekor entry fetched from %s: %w", a.URL, err)
	}
	return digest.Set{digest.SHA256: sum}, nil
}

// maxLogEntry bounds a Rekor answer read again for the record (the verifier
// read it whole: 1 MiB at most).
const maxLogEntry = 1 << 20

// seal returns the statement's envelope, signed when a key is configured.
// The signature is dated by the build (see signkey.Key.DSSE), so the bytes
// are the same on every rebuild.
func seal(st *provenance.Statement, plan *recipe.Resolved, opts Options) ([]byte, error) {
	var signers []dsse.Signer
	if opts.ProvenanceKey != nil {
		now := opts.Source.Now()
		if plan.SourceDateEpoch.After(now.Add(openpgp.ClockSkew)) {
			return nil, fmt.Errorf("%w: %s: release-date %s is in the future (the clock says %s): the provenance record's signature is dated by it, and no verifier accepts a signature from the future; fix the release-date, or the clock", recipe.ErrInvalid,
				plan.Recipe, plan.SourceDateEpoch.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
		}
		s, err := opts.ProvenanceKey.DSSE(plan.SourceDateEpoch, now)
		if err != nil {
			return nil, fmt.Errorf("provenance key: %w", err)
		}
		signers = append(signers, s)
	}
	env, err := st.Envelope(signers...)
	if err != nil {
		return nil, err
	}
	return env.Marshal()
}

// localInput names a file of the project by its path relative to the
// project root, so that the record is the same wherever the project is.
func localInput(r *recipe.Recipe, path, role, sha256Hex string) provenance.Input {
	return provenance.Input{Name: projectPath(r.Root, path), Digests: digest.Set{digest.SHA256: sha256Hex},
		Annotations: map[string]string{provenance.AnnotationRole: role}}
}

func projectPath(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(path)
}

// recipeInput describes the recipe file: its path, the digest of the bytes
// the recipe was loaded from, and, in a git checkout, whether HEAD holds
// exactly these bytes (then the commit is named). Reading git never fails a
// build: a repository updeb cannot read is recorded as "unreadable".
func recipeInput(ctx context.Context, r *recipe.Recipe, log *slog.Logger) (provenance.Input, bool) {
	if r.Content == nil {
		return provenance.Input{}, false // not loaded from a file
	}
	sum := sha256.Sum256(r.Content)
	abs, err := filepath.Abs(r.Path)
	if err != nil {
		abs = r.Path
	}
	in := localInput(r, abs, provenance.RoleRecipe, hex.EncodeToString(sum[:]))
	g, err := gitread.FileAtHead(ctx, abs, r.Content)
	switch {
	case err != nil:
		log.Warn("cannot tell which git commit the recipe comes from; its provenance record says so", "recipe", r.Path, "err", err)
		in.Annotations[provenance.AnnotationGitState] = "unreadable"
	case g != nil:
		in.Annotations[provenance.AnnotationGitState] = string(g.State)
		in.Annotations[provenance.AnnotationGitPath] = g.Path
		if g.State == gitread.Clean {
			in.Annotations[provenance.AnnotationGitCommit] = g.Commit
		}
	}
	return in, true
}

// refreshProvenance brings the records of an up-to-date job in line with
// what a fresh build would write now. The state key covers everything the
// packages depend on, but not what only the records say: the recipe's bytes
// outside its plan (comments), its path and git commit, and the signing key.
// It rewrites a record only when its bytes change, and only a record whose
// statement is, but for the recipe input, the one the build wrote
// (bodies, the recordBody of each by Output.File, from the state record):
// signing a record changed since would vouch for what no build said. An
// error means the records cannot be trusted as they are, and the job is
// rebuilt.
func refreshProvenance(ctx context.Context, r *recipe.Recipe, plan *recipe.Resolved, outs []Output, bodies map[string]string, opts Options) (err error) {
	defer func() {
		if err != nil {
			opts.Source.Logger.Info("rebuilding: the provenance records cannot be brought up to date", "recipe", plan.Recipe, "arch", plan.Arch, "err", err)
		}
	}()
	rec, hasRecipe := recipeInput(ctx, r, opts.Source.Logger)
	for _, o := range outs {
		path := filepath.Join(opts.OutDir, o.File) + ProvenanceSuffix
		old, err := confined.ReadFile(path, dsse.MaxSize)
		if err != nil {
			return err
		}
		env, err := dsse.Parse(old)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		st, err := provenance.FromEnvelope(env)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(st.Subject) != 1 || st.Subject[0].Name != o.File || st.Subject[0].Digest[string(digest.SHA256)] != o.SHA256 {
			return fmt.Errorf("%s is not the record of %s", path, o.File)
		}
		if body, err := recordBody(st); err != nil || body != bodies[o.File] {
			return fmt.Errorf("%s was changed since the build wrote it", path)
		}
		if hasRecipe {
			st.SetRecipe(rec)
		}
		data, err := seal(st, plan, opts)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, old) {
			if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
				return err
			}
			opts.Source.Logger.Info("provenance record updated", "file", filepath.Base(path))
		}
	}
	return nil
}

// recordBody digests what refreshProvenance keeps of a record: its
// statement without the recipe input.
func recordBody(st *provenance.Statement) (string, error) {
	c := *st
	deps := c.Predicate.BuildDefinition.ResolvedDependencies
	c.Predicate.BuildDefinition.ResolvedDependencies = slices.DeleteFunc(slices.Clone(deps), func(d provenance.Dependency) bool {
		return d.Annotations[provenance.AnnotationRole] == provenance.RoleRecipe
	})
	data, err := c.Marshal()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// localSHA256 hashes a file of the project, opened as every read of the
// plan's local files is (confined to the project, see recipe.OpenLocal).
func localSHA256(r *recipe.Recipe, path string) (string, error) {
	f, _, err := r.OpenLocal(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := digest.NewHasher(digest.SHA256)
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return h.Sum()[digest.SHA256], nil
}
