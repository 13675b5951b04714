package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

type verifySignatureOptions struct {
	keyring string
	signers []string
	output  string

	// The Sigstore forms.
	bundle, sig, cert       string
	identity, identityRE    string
	issuer, trustedRootFile string
	sourceRepository        string
	key                     string
	predicateTypes          []string
	anyPredicateType        bool
}

// sigstoreMode reports whether a Sigstore flag was given.
func (o *verifySignatureOptions) sigstoreMode() bool {
	return o.bundle != "" || o.sig != "" || o.cert != "" || o.identity != "" || o.identityRE != "" || o.issuer != "" || o.sourceRepository != "" || o.trustedRootFile != "" || o.key != "" ||
		len(o.predicateTypes) > 0 || o.anyPredicateType
}

func newVerifySignatureCmd(g *globalOptions) *cobra.Command {
	o := &verifySignatureOptions{}
	cmd := &cobra.Command{
		Use:   "verify-signature --keyring FILE [--signer FPR]... SIGNATURE [DATA] | --bundle FILE | --sig FILE --cert FILE ... ARTIFACT|sha256:HEX",
		Short: "Check an OpenPGP or Sigstore signature the way updeb does, and say why it is refused",
		Long: `OpenPGP: check a detached signature (SIGNATURE DATA, armored or binary) or a clearsigned
message (SIGNATURE alone) against a keyring, with updeb's policy: a signing-capable key of
the keyring, on the --signer allow-list when given, valid when it signed; no SHA-1, MD5,
RIPEMD-160, DSA or RSA under 2048 bits; not created in the future.

Sigstore: check ARTIFACT against a Sigstore bundle (--bundle FILE, .sigstore.json,
verified offline with the log entry it carries) or cosign's detached keyless signature
(--sig FILE --cert FILE, as dl.k8s.io publishes them; the signature's Rekor entry is
looked up through the proxy, at sigstore: rekor-url: or Rekor, mirrors applied). The
signer must be --sigstore-identity (exact) or match --sigstore-identity-regexp (the
whole identity), under --sigstore-issuer; there is no "any identity" form. A GitHub
Actions identity names the workflow that signed, and a reusable workflow signs for every
repository that calls it: --sigstore-source-repository URL requires the certificate's
Source Repository URI, the repository whose run signed. An attestation (a bundle's
in-toto statement) counts only as build provenance, of predicate type
https://slsa.dev/provenance/v1 or v0.2: the signer's SBOM or test results of the file
are refused, naming their type, unless --sigstore-predicate-type names it (repeatable;
the list replaces the default); --sigstore-any-predicate-type checks the signature
alone, whatever the statement's type (Sigstore's conformance suite). A bundle
signed with a long-lived key instead of a certificate (npm's registry key, say) verifies
only under --sigstore-key KEY.pub (PEM): the pinned key is the expected signer, in place
of the identity and issuer. The trusted root is --trusted-root FILE, else the one 'updeb
trust show' names (the config's, the refreshed one, or the bundled public-good snapshot).
A bundle needs a log entry when the root lists a log, and its RFC 3161 timestamps must
verify when the root lists a timestamp authority, as Sigstore's conformance suite expects.

ARTIFACT is the file the signature is for, or its digest as sha256:HEX (64 hex digits)
or sha512:HEX (128) when no file of that name exists: a bundle or signature that signs
another digest, or a statement that names another subject, is refused. cosign's --sig
and --cert need the sha256.

Exit codes: 0 good signature, 1 refused (the reason is printed), 2 usage or unreadable
input, 3 Rekor could not be asked.`,
		Example: `  updeb verify-signature --keyring keys/helm.asc helm-v3.15.4-linux-amd64.tar.gz.asc helm-v3.15.4-linux-amd64.tar.gz
  updeb verify-signature --keyring keys/runc.asc --signer C9C370B246B09F6DBCFC744C34401015D1D2D386 runc.amd64.asc runc.amd64
  updeb verify-signature --keyring keys/runc.asc --output runc.sha256sum.txt runc.sha256sum
  updeb verify-signature --sig kubectl.sig --cert kubectl.cert \
    --sigstore-identity krel-staging@k8s-releng-prod.iam.gserviceaccount.com --sigstore-issuer https://accounts.google.com kubectl
  updeb verify-signature --bundle sigstore.js@2.0.0-provenance.sigstore.json --sigstore-issuer https://token.actions.githubusercontent.com \
    --sigstore-identity-regexp '^https://github\.com/sigstore/sigstore-js/\.github/workflows/release\.yml@refs/heads/main$' sigstore-2.0.0.tgz
  updeb verify-signature --bundle tool.sigstore.json --sigstore-identity dev@example.com --sigstore-issuer https://github.com/login/oauth \
    sha256:bc103b4a84971ef6459b294a2b98568a2bfb72cded09d4acd1e16366a401f95b
  updeb verify-signature --bundle bundle-publish.json --sigstore-key publish_key.pub sigstore-1.3.0.tgz`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.sigstoreMode() {
				return invalidInput(cobra.ExactArgs(1)(cmd, args), "the Sigstore forms take the ARTIFACT the signature is for")
			}
			return invalidInput(cobra.RangeArgs(1, 2)(cmd, args), "see 'updeb help verify-signature'")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.sigstoreMode() {
				return runVerifySigstore(cmd, g, o, args[0])
			}
			return runVerifySignature(cmd, g, o, args, time.Now())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.keyring, "keyring", "", "OpenPGP: keyring file (armored blocks or binary)")
	f.StringArrayVar(&o.signers, "signer", nil, "OpenPGP: allowed primary key fingerprint (repeatable; default: any key of the keyring)")
	f.StringVar(&o.output, "output", "", "OpenPGP clearsigned only: write the verified content to FILE (replaced whole, but never the message or the keyring; a FIFO or device is written into; '-' for stdout, the report then on stderr as a note, and not with --json)")
	f.StringVar(&o.bundle, "bundle", "", "Sigstore: a bundle file (.sigstore.json, .bundle)")
	f.StringVar(&o.sig, "sig", "", "Sigstore: cosign's detached signature file (FILE.sig), with --cert")
	f.StringVar(&o.cert, "cert", "", "Sigstore: cosign's certificate file (FILE.cert), with --sig")
	f.StringVar(&o.identity, "sigstore-identity", "", "Sigstore: the signer's exact identity (certificate SAN: an e-mail address or URI)")
	f.StringVar(&o.identityRE, "sigstore-identity-regexp", "", "Sigstore: a regexp the signer's whole identity must match")
	f.StringVar(&o.issuer, "sigstore-issuer", "", "Sigstore: the OIDC issuer URL (e.g. https://accounts.google.com)")
	f.StringVar(&o.sourceRepository, "sigstore-source-repository", "", "Sigstore: the repository whose CI run must have signed (the certificate's Source Repository URI, e.g. https://github.com/OWNER/REPO)")
	f.StringVar(&o.trustedRootFile, "trusted-root", "", "Sigstore: trusted_root.json (default: the root 'updeb trust show' names)")
	f.StringArrayVar(&o.predicateTypes, "sigstore-predicate-type", nil, "Sigstore: an in-toto predicate type an attestation counts by (repeatable; default: SLSA provenance, https://slsa.dev/provenance/v1 and v0.2)")
	f.BoolVar(&o.anyPredicateType, "sigstore-any-predicate-type", false, "Sigstore: count an attestation of any predicate type (the signature alone is checked, not what the statement says)")
	f.StringVar(&o.key, "sigstore-key", "", "Sigstore: the public key (PEM) a key-signed --bundle must be signed with, in place of identity and issuer")
	return jsonOutput(cmd, 1)
}

