// Package trust decides whether a fetched upstream artifact is vouched for
// beyond the digest pinned in its recipe (which the fetcher already checked):
// by a detached OpenPGP signature under the recipe's keyring and signer
// allow-list, by Sigstore material (cosign's .sig and .cert with their Rekor
// entry, a Sigstore bundle, GitHub attestations) signed by the recipe's
// identity under its issuer, and by the upstream checksum file, which must
// agree with the pins. Builds, `updeb bump` and `updeb verify` all verify
// through it, so they decide the same way.
package trust

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// ErrCrossCheck is wrapped when a pinned digest disagrees with the upstream
// checksum file, or the file has no entry for the artifact.
var ErrCrossCheck = errors.New("pinned digest does not match the upstream checksum file")

// ErrNoSigstore is wrapped when a source names Sigstore material and the
// caller gave no Sigstore verifier.
var ErrNoSigstore = errors.New("trust: no Sigstore verifier")

// Verifiers are what Source checks a source with.
type Verifiers struct {
	// Get returns the fetched signature, certificate, bundle, checksum file
	// or Rekor entry at a URL (through the cache). A Rekor entry Get cannot
	// find (404) is asked for by the Sigstore verifier itself, which then
	// refuses in its own words.
	Get func(url string) (*fetch.Result, error)
	// Now is the time OpenPGP signatures and keys are checked at. (Sigstore
	// verification never reads the clock: it uses the log's verified time.)
	Now time.Time
	// Sigstore verifies Sigstore material; nil refuses sources that name some
	// (ErrNoSigstore).
	Sigstore *sigstore.Verifier
}

