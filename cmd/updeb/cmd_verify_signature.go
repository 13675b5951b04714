package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify"
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
}

// sigstoreMode reports whether a Sigstore flag was given.
func (o *verifySignatureOptions) sigstoreMode() bool {
	return o.bundle != "" || o.sig != "" || o.cert != "" || o.identity != "" || o.identityRE != "" || o.issuer != "" || o.trustedRootFile != ""
}

func newVerifySignatureCmd(g *globalOptions) *cobra.Command {
	o := &verifySignatureOptions{}
	cmd := &cobra.Command{
		Use:   "verify-signature --keyring FILE [--signer FPR]... SIGNATURE [DATA] | --bundle FILE | --sig FILE --cert FILE ... ARTIFACT",
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
whole identity), under --sigstore-issuer; there is no "any identity" form. The trusted
root is --trusted-root FILE, else the one 'updeb trust show' names (the config's, the
refreshed one, or the bundled public-good snapshot).

Exit codes: 0 good signature, 1 refused (the reason is printed), 2 usage or unreadable
input, 3 Rekor could not be asked.`,
		Example: `  updeb verify-signature --keyring keys/helm.asc helm-v3.15.4-linux-amd64.tar.gz.asc helm-v3.15.4-linux-amd64.tar.gz
  updeb verify-signature --keyring keys/runc.asc --signer C9C370B246B09F6DBCFC744C34401015D1D2D386 runc.amd64.asc runc.amd64
  updeb verify-signature --keyring keys/runc.asc --output runc.sha256sum.txt runc.sha256sum
  updeb verify-signature --sig kubectl.sig --cert kubectl.cert \
    --sigstore-identity krel-staging@k8s-releng-prod.iam.gserviceaccount.com --sigstore-issuer https://accounts.google.com kubectl
  updeb verify-signature --bundle cilium-linux-amd64.tar.gz.sigstore.json --sigstore-issuer https://token.actions.githubusercontent.com \
    --sigstore-identity-regexp '^https://github\.com/cilium/cilium-cli/\.github/workflows/release\.yaml@refs/tags/v.*$' cilium-linux-amd64.tar.gz`,
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
	f.StringVar(&o.output, "output", "", "OpenPGP clearsigned only: write the verified content to FILE ('-' for stdout)")
	f.StringVar(&o.bundle, "bundle", "", "Sigstore: a bundle file (.sigstore.json, .bundle)")
	f.StringVar(&o.sig, "sig", "", "Sigstore: cosign's detached signature file (FILE.sig), with --cert")
	f.StringVar(&o.cert, "cert", "", "Sigstore: cosign's certificate file (FILE.cert), with --sig")
	f.StringVar(&o.identity, "sigstore-identity", "", "Sigstore: the signer's exact identity (certificate SAN: an e-mail address or URI)")
	f.StringVar(&o.identityRE, "sigstore-identity-regexp", "", "Sigstore: a regexp the signer's whole identity must match")
	f.StringVar(&o.issuer, "sigstore-issuer", "", "Sigstore: the OIDC issuer URL (e.g. https://accounts.google.com)")
	f.StringVar(&o.trustedRootFile, "trusted-root", "", "Sigstore: trusted_root.json (default: the root 'updeb trust show' names)")
	return jsonOutput(cmd, 1)
}

func runVerifySignature(cmd *cobra.Command, g *globalOptions, o *verifySignatureOptions, args []string, now time.Time) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.keyring == "" {
		return usageErrorf("--keyring is required (or the Sigstore forms: --bundle, or --sig and --cert)")
	}
	if len(args) == 2 && o.output != "" {
		return usageErrorf("--output is for clearsigned messages; a detached signature's data is already in %s", args[1])
	}
	pol := verify.Policy{Signers: o.signers, Now: now}
	kr, err := loadKeyring(o.keyring)
	if err != nil {
		return err
	}
	sig, _, err := confined.OpenFile(args[0])
	if err != nil {
		return invalidInput(err, "")
	}
	defer sig.Close()

	var res *verify.Result
	var content []byte
	if len(args) == 2 {
		data, _, err := confined.OpenFile(args[1])
		if err != nil {
			return invalidInput(err, "")
		}
		defer data.Close()
		res, err = verify.VerifyDetached(kr, pol, sig, data)
		if err != nil {
			return refusedFor(err, args[0])
		}
	} else {
		content, res, err = verify.VerifyClearsigned(kr, pol, sig)
		if err != nil {
			return refusedFor(err, args[0])
		}
	}
	report := stdout
	if o.output == "-" {
		report = stderr
		if _, err := stdout.Write(content); err != nil {
			return err
		}
	} else if o.output != "" {
		if err := atomicfile.WriteFile(o.output, content, 0o644); err != nil {
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
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "updeb: warning: %s\n", w)
	}
	return nil
}

// signatureJSON is verify-signature's --json object for a good signature.
type signatureJSON struct {
	Kind                  string     `json:"kind"` // "openpgp"
	PrimaryFingerprint    string     `json:"primary_fingerprint"`
	SigningKeyFingerprint string     `json:"signing_key_fingerprint"`
	UserID                string     `json:"user_id"`
	Created               time.Time  `json:"created"`
	Hash                  string     `json:"hash"`
	Warnings              []string   `json:"warnings"`
	Size                  int64      `json:"size"`
	Digests               digest.Set `json:"digests"`
}

// signatureOf is res as the JSON of verify-signature and verify-provenance
// shows it.
func signatureOf(res *verify.Result) signatureJSON {
	return signatureJSON{Kind: "openpgp",
		PrimaryFingerprint: res.PrimaryFingerprint, SigningKeyFingerprint: res.SigningKeyFingerprint, UserID: res.UserID,
		Created: res.Created.UTC(), Hash: res.Hash, Warnings: res.Warnings, Size: res.Size, Digests: res.Digests,
	}
}

// refusedFor names the signature file in a refusal (the library does not know it).
func refusedFor(err error, subject string) error {
	if re, ok := errors.AsType[*verify.RefusedError](err); ok {
		re.Subject = subject
	}
	return err
}

// sigstoreVerified is what verify-signature --json writes for a good
// Sigstore signature.
type sigstoreVerified struct {
	Kind           string   `json:"kind"` // "sigstore"
	Shape          string   `json:"shape"`
	Identity       string   `json:"identity"`
	Issuer         string   `json:"issuer"`
	LogIndex       int64    `json:"log_index"`
	LogID          string   `json:"log_id"`
	LogURL         string   `json:"log_url"`
	IntegratedTime string   `json:"integrated_time,omitempty"`
	Timestamps     []string `json:"timestamps,omitempty"`
	Source         string   `json:"source"`
	TrustedRoot    string   `json:"trusted_root"`
	Artifact       string   `json:"artifact"`
	Size           int64    `json:"size"`
	SHA256         string   `json:"sha256"`
	Warnings       []string `json:"warnings,omitempty"`
}

func runVerifySigstore(cmd *cobra.Command, g *globalOptions, o *verifySignatureOptions, artifact string) error {
	switch {
	case o.keyring != "" || len(o.signers) > 0 || o.output != "":
		return usageErrorf("--keyring, --signer and --output are for OpenPGP signatures, not with the Sigstore flags")
	case (o.bundle != "") == (o.sig != "" || o.cert != ""):
		return usageErrorf("give --bundle FILE, or --sig FILE and --cert FILE (cosign's detached signature)")
	case o.bundle == "" && (o.sig == "" || o.cert == ""):
		return usageErrorf("--sig and --cert go together")
	}
	pol := sigstore.Policy{Identity: o.identity, IdentityRegexp: o.identityRE, Issuer: o.issuer}
	if err := pol.Validate(); err != nil {
		return invalidInput(err, "give --sigstore-identity (or --sigstore-identity-regexp) and --sigstore-issuer: who must have signed")
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	var tr *trustedRoot
	if o.trustedRootFile != "" {
		tr, err = loadTrustedRoot("flag", o.trustedRootFile, "--trusted-root names a Sigstore trusted_root.json")
	} else {
		tr, err = g.trustedRootFor(cfg)
	}
	if err != nil {
		return err
	}
	art, size, err := hashFile(artifact)
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
	out := sigstoreVerified{Kind: "sigstore", Shape: string(res.Shape), Identity: res.Identity, Issuer: res.Issuer, LogIndex: res.LogIndex, LogID: res.LogID,
		LogURL: res.LogURL, Source: res.Source, TrustedRoot: res.TrustedRoot, Artifact: artifact, Size: size, SHA256: art[digest.SHA256], Warnings: res.Warnings}
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
	fmt.Fprintf(w, "Good Sigstore signature (%s) by %s\n", out.Shape, out.Identity)
	fmt.Fprintf(w, "  issuer       %s\n", out.Issuer)
	fmt.Fprintf(w, "  logged       %s index %d", out.LogURL, out.LogIndex)
	if out.IntegratedTime != "" {
		fmt.Fprintf(w, " at %s", out.IntegratedTime)
	}
	fmt.Fprintf(w, "\n  source       %s\n  trusted root %s\n", out.Source, out.TrustedRoot)
	fmt.Fprintf(w, "  data         %d bytes, sha256 %s\n", out.Size, out.SHA256)
	for _, warn := range out.Warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "updeb: warning: %s\n", warn)
	}
	return nil
}

// hashFile streams a file through sha256 and sha512.
func hashFile(p string) (digest.Set, int64, error) {
	f, _, err := confined.OpenFile(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	h := digest.NewHasher()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, 0, err
	}
	return h.Sum(), n, nil
}
