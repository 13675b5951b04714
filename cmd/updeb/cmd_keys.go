package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/dirglob"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/plural"
	"github.com/updeb/updeb/pkg/termtext"
	"github.com/updeb/updeb/pkg/verify/openpgp"
)

// newKeysCmd is the parent of the key commands; each subcommand is one line in
// its AddCommand list.
func newKeysCmd(g *globalOptions) *cobra.Command {
	keys := &cobra.Command{
		Use:   "keys",
		Short: "Inspect OpenPGP keyrings (keys/*.asc) and make repository signing keys",
		Example: `  updeb keys list                      # every keyring in keys/
  updeb keys list --json keys/helm.asc
  updeb keys generate --name "Example apt repository" --email apt@example.org --out /etc/updeb/repo-signing`,
	}
	keys.AddCommand(
		newKeysListCmd(g),
		newKeysGenerateCmd(g),
	)
	return keys
}

type keysListOptions struct {
	files []string
}

func newKeysListCmd(g *globalOptions) *cobra.Command {
	o := &keysListOptions{}
	return jsonOutput(&cobra.Command{
		Use:   "list [FILE...]",
		Short: "Show each key and subkey of keyrings, and the Sigstore signers the recipes accept",
		Long: `Show each primary key and subkey of the given keyring files (default: keys/*.asc in the
working folder and the keyrings the --recipes folder's recipes name): fingerprint, algorithm and size, user IDs, creation, expiry, revocation
and capabilities, with warnings for weak, expired or revoked keys, and which recipes'
sources use each keyring. A FILE may also be a signing key (repo: key:, --key): its public
part is shown, as a repository's archive-keyring.gpg holds it, with a warning that says
why publish refuses it when it does. Without FILE it also lists, for every recipe source signed
with Sigstore (in the --recipes folder), the identity and OIDC issuer it accepts (or,
for a key-signed bundle, the pinned key file and its SHA256 fingerprint) and where the
signature comes from.`,
		Example: `  updeb keys list
  updeb keys list keys/helm.asc
  updeb keys list /srv/apt/archive-keyring.gpg /etc/updeb/repo-signing.secret.asc
  updeb keys list --json keys/runc.asc`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return runKeysList(cmd, g, o, time.Now())
		},
	}, 1)
}

// keyringListing is one file's keys, or one recipe source's Sigstore
// signer, as printed by keys list --json.
type keyringListing struct {
	File     string                   `json:"file,omitempty"`
	Keys     []openpgp.PrimaryKeyInfo `json:"keys,omitempty"`
	UsedBy   []string                 `json:"used_by,omitempty"`  // "RECIPE SOURCE (signature|checksum file)"
	Unusable string                   `json:"unusable,omitempty"` // a signing key file: why publish refuses to sign with it
	Sigstore *sigstoreSigner          `json:"sigstore,omitempty"`
}

// sigstoreSigner is who a recipe source accepts as its Sigstore signer.
type sigstoreSigner struct {
	Recipe         string `json:"recipe"`
	Source         string `json:"source"`
	Form           string `json:"form"`     // cosign, bundle, github-attestations
	Material       string `json:"material"` // the .sig URL, bundle URL or OWNER/REPO (templates unrendered)
	Identity       string `json:"identity,omitempty"`
	IdentityRegexp string `json:"identity_regexp,omitempty"`
	Issuer         string `json:"issuer,omitempty"`
	// SourceRepository is the repository whose CI run must have signed
	// (the certificate's Source Repository URI).
	SourceRepository string `json:"source_repository,omitempty"`
	// PublicKey is the pinned key file of a key-signed bundle (relative to
	// the recipe's folder) and KeyFingerprint its SHA256:base64 name, or
	// why it could not be read.
	PublicKey      string `json:"public_key,omitempty"`
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
	// PredicateTypes are the predicate types an attestation counts by,
	// where the recipe names them in place of SLSA provenance.
	PredicateTypes []string `json:"predicate_types,omitempty"`
}