// Source checks what vouches for art, the fetched artifact of s: the OpenPGP
// signature or the Sigstore material, then the cross-check of pinned (the
// digests to compare with the checksum file) against the upstream checksum
// file. It returns what vouched for the artifact, in the provenance record's
// words ("openpgp:FPR", "sigstore:IDENTITY issuer=URL rekor=INDEX", with
// source-repository=URL after the issuer where the policy requires one,
// "sigstore:public-key=SHA256:... rekor=INDEX", "... timestamp=TIME" when a
// timestamp authority vouched in place of a log, "checksum-file:URL", ...);
// none for a source with nothing but its pin.
func Source(ctx context.Context, s *recipe.ResolvedSource, pinned digest.Set, art *fetch.Result, v Verifiers) ([]string, error) {
	var by []string
	if s.Signature != nil {
		sig, err := v.Get(s.Signature.URL)
		if err != nil {
			return nil, err
		}
		res, err := VerifySignature(ctx, art.Path, sig.Path, s.Signature, v.Now)
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
	if s.Sigstore != nil {
		res, err := VerifySigstore(ctx, s, art.Digests, v)
		if err != nil {
			return nil, err
		}
		by = append(by, SigstoreEvidence(res))
	}
	if s.Checksums != nil {
		sums, err := v.Get(s.Checksums.URL)
		if err != nil {
			return nil, err
		}
		c, err := CrossCheck(pinned, sums.Path, s.Checksums, v.Now)
		if err != nil {
			return nil, err
		}
		by = append(by, c...)
	}
	return by, nil
}

// SigstoreEvidence is how a Sigstore verification is named in the provenance
// record and in reports: who signed, under which issuer (and for which
// repository's run, where the policy requires one), and where the
// transparency log holds it.
func SigstoreEvidence(r *sigstore.Result) string {
	where := fmt.Sprintf("rekor=%d", r.LogIndex)
	if r.LogURL == "" && len(r.Timestamps) > 0 {
		// No log entry counted (a trusted root of a timestamp authority
		// alone): an RFC 3161 timestamp vouched for the signing time.
		where = "timestamp=" + r.Timestamps[0].UTC().Format(time.RFC3339)
	}
	if r.PublicKey != "" {
		return fmt.Sprintf("sigstore:public-key=%s %s", r.PublicKey, where)
	}
	if r.SourceRepository != "" {
		// The identity of a reusable workflow signs for anyone's run: the
		// record names the repository whose run it was.
		return fmt.Sprintf("sigstore:%s issuer=%s source-repository=%s %s", r.Identity, r.Issuer, r.SourceRepository, where)
	}
	return fmt.Sprintf("sigstore:%s issuer=%s %s", r.Identity, r.Issuer, where)
}

// Policy is the Sigstore policy of a planned source: its identity, issuer
// and source repository, or its pinned public key (read from the recipe's
// folder), and the predicate types its attestations count by.
func Policy(p *recipe.ResolvedSigstore) (sigstore.Policy, error) {
	if p.PublicKeyPath != "" {
		key, err := PublicKey(p)
		return sigstore.Policy{PublicKey: key, PredicateTypes: p.PredicateTypes}, err
	}
	return sigstore.Policy{Identity: p.Identity, IdentityRegexp: p.IdentityRegexp, Issuer: p.Issuer, SourceRepository: p.SourceRepository, PredicateTypes: p.PredicateTypes}, nil
}

// maxPublicKey bounds what is read of a pinned public key file: a PEM key
// is well under a kilobyte, an RSA-16384 one under 3.
const maxPublicKey = 64 << 10

// PublicKey reads the pinned public key file of p (a regular file, at most
// 64 KiB; lint confined it to the recipe's folder) and checks it is a PEM
// public key, naming the file when it is not.
func PublicKey(p *recipe.ResolvedSigstore) ([]byte, error) {
	key, err := confined.ReadFile(p.PublicKeyPath, maxPublicKey)
	if err != nil {
		return nil, err
	}
	if _, err := sigstore.KeyFingerprint(key); err != nil {
		return nil, fmt.Errorf("%s: %w", p.PublicKeyPath, err)
	}
	return key, nil
}

// KeyFingerprint names the pinned public key of p as Sigstore results do
// (SHA256:base64).
func KeyFingerprint(p *recipe.ResolvedSigstore) (string, error) {
	key, err := PublicKey(p)
	if err != nil {
		return "", err
	}
	return sigstore.KeyFingerprint(key)
}

// maxSigstoreFile bounds what is read of a .sig, .cert, bundle or Rekor
// answer; the verifier refuses anything larger than it ever needs.
const maxSigstoreFile = 32 << 20

// VerifySigstore verifies the Sigstore material of s over the artifact with
// these digests (sha256 among them): cosign's .sig and .cert (whose Rekor
// entry is fetched through v.Get, so that it is cached, mirrored and listed
// in the provenance record), a bundle, or the GitHub attestations of the
// repository.
func VerifySigstore(ctx context.Context, s *recipe.ResolvedSource, artifact digest.Set, v Verifiers) (*sigstore.Result, error) {
	p := s.Sigstore
	if v.Sigstore == nil {
		return nil, fmt.Errorf("%w: %s is signed with Sigstore", ErrNoSigstore, s.URL)
	}
	pol, err := Policy(p)
	if err != nil {
		return nil, err
	}
	var res *sigstore.Result
	switch p.Form() {
	case "cosign":
		var d sigstore.Detached
		if d, err = detached(p, v); err != nil {
			return nil, err
		}
		var u string
		if u, err = v.Sigstore.RekorEntryURL(pol, artifact, d); err == nil {
			var entry *fetch.Result
			entry, err = v.Get(u)
			switch {
			case err == nil:
				d.RekorEntry, err = readSmall(entry.Path)
			case isAbsent(err):
				err = nil // the verifier asks, and says "never logged" in its words
			}
			if err == nil {
				res, err = v.Sigstore.VerifyDetached(ctx, pol, artifact, d)
			}
		}
	case "bundle":
		var b *fetch.Result
		if b, err = v.Get(p.BundleURL); err != nil {
			return nil, err
		}
		var raw []byte
		if raw, err = readSmall(b.Path); err == nil {
			res, err = v.Sigstore.VerifyBundle(ctx, pol, artifact, raw, p.BundleURL)
		}
	default:
		res, err = v.Sigstore.VerifyGitHubAttestations(ctx, pol, artifact, p.GitHubAttestations)
	}
	if err != nil {
		return nil, fmt.Errorf("sigstore signature of %s: %w", s.URL, err)
	}
	return res, nil
}

// detached reads cosign's fetched .sig and .cert.
func detached(p *recipe.ResolvedSigstore, v Verifiers) (sigstore.Detached, error) {
	d := sigstore.Detached{SignatureSource: p.SigURL, CertificateSource: p.CertURL}
	for _, f := range []struct {
		url string
		dst *[]byte
	}{{p.SigURL, &d.Signature}, {p.CertURL, &d.Certificate}} {
		r, err := v.Get(f.url)
		if err != nil {
			return d, err
		}
		if *f.dst, err = readSmall(r.Path); err != nil {
			return d, err
		}
	}
	return d, nil
}

// readSmall reads at most maxSigstoreFile+1 bytes of a cached file: the
// verifier refuses what is larger, naming the URL.
func readSmall(path string) ([]byte, error) {
	return confined.ReadAtMost(path, maxSigstoreFile+1)
}

// isAbsent reports a download that failed because the file does not exist
// (HTTP 404 or 410, or no such file in a file:// mirror).
func isAbsent(err error) bool {
	var se *fetch.StatusError
	if errors.As(err, &se) {
		return se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusGone
	}
	return errors.Is(err, fs.ErrNotExist)
}

// VerifySignature verifies the detached signature at sigPath over the file at
// dataPath with s's keyring and signer allow-list. The file (up to the
// largest source, gigabytes) is read under ctx: a signal ends the reading at
// once with ctx's error.
func VerifySignature(ctx context.Context, dataPath, sigPath string, s *recipe.ResolvedSignature, now time.Time) (*openpgp.Result, error) {
	kr, err := openpgp.LoadKeyringContext(ctx, s.KeyringPath)
	if err != nil {
		return nil, err
	}
	data, _, err := confined.OpenFile(dataPath)
	if err != nil {
		return nil, err
	}
	defer data.Close()
	sig, _, err := confined.OpenFile(sigPath)
	if err != nil {
		return nil, err
	}
	defer sig.Close()
	return openpgp.VerifyDetached(kr, openpgp.Policy{Signers: s.Signers, Now: now}, sig, ctxio.Reader(ctx, data))
}

// CrossCheck compares the pinned digests with the checksum file's entry
// (verifying the file first when it is clearsigned). Every algorithm both
// sides have must agree, and at least one must be shared. It returns what
// verified the file, for provenance.
func CrossCheck(pinned digest.Set, sumsPath string, pc *recipe.ResolvedChecksums, now time.Time) ([]string, error) {
	raw, err := confined.ReadFile(sumsPath, maxChecksumFile)
	if err != nil {
		return nil, err
	}
	var by []string
	content := raw
	if pc.Clearsigned != nil {
		kr, err := openpgp.LoadKeyring(pc.Clearsigned.KeyringPath)
		if err != nil {
			return nil, err
		}
		c, res, err := openpgp.VerifyClearsigned(kr, openpgp.Policy{Signers: pc.Clearsigned.Signers, Now: now}, bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("checksum file %s: %w", pc.URL, err)
		}
		content = c
		by = append(by, "openpgp-clearsigned-checksums:"+res.PrimaryFingerprint)
	}
	list, err := digest.ParseChecksums(bytes.NewReader(content), pc.URL)
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
			return nil, fmt.Errorf("%w: %s lists %s %s for %s, the file downloaded has %s", ErrCrossCheck, pc.URL, a, u, pc.Name, pinned[a])
		}
	}
	if shared == 0 {
		return nil, fmt.Errorf("%w: %s has only %v for %s, the recipe pins %v: pin the same algorithm", ErrCrossCheck, pc.URL, upstream.Algorithms(), pc.Name, pinned.Algorithms())
	}
	return append(by, "checksum-file:"+pc.URL), nil
}

// maxChecksumFile bounds an upstream checksum file read whole (real ones
// list a few hundred files in a few KiB; pkg/digest refuses more too).
const maxChecksumFile = 4 << 20
