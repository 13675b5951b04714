package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/dsse"
	"github.com/updeb/updeb/pkg/provenance"
	"github.com/updeb/updeb/pkg/strictjson"
	"github.com/updeb/updeb/pkg/termtext"
	"github.com/updeb/updeb/pkg/verify/openpgp"
)

type verifyProvenanceOptions struct {
	key        string
	keyring    string
	signers    []string
	provenance string
}

func newVerifyProvenanceCmd(g *globalOptions) *cobra.Command {
	o := &verifyProvenanceOptions{}
	cmd := &cobra.Command{
		Use:   "verify-provenance DEB (--key FILE | --keyring FILE) [--signer FPR]... [--provenance FILE]",
		Short: "Check a .deb against its signed provenance record and show where its bytes came from",
		Long: `Check the provenance record 'updeb build' wrote beside a package (DEB.intoto.json, or
--provenance FILE): a DSSE envelope whose signature must be an OpenPGP signature over its
PAE bytes by the public key of --key (one key, such as the repository's
archive-keyring.asc) or by a key of --keyring (on the --signer allow-list when given),
under the policy of 'updeb verify-signature'; and a record whose subject is this
package: its file name and its sha256 (apt saves a package with an epoch as
NAME_EPOCH%3aVERSION_ARCH.deb: that is the record's NAME_VERSION_ARCH.deb). Then print the recipe, every input with its
digests and what vouched for it, and the signer.

Exit codes: 0 good, 1 refused (unsigned record, as is the bare statement of updeb before
2026-11-24, another key, a record or signature changed after signing, a record of other
bytes or another package; the reason is printed), 2 usage or unreadable input (a
malformed record, a missing file).`,
		Example: `  updeb verify-provenance --key /etc/updeb/repo.asc out/pingd_0.9.1-1_amd64.deb
  updeb verify-provenance --keyring trusted-builders.asc --json out/helm_3.15.4-1_amd64.deb | jq .statement
  updeb verify-provenance --key repo.asc --provenance saved/helm.intoto.json /var/cache/apt/archives/helm_3.15.4-1_amd64.deb`,
		Args: func(cmd *cobra.Command, args []string) error {
			return invalidInput(cobra.ExactArgs(1)(cmd, args), "see 'updeb help verify-provenance'")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerifyProvenance(cmd, g, o, args[0], time.Now())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.key, "key", "", "the public key the record must be signed by (a file holding one key)")
	f.StringVar(&o.keyring, "keyring", "", "a keyring: any of its keys may have signed the record")
	f.StringArrayVar(&o.signers, "signer", nil, "with --keyring: allowed primary key fingerprint (repeatable)")
	f.StringVar(&o.provenance, "provenance", "", "the record (default: DEB.intoto.json)")
	return jsonOutput(cmd, 1)
}

// verifiedRecord is verify-provenance's --json output.
type verifiedRecord struct {
	Package   string                `json:"package"`
	SHA256    string                `json:"sha256"`
	Record    string                `json:"record"`
	KeyID     string                `json:"key_id"`
	Signature signatureJSON         `json:"signature"`
	Statement *provenance.Statement `json:"statement"`
}

func runVerifyProvenance(cmd *cobra.Command, g *globalOptions, o *verifyProvenanceOptions, deb string, now time.Time) error {
	stdout := cmd.OutOrStdout()
	if o.key != "" && o.keyring != "" {
		return usageErrorf("give --key or --keyring, not both")
	}
	record := first(o.provenance, deb+pipeline.ProvenanceSuffix)
	sums, _, err := hashFile(cmd.Context(), deb, digest.SHA256)
	if err != nil {
		return invalidInput(err, "")
	}
	sum := sums[digest.SHA256]
	env, err := readEnvelope(record)
	if err != nil {
		return err
	}
	if len(env.Signatures) == 0 {
		return fmt.Errorf("%s: %w: it was written without a provenance key, and says nothing anyone can trust", record, dsse.ErrUnsigned)
	}
	kr, err := trustedKeys(cmd.Context(), o)
	if err != nil {
		return err
	}
	pol := openpgp.Policy{Signers: o.signers, Now: now}
	v, err := provenance.Verify(env, kr, pol, filepath.Base(deb), sum)
	if name, ok := withoutAptEpoch(filepath.Base(deb)); ok && errors.Is(err, provenance.ErrSubject) {
		v, err = provenance.Verify(env, kr, pol, name, sum)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", record, err)
	}
	for _, w := range v.Signature.Warnings {
		g.warnf("%s", w)
	}
	if g.json {
		return printJSON(stdout, cmd, verifiedRecord{Package: deb, SHA256: sum, Record: record, KeyID: v.KeyID, Signature: signatureOf(v.Signature), Statement: v.Statement})
	}
	printVerifiedRecord(stdout, v, sum)
	return nil
}

// withoutAptEpoch is the Debian file name of a package apt saved (its
// cache, apt-get download): apt writes the epoch into the name, its colon
// escaped (NAME_EPOCH%3aVERSION_ARCH.deb), where the pool, and the record's
// subject, have none (NAME_VERSION_ARCH.deb). ok is false for any other name.
func withoutAptEpoch(name string) (string, bool) {
	parts := strings.Split(name, "_")
	if len(parts) != 3 {
		return "", false
	}
	epoch, version, ok := strings.Cut(strings.ToLower(parts[1]), "%3a")
	if !ok || epoch == "" || strings.Trim(epoch, "0123456789") != "" {
		return "", false
	}
	return parts[0] + "_" + parts[1][len(epoch)+3:] + "_" + parts[2], version != ""
}

// readEnvelope reads a provenance record file: exit 2 when it is missing or
// malformed, 1 (dsse.ErrUnsigned) when it is a bare statement.
func readEnvelope(path string) (*dsse.Envelope, error) {
	f, _, err := confined.OpenFile(path)
	if err != nil {
		return nil, invalidInput(err, "'updeb build' writes DEB.intoto.json beside each package; name another record with --provenance FILE")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, dsse.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	env, err := dsse.Parse(data)
	if err != nil {
		if bareStatement(data) {
			return nil, fmt.Errorf("%s: %w: it is the bare in-toto statement of updeb before 2026-11-24, which did not sign its records, and says nothing anyone can trust", path, dsse.ErrUnsigned)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return env, nil
}

// bareStatement reports whether data is an in-toto statement without the
// DSSE envelope around it: a record of updeb before 2026-11-24 (publish still
// reads its suite and component, see readRecipeTarget), which no signature
// covers.
func bareStatement(data []byte) bool {
	var st struct {
		Type string `json:"_type"`
	}
	return strictjson.Unmarshal(data, &st) == nil && st.Type == provenance.StatementType
}

// trustedKeys loads --key (exactly one key) or --keyring.
func trustedKeys(ctx context.Context, o *verifyProvenanceOptions) (*openpgp.Keyring, error) {
	switch {
	case o.key != "":
		kr, err := loadKeyring(ctx, o.key)
		if err != nil {
			return nil, err
		}
		if kr.Len() != 1 {
			return nil, usageErrorf("--key %s holds %d keys (%s): give one key, or use --keyring", o.key, kr.Len(), strings.Join(kr.Fingerprints(), ", "))
		}
		if len(o.signers) > 0 {
			return nil, usageErrorf("--signer narrows a --keyring; --key already names one key")
		}
		return kr, nil
	case o.keyring != "":
		return loadKeyring(ctx, o.keyring)
	}
	return nil, usageErrorf("the record is signed: give the key it must be signed by (--key FILE, such as the repository's archive-keyring.asc) or a --keyring")
}

// printVerifiedRecord says who signed the record, what it was built from,
// and how each input was trusted. The record's text (names, URIs,
// parameters) goes through termtext.Escape: a file named with an escape
// sequence in a recipe's folder must not reach the terminal as one.
func printVerifiedRecord(w io.Writer, v *provenance.Verified, sum string) {
	esc := func(x any) string { return termtext.Escape(fmt.Sprint(x)) }
	bd := v.Statement.Predicate.BuildDefinition
	p := bd.ExternalParameters
	sig := v.Signature
	fmt.Fprintf(w, "Good provenance record for %s\n", esc(v.Subject.Name))
	fmt.Fprintf(w, "  package      sha256 %s\n", sum)
	fmt.Fprintf(w, "  signed by    %s\n", sig.UserID)
	fmt.Fprintf(w, "  key          %s\n", sig.PrimaryFingerprint)
	if sig.SigningKeyFingerprint != sig.PrimaryFingerprint {
		fmt.Fprintf(w, "  subkey       %s\n", sig.SigningKeyFingerprint)
	}
	fmt.Fprintf(w, "  signed       %s with %s\n", sig.Created.UTC().Format(time.RFC3339), sig.Hash)
	fmt.Fprintf(w, "  built        %s %s for %s by updeb %s\n", esc(p["recipe"]), esc(p["debianVersion"]), esc(p["architecture"]), esc(v.Statement.Predicate.RunDetails.Builder.Version["updeb"]))
	for _, d := range bd.ResolvedDependencies {
		if d.Annotations[provenance.AnnotationRole] == provenance.RoleRecipe {
			fmt.Fprintf(w, "  recipe       %s (%s)\n", esc(d.Name), esc(recipeOrigin(d)))
		}
	}
	fmt.Fprintln(w, "inputs:")
	for _, d := range bd.ResolvedDependencies {
		what := esc(d.URI)
		if d.URI == "" {
			what = fmt.Sprintf("%s (%s)", esc(d.Name), esc(d.Annotations[provenance.AnnotationRole]))
		}
		fmt.Fprintf(w, "  %s\n", what)
		for _, a := range slices.Sorted(maps.Keys(d.Digest)) {
			fmt.Fprintf(w, "      %-12s %s\n", esc(a), esc(d.Digest[a]))
		}
		if by, ok := d.Annotations["verifiedBy"].([]any); ok {
			var s []string
			for _, x := range by {
				s = append(s, esc(x))
			}
			fmt.Fprintf(w, "      %-12s %s\n", "verified by", strings.Join(s, ", "))
		}
	}
}

// recipeOrigin says where the recipe's bytes come from, in words.
func recipeOrigin(d provenance.Dependency) string {
	switch d.Annotations[provenance.AnnotationGitState] {
	case nil:
		return "not in a git checkout"
	case "clean":
		return fmt.Sprintf("git commit %v, %v", d.Annotations[provenance.AnnotationGitCommit], d.Annotations[provenance.AnnotationGitPath])
	case "modified":
		return "modified since its checkout's commit: no commit holds these bytes"
	case "untracked":
		return "not committed in its git checkout"
	}
	return fmt.Sprintf("git state %v", d.Annotations[provenance.AnnotationGitState])
}