func runKeysList(cmd *cobra.Command, g *globalOptions, o *keysListOptions, now time.Time) error {
	w := cmd.OutOrStdout()
	files := o.files
	var recipes []*recipe.Recipe
	if len(files) == 0 {
		files, _ = filepath.Glob(filepath.Join("keys", "*.asc"))
		recipes = recipesForKeys(g)
		files = append(files, recipeKeyrings(recipes, files)...)
		if len(files) == 0 && len(recipes) == 0 {
			return usageErrorf("no keyring given, no keys/*.asc in the working folder and no recipes in %s", g.recipesDir)
		}
	}
	if len(o.files) > 0 {
		recipes = recipesForKeys(g)
	}
	var out []keyringListing
	for _, f := range files {
		kr, unusable, err := loadListedKeys(cmd.Context(), f)
		if err != nil {
			return err
		}
		out = append(out, keyringListing{File: f, Keys: kr.List(now), UsedBy: keyringUsers(recipes, f), Unusable: unusable})
	}
	if len(o.files) == 0 {
		out = append(out, sigstoreSigners(recipes)...)
	}
	if g.json {
		return printJSON(w, cmd, struct {
			Keyrings []keyringListing `json:"keyrings"`
		}{out})
	}
	// A file name (keys/*.asc of a checkout) and what a recipe says of its
	// signer are others' text: escaped, they cannot drive the terminal.
	esc := termtext.Escape
	signersShown := false
	for i, l := range out {
		if l.Sigstore != nil {
			if !signersShown {
				if i > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "Sigstore signers the recipes in %s accept:\n", g.recipesDir)
				signersShown = true
			}
			ss := l.Sigstore
			who := "identity " + ss.Identity + ", issuer " + ss.Issuer
			switch {
			case ss.PublicKey != "":
				who = "public key " + ss.PublicKey + " (" + ss.KeyFingerprint + ")"
			case ss.IdentityRegexp != "":
				who = "identity matching " + ss.IdentityRegexp + ", issuer " + ss.Issuer
			}
			if ss.SourceRepository != "" {
				who += ", source repository " + ss.SourceRepository
			}
			if len(ss.PredicateTypes) > 0 {
				who += ", attestations of predicate type " + strings.Join(ss.PredicateTypes, ", ")
			}
			fmt.Fprintf(w, "  %s %s: %s\n      %s %s\n", ss.Recipe, ss.Source, esc(who), ss.Form, esc(ss.Material))
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s\n", esc(l.File), plural.Count(len(l.Keys), "primary key", "primary keys"))
		if len(l.UsedBy) > 0 {
			fmt.Fprintf(w, "  used by %s\n", strings.Join(l.UsedBy, ", "))
		}
		if l.Unusable != "" {
			fmt.Fprintf(w, "  warning: publish refuses to sign with it: %s\n", esc(l.Unusable))
		}
		for _, k := range l.Keys {
			printKey(w, "pub", k.KeyInfo)
			for _, u := range k.UserIDs {
				fmt.Fprintf(w, "      uid %s\n", u)
			}
			for _, s := range k.Subkeys {
				printKey(w, "  sub", s)
			}
		}
	}
	return nil
}

// loadListedKeys loads a file keys list names: a keyring or, in its place,
// a signing key (the secret key the repository or the provenance records
// are signed with: repo: key:, --key), whose public part is listed, as
// the next write exports it to archive-keyring.gpg: also when updeb would
// not sign with it (too weak, passphrase-protected, several keys, one
// apt's gpgv cannot check), which unusable says: why publish refuses it.
func loadListedKeys(ctx context.Context, path string) (kr *openpgp.Keyring, unusable string, err error) {
	kr, err = loadKeyring(ctx, path)
	if !errors.Is(err, openpgp.ErrKeyring) {
		return kr, "", err
	}
	data, rerr := confined.ReadFile(path, signkey.MaxFileSize)
	if rerr != nil {
		return nil, "", err
	}
	public, perr := repo.SecretKeysPublic(bytes.NewReader(data))
	if perr != nil {
		return nil, "", err
	}
	if _, serr := repo.ReadSigner(bytes.NewReader(data), path); serr != nil {
		unusable = serr.Error()
	}
	kr, err = openpgp.ParseKeyring(bytes.NewReader(public), path)
	return kr, unusable, err
}

// recipesForKeys loads the recipes of the --recipes folder for keys list; one
// that does not load is left out with a warning (updeb lint says why).
func recipesForKeys(g *globalOptions) []*recipe.Recipe {
	paths, _ := dirglob.Glob(g.recipesDir, "*.yaml")
	sort.Strings(paths)
	var out []*recipe.Recipe
	for _, p := range paths {
		r, err := recipe.Load(p, recipe.LoadOptions{AllowUnpinned: true})
		if err != nil {
			g.warnf("%s left out: it does not load ('updeb lint %s' says why)", p, p)
			continue
		}
		out = append(out, r)
	}
	return out
}

