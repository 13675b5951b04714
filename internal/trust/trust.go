// Package trust decides whether a fetched upstream artifact is vouched for
// beyond the digest pinned in its recipe (which the fetcher already checked):
// by a detached signature under the recipe's keyring and signer allow-list,
// and by the upstream checksum file, which must agree with the pins. Builds,
// `updeb bump` and `updeb verify` all verify through it, so they decide the
// same way.
package trust

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify"
)

// ErrCrossCheck is wrapped when a pinned digest disagrees with the upstream
// checksum file, or the file has no entry for the artifact.
var ErrCrossCheck = errors.New("pinned digest does not match the upstream checksum file")

// Source checks what vouches for art, the fetched artifact of s: the detached
// signature, then the cross-check of pinned (the digests to compare with the
// checksum file) against the upstream checksum file. get returns the fetched
// signature or checksum file for a URL. It returns what vouched for the
// artifact, in the provenance record's words ("openpgp:FPR",
// "checksum-file:URL", ...).
func Source(s *recipe.PlannedSource, pinned digest.Set, art *fetch.Result, get func(url string) (*fetch.Result, error), now time.Time) ([]string, error) {
	var by []string
	if s.Signature != nil {
		sig, err := get(s.Signature.URL)
		if err != nil {
			return nil, err
		}
		res, err := VerifySignature(art.Path, sig.Path, s.Signature, now)
		if err != nil {
			return nil, fmt.Errorf("signature %s: %w", s.Signature.URL, err)
		}
		// The signature must have been verified over the same bytes the pin was
		// checked on.
		if res.Digests[digest.SHA256] != art.Digests[digest.SHA256] {
			return nil, fmt.Errorf("%s changed while it was verified", art.Path)
		}
		by = append(by, "openpgp:"+res.PrimaryFingerprint)
	}
	if s.Checksums != nil {
		sums, err := get(s.Checksums.URL)
		if err != nil {
			return nil, err
		}
		v, err := CrossCheck(pinned, sums.Path, s.Checksums, now)
		if err != nil {
			return nil, err
		}
		by = append(by, v...)
	}
	return by, nil
}

// VerifySignature verifies the detached signature at sigPath over the file at
// dataPath with s's keyring and signer allow-list.
func VerifySignature(dataPath, sigPath string, s *recipe.PlannedSignature, now time.Time) (*verify.Result, error) {
	kr, err := verify.LoadKeyring(s.KeyringPath)
	if err != nil {
		return nil, err
	}
	data, err := os.Open(dataPath)
	if err != nil {
		return nil, err
	}
	defer data.Close()
	sig, err := os.Open(sigPath)
	if err != nil {
		return nil, err
	}
	defer sig.Close()
	return verify.VerifyDetached(kr, verify.Policy{Signers: s.Signers, Now: now}, sig, data)
}

// CrossCheck compares the pinned digests with the checksum file's entry
// (verifying the file first when it is clearsigned). Every algorithm both
// sides have must agree, and at least one must be shared. It returns what
// verified the file, for provenance.
func CrossCheck(pinned digest.Set, sumsPath string, pc *recipe.PlannedChecksums, now time.Time) ([]string, error) {
	raw, err := os.ReadFile(sumsPath)
	if err != nil {
		return nil, err
	}
	var by []string
	content := raw
	if pc.Clearsigned != nil {
		kr, err := verify.LoadKeyring(pc.Clearsigned.KeyringPath)
		if err != nil {
			return nil, err
		}
		c, res, err := verify.VerifyClearsigned(kr, verify.Policy{Signers: pc.Clearsigned.Signers, Now: now}, bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("checksum file %s: %w", pc.URL, err)
		}
		content = c
		by = append(by, "openpgp-clearsigned-checksums:"+res.PrimaryFingerprint)
	}
	list, err := verify.ParseChecksums(bytes.NewReader(content), pc.URL)
	if err != nil {
		return nil, err
	}
	upstream, err := list.Lookup(pc.Name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCrossCheck, err)
	}
	shared := 0
	for _, a := range pinned.Algorithms() {
		u, ok := upstream[a]
		if !ok {
			continue
		}
		shared++
		if u != pinned[a] {
			return nil, fmt.Errorf("%w: %s lists %s %s for %s, the recipe pins %s", ErrCrossCheck, pc.URL, a, u, pc.Name, pinned[a])
		}
	}
	if shared == 0 {
		return nil, fmt.Errorf("%w: %s has only %v for %s, the recipe pins %v: pin the same algorithm", ErrCrossCheck, pc.URL, upstream.Algorithms(), pc.Name, pinned.Algorithms())
	}
	return append(by, "checksum-file:"+pc.URL), nil
}
