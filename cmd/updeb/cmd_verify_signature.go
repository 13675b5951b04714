package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/updeb/updeb/pkg/atomicfile"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify"
)

type verifySignatureOptions struct {
	keyring string
	signers []string
	output  string
}

func newVerifySignatureCmd(g *globalOptions) *cobra.Command {
	o := &verifySignatureOptions{}
	cmd := &cobra.Command{
		Use:   "verify-signature --keyring FILE [--signer FPR]... SIGNATURE [DATA]",
		Short: "Check an OpenPGP signature the way updeb does, and say why it is refused",
		Long: `Check a detached signature (SIGNATURE DATA, armored or binary) or a clearsigned message
(SIGNATURE alone) against a keyring, with updeb's policy: a signing-capable key of the
keyring, on the --signer allow-list when given, valid when it signed; no SHA-1, MD5,
RIPEMD-160, DSA or RSA under 2048 bits; not created in the future.

Exit codes: 0 good signature, 1 refused (the reason is printed), 2 usage or unreadable input.`,
		Example: `  updeb verify-signature --keyring keys/helm.asc helm-v3.15.4-linux-amd64.tar.gz.asc helm-v3.15.4-linux-amd64.tar.gz
  updeb verify-signature --keyring keys/runc.asc --signer C9C370B246B09F6DBCFC744C34401015D1D2D386 runc.amd64.asc runc.amd64
  updeb verify-signature --keyring keys/runc.asc --output runc.sha256sum.txt runc.sha256sum`,
		Args: func(cmd *cobra.Command, args []string) error {
			return invalidInput(cobra.RangeArgs(1, 2)(cmd, args), "see 'updeb help verify-signature'")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerifySignature(cmd, g, o, args, time.Now())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.keyring, "keyring", "", "keyring file (armored blocks or binary) (required)")
	f.StringArrayVar(&o.signers, "signer", nil, "allowed primary key fingerprint (repeatable; default: any key of the keyring)")
	f.StringVar(&o.output, "output", "", "clearsigned only: write the verified content to FILE ('-' for stdout)")
	return jsonOutput(cmd, 1)
}

func runVerifySignature(cmd *cobra.Command, g *globalOptions, o *verifySignatureOptions, args []string, now time.Time) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.keyring == "" {
		return usageErrorf("--keyring is required")
	}
	if len(args) == 2 && o.output != "" {
		return usageErrorf("--output is for clearsigned messages; a detached signature's data is already in %s", args[1])
	}
	pol := verify.Policy{Signers: o.signers, Now: now}
	kr, err := loadKeyring(o.keyring)
	if err != nil {
		return err
	}
	sig, err := os.Open(args[0])
	if err != nil {
		return invalidInput(err, "")
	}
	defer sig.Close()

	var res *verify.Result
	var content []byte
	if len(args) == 2 {
		data, err := os.Open(args[1])
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
		return printJSON(report, cmd, signatureJSON{
			PrimaryFingerprint: res.PrimaryFingerprint, SigningKeyFingerprint: res.SigningKeyFingerprint, UserID: res.UserID,
			Created: res.Created.UTC(), Hash: res.Hash, Warnings: res.Warnings, Size: res.Size, Digests: res.Digests,
		})
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
	PrimaryFingerprint    string     `json:"primary_fingerprint"`
	SigningKeyFingerprint string     `json:"signing_key_fingerprint"`
	UserID                string     `json:"user_id"`
	Created               time.Time  `json:"created"`
	Hash                  string     `json:"hash"`
	Warnings              []string   `json:"warnings"`
	Size                  int64      `json:"size"`
	Digests               digest.Set `json:"digests"`
}

// refusedFor names the signature file in a refusal (the library does not know it).
func refusedFor(err error, subject string) error {
	if re, ok := errors.AsType[*verify.RefusedError](err); ok {
		re.Subject = subject
	}
	return err
}