func runVerifySignature(cmd *cobra.Command, g *globalOptions, o *verifySignatureOptions, args []string, now time.Time) error {
	stdout := cmd.OutOrStdout()
	if o.keyring == "" {
		return usageErrorf("--keyring is required (or the Sigstore forms: --bundle, or --sig and --cert)")
	}
	if len(args) == 2 && o.output != "" {
		return usageErrorf("--output is for clearsigned messages; a detached signature's data is already in %s", args[1])
	}
	if o.output == "-" && g.json {
		return usageErrorf("--output - writes the verified content to stdout, where --json prints its object: give --output FILE")
	}
	if o.output != "-" && o.output != "" {
		// The content in place of the message would drop its signature.
		if err := notAnInput("output", o.output, args[0], o.keyring); err != nil {
			return err
		}
	}
	pol := openpgp.Policy{Signers: o.signers, Now: now}
	kr, err := loadKeyring(cmd.Context(), o.keyring)
	if err != nil {
		return err
	}
	sig, _, err := confined.OpenFile(args[0])
	if err != nil {
		return invalidInput(err, "")
	}
	defer sig.Close()

	var res *openpgp.Result
	var content []byte
	if len(args) == 2 {
		data, _, err := confined.OpenFile(args[1])
		if err != nil {
			return invalidInput(err, "")
		}
		defer data.Close()
		res, err = openpgp.VerifyDetached(kr, pol, sig, ctxio.Reader(cmd.Context(), data))
		if err != nil {
			if re, ok := errors.AsType[*openpgp.RefusedError](err); ok && (re.Has(openpgp.ReasonMalformed) || re.Has(openpgp.ReasonNoSignature)) &&
				signatureName(args[1]) && !signatureName(args[0]) {
				return checkFailed(refusedFor(err, args[0]), fmt.Sprintf("the signature comes first, then the data: updeb verify-signature --keyring %s %s %s", o.keyring, args[1], args[0]))
			}
			return refusedFor(err, args[0])
		}
	} else {
		content, res, err = openpgp.VerifyClearsigned(kr, pol, sig)
		if err != nil {
			return refusedFor(err, args[0])
		}
	}
	var report io.Writer = stdout
	var note strings.Builder // the report, when stdout carries the content
	if o.output == "-" {
		if _, err := stdout.Write(content); err != nil {
			return err
		}
		// The report is then for people, on stderr as a note: nothing with
		// -q, one record with --log-format json (written there as it was,
		// it broke both).
		report = &note
	} else if o.output != "" {
		if err := writeOutput(cmd.Context(), o.output, content); err != nil {
			return err
		}
	}
	if g.json {
		return printJSON(report, cmd, signatureOf(res))
	}
	fmt.Fprintf(report, "Good signature from %s\n", res.UserID)
	fmt.Fprintf(report, "  primary key  %s\n", res.PrimaryFingerprint)
	if res.SigningKeyFingerprint != res.PrimaryFingerprint {
		fmt.Fprintf(report, "  signing key  %s (subkey)\n", res.SigningKeyFingerprint)
	}
	fmt.Fprintf(report, "  made         %s with %s\n", res.Created.UTC().Format(time.RFC3339), res.Hash)
	fmt.Fprintf(report, "  data         %d bytes, sha256 %s\n", res.Size, res.Digests["sha256"])
	if note.Len() > 0 {
		g.note("%s", strings.TrimSuffix(note.String(), "\n"))
	}
	for _, w := range res.Warnings {
		g.warnf("%s", w)
	}
	return nil
}