// recipeKeyrings are the keyring files the recipes name (a signature's, a
// clearsigned checksum file's) that listed does not hold already, sorted:
// recipes read with --recipes from another project keep theirs in that
// project's keys/, not in the working folder's. A keyring the recipe names
// that is not there is left to lint to report.
func recipeKeyrings(recipes []*recipe.Recipe, listed []string) []string {
	seen := map[string]bool{}
	for _, f := range listed {
		if abs, err := filepath.Abs(f); err == nil {
			seen[abs] = true
		}
	}
	wd, _ := os.Getwd()
	var out []string
	for _, r := range recipes {
		for _, s := range r.Sources {
			names := []string{s.Signature.Keyring}
			if c := s.Checksums; c != nil && c.Clearsigned != nil {
				names = append(names, c.Clearsigned.Keyring)
			}
			for _, k := range names {
				p := filepath.Join(r.Root, k)
				if fi, err := os.Stat(p); k == "" || seen[p] || err != nil || !fi.Mode().IsRegular() {
					continue
				}
				seen[p] = true
				if rel, err := filepath.Rel(wd, p); err == nil && filepath.IsLocal(rel) {
					p = rel // as keys/*.asc of the working folder are shown
				}
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// keyringUsers names the recipe sources whose signature or checksum file is
// verified with keyring file.
func keyringUsers(recipes []*recipe.Recipe, file string) []string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range recipes {
		for _, s := range r.Sources {
			if s.Signature.Keyring != "" && filepath.Join(r.Root, s.Signature.Keyring) == abs {
				out = append(out, r.Name+" "+s.Name+" (signature)")
			}
			if c := s.Checksums; c != nil && c.Clearsigned != nil && filepath.Join(r.Root, c.Clearsigned.Keyring) == abs {
				out = append(out, r.Name+" "+s.Name+" (checksum file)")
			}
		}
	}
	return out
}

// sigstoreSigners lists who each Sigstore-signed recipe source accepts.
func sigstoreSigners(recipes []*recipe.Recipe) []keyringListing {
	var out []keyringListing
	for _, r := range recipes {
		for _, s := range r.Sources {
			ss := s.Signature.Sigstore
			if ss == nil {
				continue
			}
			signer := &sigstoreSigner{Recipe: r.Name, Source: s.Name, Identity: ss.Identity, IdentityRegexp: ss.IdentityRegexp, Issuer: ss.Issuer, SourceRepository: ss.SourceRepository,
				PredicateTypes: ss.PredicateTypes}
			if ss.PublicKey != "" {
				signer.PublicKey = ss.PublicKey
				fpr, err := trust.KeyFingerprint(&recipe.ResolvedSigstore{PublicKeyPath: filepath.Join(r.FilesDir, filepath.FromSlash(ss.PublicKey))})
				if err != nil {
					fpr = "unusable: " + err.Error()
				}
				signer.KeyFingerprint = fpr
			}
			switch {
			case ss.SigURL != "":
				signer.Form, signer.Material = "cosign", ss.SigURL+" (+ .cert)"
			case ss.BundleURL != "":
				signer.Form, signer.Material = "bundle", ss.BundleURL
			default:
				signer.Form, signer.Material = "github-attestations", ss.GitHubAttestations
			}
			out = append(out, keyringListing{Sigstore: signer})
		}
	}
	return out
}

func printKey(w io.Writer, kind string, k openpgp.KeyInfo) {
	line := fmt.Sprintf("%s %-9s %s created %s", kind, k.Algorithm, k.Fingerprint, k.Created.Format(time.DateOnly))
	if k.Expires != nil {
		line += " expires " + k.Expires.Format(time.DateOnly)
	}
	if k.Revoked != nil {
		line += " REVOKED " + k.Revoked.Format(time.DateOnly)
	}
	fmt.Fprintf(w, "%s [%s]\n", line, strings.Join(k.Capabilities, ","))
	for _, warn := range k.Warnings {
		fmt.Fprintf(w, "      warning: %s\n", warn)
	}
}
