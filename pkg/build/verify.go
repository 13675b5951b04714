package build

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/fetch"
	"github.com/updeb/updeb/pkg/recipe"
	"github.com/updeb/updeb/pkg/verify"
)

// verifySource checks a fetched source beyond its pinned digest (which the
// fetcher already checked): the detached signature, then the cross-check
// against the upstream checksum file.
func verifySource(vs *verifiedSource, byURL map[string]*fetch.Result, now time.Time) error {
	s := vs.plan
	if s.Signature != nil {
		sig := byURL[s.Signature.URL]
		vs.aux = append(vs.aux, sig)
		res, err := VerifySignature(vs.fetched.Path, sig.Path, s.Signature, now)
		if err != nil {
			return fmt.Errorf("source %s: signature %s: %w", s.Name, s.Signature.URL, err)
		}
		// The signature was verified over the same bytes the pin was checked on:
		// the cache hands out only files whose digest matched.
		if res.Digests[digest.SHA256] != vs.fetched.Digests[digest.SHA256] {
			return fmt.Errorf("source %s: %s changed while it was verified", s.Name, vs.fetched.Path)
		}
		vs.verifiedBy = append(vs.verifiedBy, "openpgp:"+res.PrimaryFingerprint)
	}
	if s.Checksums != nil {
		sums := byURL[s.Checksums.URL]
		vs.aux = append(vs.aux, sums)
		by, err := CrossCheck(s.Pinned, sums.Path, s.Checksums, now)
		if err != nil {
			return fmt.Errorf("source %s: %w", s.Name, err)
		}
		vs.verifiedBy = append(vs.verifiedBy, by...)
	}
	return nil
}

// VerifySignature verifies the detached signature at sigPath over the file at
// dataPath with s's keyring and signer allow-list (builds use it, and updeb
// bump on new versions, so both check exactly the same way).
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