// refusedFor names the signature file in a refusal (the library does not know it).
// signatureName says whether a file is named as detached signatures are.
func signatureName(name string) bool {
	return slices.Contains([]string{".asc", ".sig", ".sign", ".gpg"}, strings.ToLower(filepath.Ext(name)))
}

func refusedFor(err error, subject string) error {
	if re, ok := errors.AsType[*openpgp.RefusedError](err); ok {
		re.Subject = subject
	}
	return err
}

// sigstoreVerified is what verify-signature --json writes for a good
// Sigstore signature.
type sigstoreVerified struct {
	Kind     string `json:"kind"` // "sigstore"
	Shape    string `json:"shape"`
	Identity string `json:"identity"`
	Issuer   string `json:"issuer"`
	// SourceRepository is the repository whose CI run signed, where
	// --sigstore-source-repository requires one.
	SourceRepository string   `json:"source_repository,omitempty"`
	LogIndex         int64    `json:"log_index"`
	LogID            string   `json:"log_id"`
	LogURL           string   `json:"log_url"`
	IntegratedTime   string   `json:"integrated_time,omitempty"`
	Timestamps       []string `json:"timestamps,omitempty"`
	Source           string   `json:"source"`
	TrustedRoot      string   `json:"trusted_root"`
	PublicKey        string   `json:"public_key,omitempty"` // the pinned key that verified (--sigstore-key)
	Artifact         string   `json:"artifact"`
	Size             *int64   `json:"size,omitempty"`   // absent when ARTIFACT is a digest
	SHA256           string   `json:"sha256,omitempty"` // absent when ARTIFACT is a sha512 digest
	SHA512           string   `json:"sha512,omitempty"` // when ARTIFACT is a sha512 digest
	Warnings         []string `json:"warnings,omitempty"`
}

