package main

// OpenPGP material as the commands read and print it: keyrings named on the
// command line (keys list, verify-signature, verify-provenance) and a good
// signature's JSON object.

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
)

// loadKeyring opens a keyring file the user named: one that cannot be read is
// invalid input (exit 2), like a malformed one (verify.ErrKeyring). A signal
// (ctx done) ends the reading of a large one.
func loadKeyring(ctx context.Context, path string) (*openpgp.Keyring, error) {
	kr, err := openpgp.LoadKeyringContext(ctx, path)
	switch {
	case err == nil:
		return kr, nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil, err
	case errors.Is(err, os.ErrNotExist):
		return nil, invalidInput(err, "give the path of an OpenPGP keyring, such as keys/helm.asc")
	case errors.Is(err, openpgp.ErrKeyring):
		return nil, err
	}
	return nil, invalidInput(err, "")
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
func signatureOf(res *openpgp.Result) signatureJSON {
	return signatureJSON{Kind: "openpgp",
		PrimaryFingerprint: res.PrimaryFingerprint, SigningKeyFingerprint: res.SigningKeyFingerprint, UserID: res.UserID,
		Created: res.Created.UTC(), Hash: res.Hash, Warnings: res.Warnings, Size: res.Size, Digests: res.Digests,
	}
}