func runVerifySigstore(cmd *cobra.Command, g *globalOptions, o *verifySignatureOptions, artifact string) error {
	switch {
	case o.keyring != "" || len(o.signers) > 0 || o.output != "":
		return usageErrorf("--keyring, --signer and --output are for OpenPGP signatures, not with the Sigstore flags")
	case (o.bundle != "") == (o.sig != "" || o.cert != ""):
		return usageErrorf("give --bundle FILE, or --sig FILE and --cert FILE (cosign's detached signature)")
	case o.bundle == "" && (o.sig == "" || o.cert == ""):
		return usageErrorf("--sig and --cert go together")
	case o.key != "" && (o.identity != "" || o.identityRE != "" || o.issuer != "" || o.sourceRepository != ""):
		return usageErrorf("--sigstore-key pins the signer's key; it excludes --sigstore-identity, --sigstore-identity-regexp, --sigstore-issuer and --sigstore-source-repository, which name a certificate's signer")
	case len(o.predicateTypes) > 0 && o.anyPredicateType:
		return usageErrorf("--sigstore-any-predicate-type counts every attestation; --sigstore-predicate-type names the ones that count: give one or the other")
	case slices.ContainsFunc(o.predicateTypes, func(t string) bool { return t == "" || strings.TrimSpace(t) != t }):
		return usageErrorf("--sigstore-predicate-type is empty or has spaces: name the type as the statement's predicateType gives it (%s)", sigstore.SLSAProvenanceV1)
	case (len(o.predicateTypes) > 0 || o.anyPredicateType) && o.bundle == "":
		return usageErrorf("--sigstore-predicate-type and --sigstore-any-predicate-type say which attestations count: they go with --bundle, whose in-toto statement has a predicate type (cosign's --sig/--cert sign the file itself)")
	case o.key != "" && o.bundle == "":
		return usageErrorf("--sigstore-key is for key-signed bundles (--bundle); cosign's --sig/--cert are keyless and name an identity and issuer")
	}
	pol := sigstore.Policy{Identity: o.identity, IdentityRegexp: o.identityRE, Issuer: o.issuer, SourceRepository: o.sourceRepository,
		PredicateTypes: o.predicateTypes, AnyPredicateType: o.anyPredicateType}
	if o.key != "" {
		var err error
		if pol.PublicKey, err = confined.ReadFile(o.key, 1<<20); err != nil {
			return invalidInput(err, "")
		}
	}
	if err := pol.Validate(); err != nil {
		if o.key != "" {
			return invalidInput(fmt.Errorf("%s: %w", o.key, err), "--sigstore-key names a PEM public key (-----BEGIN PUBLIC KEY-----)")
		}
		return invalidInput(err, "give --sigstore-identity (or --sigstore-identity-regexp) and --sigstore-issuer: who must have signed")
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	tr, err := g.trustedRootFlag(cfg, o.trustedRootFile)
	if err != nil {
		return err
	}
	art, size, err := artifactDigests(cmd.Context(), artifact)
	if err != nil {
		return invalidInput(err, "")
	}
	read := func(p string) ([]byte, error) {
		b, err := confined.ReadFile(p, 32<<20) // the verifier refuses what is larger than it ever needs
		if err != nil {
			return nil, invalidInput(err, "")
		}
		return b, nil
	}
	var res *sigstore.Result
	if o.bundle != "" {
		b, err := read(o.bundle)
		if err != nil {
			return err
		}
		v, err := sigstore.New(tr.root, sigstore.Options{})
		if err != nil {
			return err
		}
		if res, err = v.VerifyBundle(cmd.Context(), pol, art, b, o.bundle); err != nil {
			return err
		}
	} else {
		d := sigstore.Detached{SignatureSource: o.sig, CertificateSource: o.cert}
		if d.Signature, err = read(o.sig); err != nil {
			return err
		}
		if d.Certificate, err = read(o.cert); err != nil {
			return err
		}
		f, err := g.newFetcher(cfg)
		if err != nil {
			return err
		}
		defer f.Close()
		v, err := sigstore.New(tr.root, sigstoreOptions(cfg, f))
		if err != nil {
			return invalidInput(err, "check sigstore: in the config")
		}
		if res, err = v.VerifyDetached(cmd.Context(), pol, art, d); err != nil {
			return err
		}
	}
	out := sigstoreVerified{Kind: "sigstore", Shape: string(res.Shape), Identity: res.Identity, Issuer: res.Issuer, SourceRepository: res.SourceRepository, LogIndex: res.LogIndex, LogID: res.LogID,
		LogURL: res.LogURL, Source: res.Source, TrustedRoot: res.TrustedRoot, PublicKey: res.PublicKey, Artifact: artifact, SHA256: art[digest.SHA256], Warnings: res.Warnings}
	if size >= 0 {
		out.Size = &size
	} else if out.SHA256 == "" {
		out.SHA512 = art[digest.SHA512]
	}
	if !res.IntegratedTime.IsZero() {
		out.IntegratedTime = res.IntegratedTime.UTC().Format(time.RFC3339)
	}
	for _, ts := range res.Timestamps {
		out.Timestamps = append(out.Timestamps, ts.UTC().Format(time.RFC3339))
	}
	w := cmd.OutOrStdout()
	if g.json {
		return printJSON(w, cmd, out)
	}
	if out.PublicKey != "" {
		fmt.Fprintf(w, "Good Sigstore signature (%s) by public key %s\n", out.Shape, out.PublicKey)
	} else {
		fmt.Fprintf(w, "Good Sigstore signature (%s) by %s\n", out.Shape, out.Identity)
		fmt.Fprintf(w, "  issuer       %s\n", out.Issuer)
		if out.SourceRepository != "" {
			fmt.Fprintf(w, "  run of       %s\n", out.SourceRepository)
		}
	}
	if out.LogURL != "" {
		fmt.Fprintf(w, "  logged       %s index %d", out.LogURL, out.LogIndex)
		if out.IntegratedTime != "" {
			fmt.Fprintf(w, " at %s", out.IntegratedTime)
		}
		fmt.Fprintln(w)
	}
	if len(out.Timestamps) > 0 {
		fmt.Fprintf(w, "  timestamped  %s\n", strings.Join(out.Timestamps, ", "))
	}
	fmt.Fprintf(w, "  source       %s\n  trusted root %s\n", out.Source, out.TrustedRoot)
	switch {
	case out.Size != nil:
		fmt.Fprintf(w, "  data         %d bytes, sha256 %s\n", *out.Size, out.SHA256)
	case out.SHA256 != "":
		fmt.Fprintf(w, "  data         sha256 %s (digest given)\n", out.SHA256)
	default:
		fmt.Fprintf(w, "  data         sha512 %s (digest given)\n", out.SHA512)
	}
	for _, warn := range out.Warnings {
		g.warnf("%s", warn)
	}
	return nil
}

// artifactDigests is the digests of ARTIFACT: the file's, or, when no file
// of that name exists, the digest it spells as sha256:HEX (64 hex digits,
// the rule of Sigstore's conformance suite) or sha512:HEX (128), with size
// -1.
func artifactDigests(ctx context.Context, arg string) (digest.Set, int64, error) {
	for _, alg := range []digest.Algorithm{digest.SHA256, digest.SHA512} {
		hexSum, ok := strings.CutPrefix(arg, string(alg)+":")
		if !ok || len(hexSum) != alg.Size()*2 || !isHex(hexSum) {
			continue
		}
		if _, err := os.Lstat(arg); errors.Is(err, fs.ErrNotExist) {
			return digest.Set{alg: strings.ToLower(hexSum)}, -1, nil
		}
	}
	sums, n, err := hashFile(ctx, arg)
	if errors.Is(err, fs.ErrNotExist) && digestLike.MatchString(arg) {
		err = fmt.Errorf("%w; as a digest, ARTIFACT is sha256:HEX (64 hex digits) or sha512:HEX (128)", err)
	}
	return sums, n, err
}

// digestLike is an ARTIFACT that may have been meant as a digest.
var digestLike = regexp.MustCompile(`^[A-Za-z0-9-]+:`)

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// hashFile streams a regular file through algs (none: sha256 and sha512),
// stopping with ctx's error once ctx is done: what is checked is what is
// opened (confined.OpenFile), so a FIFO swapped in cannot block the read.
func hashFile(ctx context.Context, p string, algs ...digest.Algorithm) (digest.Set, int64, error) {
	f, _, err := confined.OpenFile(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	h := digest.NewHasher(algs...)
	n, err := io.Copy(h, ctxio.Reader(ctx, f))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", p, err)
	}
	return h.Sum(), n, nil
}
