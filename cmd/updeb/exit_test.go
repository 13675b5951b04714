package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/gate"
	"github.com/updeb/updeb/internal/mirror"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/dsse"
	"github.com/updeb/updeb/pkg/lockfile"
	"github.com/updeb/updeb/pkg/provenance"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// TestExitStatus is the exit-code table of docs/scripting.md ("Exit codes"), error by
// error: the code and the hint each class of error gets, however deeply it
// is wrapped, and which class wins when several failures are joined. Every
// rule of exitRules must be reached by some case (a rule shadowed by an
// earlier one is dead).
func TestExitStatus(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("helm (amd64): source helm: %w", err) }
	refusal := func(subject string, reasons ...openpgp.Reason) error {
		re := &openpgp.RefusedError{Subject: subject, Keyring: "keys/helm.asc"}
		for _, r := range reasons {
			re.Refusals = append(re.Refusals, openpgp.Refusal{Reason: r, Detail: string(r)})
		}
		return wrap(re)
	}
	sigRefusal := func(r sigstore.Reason) error {
		return wrap(fmt.Errorf("sigstore signature of u: %w", &sigstore.RefusedError{Subject: "x.sig", Refusals: []sigstore.Refusal{{Reason: r, Source: "x.cert", Detail: string(r)}}}))
	}
	pathErr := &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}
	netErr := &fetch.NetworkError{URL: "https://example.org/a", Attempts: 6, Err: syscall.ECONNREFUSED}
	// An output folder that is a symlink to a folder that is gone.
	dangling := filepath.Join(t.TempDir(), "out")
	if err := os.Symlink("/mnt/share/out", dangling); err != nil {
		t.Fatal(err)
	}
	provenanceRefusal := func(r openpgp.Reason) error {
		re := &openpgp.RefusedError{Keyring: "repo.asc", Refusals: []openpgp.Refusal{{Reason: r, Detail: string(r)}}}
		return fmt.Errorf("x.deb.intoto.json: %w: %w", provenance.ErrSignature, errors.Join(re))
	}
	tests := []struct {
		name string
		err  error
		code int
		hint string // a part of the hint; "" means no hint at all
	}{
		{"success", nil, exitOK, ""},

		// What the command knows.
		{"bad flag", usageErrorf("--now %q: want a day as YYYY-MM-DD", "today"), exitUsage, ""},
		{"file the user named", invalidInput(pathErr, "create one with 'updeb keys generate'"), exitUsage, "updeb keys generate"},
		{"failed report", checkFailed(errors.New("2 compatibility violation(s)"), "see the findings above"), exitCheck, "see the findings above"},
		{"changes written (plan --apply)", &changedError{n: 3, message: "change.txt"}, exitCheck, "review them (git diff), then commit them"},
		{"plan --apply: a download failed beside a recipe refused", errors.Join(wrap(netErr), fmt.Errorf("etcd: %w", track.ErrUnvouched)), exitCheck, "compare these digests"},

		// 1: a check failed.
		{"bad signature file", wrap(&source.AuxError{Source: "helm", Files: []string{"the signature file fetched from u"}, Err: refusal("", openpgp.ReasonMalformed)}), exitCheck, "no longer cached"},
		{"mirror file refused", wrap(&fetch.MirrorError{URL: "u", Target: "file:///m/u", Err: fmt.Errorf("x: %w", confined.ErrRefused)}), exitCheck, "outside its folder"},
		{"recipe file refused", wrap(fmt.Errorf("/r/x/evil: %w: resolves outside", confined.ErrRefused)), exitCheck, "outside its folder"},
		{"unknown signer", refusal("helm.tgz.asc", openpgp.ReasonUnknownSigner), exitCheck, "the signer is not in keys/helm.asc"},
		{"bad signature", refusal("", openpgp.ReasonBadSignature, openpgp.ReasonUnknownSigner), exitCheck, "the data is not what was signed"},
		{"signer not allowed", refusal("", openpgp.ReasonNotAllowed), exitCheck, "not on the allow-list"},
		{"key expired", refusal("", openpgp.ReasonKeyExpired), exitCheck, "'updeb keys list keys/helm.asc'"},
		// A refreshed key does not un-revoke: the hint must not promise a newer expiry.
		{"key revoked", refusal("", openpgp.ReasonKeyRevoked), exitCheck, "was revoked: see 'updeb keys list keys/helm.asc' for when and why"},
		{"not a signature", refusal("/tmp/x/helm.tgz.asc", openpgp.ReasonMalformed), exitCheck, "is helm.tgz.asc really an OpenPGP signature"},
		{"weak digest", refusal("", openpgp.ReasonWeakHash), exitCheck, "break updeb's policy"},
		{"signature from the future", refusal("", openpgp.ReasonFuture), exitCheck, "check this machine's clock"},
		{"digest mismatch", wrap(&digest.MismatchError{Subject: "a", Algorithm: digest.SHA256, Want: "aa", Got: "bb"}), exitCheck, "differ from the pinned digest"},
		{"cross-check", wrap(fmt.Errorf("%w: sums lists other", trust.ErrCrossCheck)), exitCheck, "failed verification"},
		{"bad checksum file", wrap(fmt.Errorf("%w: line 3", digest.ErrChecksums)), exitCheck, "failed verification"},
		{"hostile archive", wrap(&archive.Error{Kind: archive.ErrUnsafe, Msg: "path traversal"}), exitCheck, "failed verification"},
		{"decompression bomb", wrap(&archive.Error{Kind: archive.ErrLimit, Msg: "too large"}), exitCheck, "failed verification"},
		{"corrupt archive", wrap(&archive.Error{Kind: archive.ErrCorrupt}), exitCheck, "failed verification"},
		{"member missing", wrap(&archive.Error{Kind: archive.ErrMissing}), exitCheck, "holds no file of that name"},
		{"member a symlink", wrap(&archive.Error{Kind: archive.ErrNotRegular, Entry: "s/tool", Msg: `wanted as a regular file, but it is a symlink to "real-1.2"`}), exitCheck, "point the recipe's files: path: at the file itself"},
		{"member sparse", wrap(&archive.Error{Kind: archive.ErrSparse, Entry: "bin/tool", Msg: "wanted as a regular file, but it is a sparse file"}), exitCheck, "cannot package it from this archive"},
		{"archive not a file", wrap(&archive.Error{Kind: archive.ErrNotRegular, Msg: "the archive must be a regular file, found p---------"}), exitCheck, "failed verification"},
		{"too large", &fetch.SizeError{URL: "u", Limit: 1, Size: 2}, exitCheck, "max-size"},
		{"https downgrade", &fetch.DowngradeError{From: "https://a", To: "http://a"}, exitCheck, "downgraded"},
		{"redirect to file:", &fetch.NetworkError{URL: "http://a", Attempts: 1, Err: fmt.Errorf("%w: http://a -> file:///etc/passwd", fetch.ErrRedirectScheme)}, exitCheck, "http(s) URLs only"},
		{"incomplete release", &track.IncompleteError{Version: "1.2.0"}, exitCheck, "not uploaded every artifact"},
		{"re-upload", wrap(track.ErrReupload), exitCheck, "ALARM"},
		{"rewrite refused", wrap(yamlfile.ErrNotRewritten), exitCheck, "the file was left as it was"},
		{"a rewrite that waited too long for a lock", wrap(fmt.Errorf("recipes/helm.yaml: %w: %w recipes (another updeb process holds it): %w", yamlfile.ErrNotRewritten, lockfile.ErrHeld, context.DeadlineExceeded)), exitCheck, "another updeb process held the file's lock for longer than a rewrite waits"},
		{"rewritten meanwhile by another process", wrap(fmt.Errorf("compat-data.yaml: %w: %w while it was being rewritten", yamlfile.ErrNotRewritten, yamlfile.ErrChanged)), exitCheck, "another process's change (another updeb, an editor, a git checkout), made while this one wrote it, and nothing of this run: run the command again"},
		{"mirror export through a symlink", wrap(mirror.ErrOutside), exitCheck, "writes only inside its folder"},
		{"new minor unreleased", fmt.Errorf("%w: 1.37", track.ErrNoRelease), exitCheck, "--to"},
		{"one version tagged twice", fmt.Errorf("%w: v1.03.0 and v1.3.0", track.ErrAmbiguous), exitCheck, "--to"},
		{"publish conflict", &repo.ConflictError{Package: "x=1 (amd64)"}, exitCheck, "repository is unchanged"},
		{"two builds in one publish", &repo.ConflictError{Package: "x=1 (amd64)", Given: "a.deb", Path: "b.deb"}, exitCheck, "publish one of the two .deb files"},
		{"field change", &repo.FieldChangeError{Suite: "stable", Changes: []repo.FieldChange{{Field: "Origin", From: "a", To: "b"}}}, exitCheck, "--allow-field-change"},
		{"gate failed", fmt.Errorf("verify: %w", gate.ErrFailed), exitCheck, "FAIL lines"},
		{"unsigned record", fmt.Errorf("x.deb.intoto.json: %w", dsse.ErrUnsigned), exitCheck, "build: provenance-key:"},
		{"record by another key", provenanceRefusal(openpgp.ReasonUnknownSigner), exitCheck, "signed by a key other than the one given"},
		{"record changed", provenanceRefusal(openpgp.ReasonBadSignature), exitCheck, "changed after it was signed"},
		{"record signature damaged", provenanceRefusal(openpgp.ReasonMalformed), exitCheck, "changed after it was signed"},
		{"record signed by an expired key", provenanceRefusal(openpgp.ReasonKeyExpired), exitCheck, "updeb keys list"},
		{"record key ID altered", fmt.Errorf("%w: %w", provenance.ErrSignature, errors.New("signature with key ID A was made by key B")), exitCheck, "key ID names another key"},
		{"record of another package", fmt.Errorf("%w: the record is about a.deb, not b.deb", provenance.ErrSubject), exitCheck, "not this package's"},
		{"support data lost cycles", &supportdata.DroppedError{Dropped: map[string][]string{"kubernetes": {"1.36"}}}, exitCheck, "--allow-dropped"},
		{"a compatibility table lost rows", &compatdata.DroppedError{Dropped: map[string][]string{"containerd": {"1.35"}}}, exitCheck, "--allow-dropped"},
		{"a broken repository data file", fmt.Errorf("%w: compat-data.yaml:3:5: helm override: missing required field \"reason\"", compatdata.ErrFile), exitUsage, "each override needs a reason"},
		{"an unknown table", fmt.Errorf("%w %q", compatdata.ErrUnknownTable, "flannel"), exitUsage, ""},
		{"sigstore wrong identity", sigRefusal(sigstore.ReasonIdentity), exitCheck, "signer is not the one named"},
		{"sigstore wrong issuer", sigRefusal(sigstore.ReasonIssuer), exitCheck, "signer is not the one named"},
		{"sigstore altered artifact", sigRefusal(sigstore.ReasonDigestMismatch), exitCheck, "not what was signed"},
		{"sigstore untrusted certificate", sigRefusal(sigstore.ReasonUntrustedCertificate), exitCheck, "updeb trust show"},
		{"sigstore missing log entry", sigRefusal(sigstore.ReasonNoLogEntry), exitCheck, "transparency log does not vouch"},
		{"sigstore tampered log entry", sigRefusal(sigstore.ReasonBadLogEntry), exitCheck, "transparency log does not vouch"},
		{"sigstore time outside validity", sigRefusal(sigstore.ReasonCertificateTime), exitCheck, "transparency log does not vouch"},
		{"sigstore no signing time", sigRefusal(sigstore.ReasonNoTimestamp), exitCheck, "a log entry of a log it lists, or an RFC 3161 timestamp"},
		{"sigstore no attestation", sigRefusal(sigstore.ReasonNoAttestation), exitCheck, "github-attestations"},
		{"sigstore malformed", sigRefusal(sigstore.ReasonMalformed), exitCheck, "cosign's .sig/.cert"},
		{"sigstore unsupported", sigRefusal(sigstore.ReasonUnsupported), exitCheck, "the error says what this material is instead"},
		{"sigstore statement type", sigRefusal(sigstore.ReasonStatementType), exitCheck, "in-toto statement is not of a type updeb reads"},
		{"sigstore other", sigRefusal(sigstore.ReasonInvalid), exitCheck, "does not verify"},
		{"TUF refused", fmt.Errorf("%w: refresh from u: expired", sigstore.ErrTUF), exitCheck, "nothing was stored"},
		{"unvouched", wrap(&track.UnvouchedError{Recipe: "k", Sources: []string{"server amd64: sha512 x"}}), exitCheck, "--trust-on-first-use"},

		// 2: usage or invalid input.
		{"no maintainer", wrap(errors.Join(recipe.ErrInvalid, recipe.ErrNoMaintainer)), exitUsage, "build: maintainer:"},
		{"invalid recipe", wrap(recipe.ErrInvalid), exitUsage, "'updeb lint'"},
		{"invalid package", wrap(fmt.Errorf("%w: Package %q", deb.ErrInvalid, "A")), exitUsage, "'updeb lint'"},
		{"bad want list", wrap(fmt.Errorf("%w %q: listed twice", archive.ErrWant, "x")), exitUsage, "'updeb lint'"},
		{"bad keyring", wrap(fmt.Errorf("%w: no key", openpgp.ErrKeyring)), exitUsage, "gpg --armor --export"},
		{"bad signer", fmt.Errorf("%w: fingerprint", openpgp.ErrPolicy), exitUsage, "full primary key fingerprint"},
		{"no pin", fmt.Errorf("%w for u", digest.ErrNoPin), exitUsage, ""},
		{"bad URL", fmt.Errorf("fetch: %w", &srcurl.Error{URL: "https://h/%2e%2e/x", Reason: "dot segment"}), exitUsage, "however encoded"},
		{"URL of another scheme", fmt.Errorf("fetch: %w", &srcurl.Error{URL: "file:///etc/hostname", Reason: "not an http:// or https:// URL"}), exitUsage, "http:// or https:// and a host"},
		{"malformed deb", fmt.Errorf("x.deb: %w: ar", deb.ErrMalformed), exitUsage, "dpkg-deb --info"},
		{"deb past a limit", fmt.Errorf("x.deb: %w: data.tar.xz: %w: more than 100000 entries", deb.ErrMalformed, archive.ErrLimit), exitUsage, "larger than updeb reads"},
		{"no watch", track.ErrNoWatch, exitUsage, "watch:"},
		{"downgrade", track.ErrDowngrade, exitUsage, "bump only moves forward"},
		{"new minor exists", fmt.Errorf("%w: recipes/k-1.37.yaml", track.ErrExists), exitUsage, ""},
		{"new minor of a single recipe", fmt.Errorf("%w: recipes/etcd.yaml", track.ErrNotVersioned), exitUsage, "NAME-MAJOR.MINOR"},
		{"no date", track.ErrNoDate, exitUsage, "--date"},
		{"--to written otherwise", track.ErrTarget, exitUsage, ""},
		{"no such repository", &track.APIError{URL: "u", Status: 404}, exitUsage, "watch: github: OWNER/REPO"},
		{"weak key", fmt.Errorf("%w: rsa1024", repo.ErrWeakKey), exitUsage, "Ed25519"},
		{"clock set back", fmt.Errorf("%w: live Date ahead", repo.ErrClock), exitUsage, "repository is unchanged"},
		{"unusable key", fmt.Errorf("%w: no secret key", repo.ErrKey), exitUsage, "secret key"},
		{"expired key", fmt.Errorf("%w: ABCD %w at 2026-12-02: it expired on 2021-01-01", repo.ErrKey, signkey.ErrCannotSign), exitUsage, "the key cannot sign now (the error says why): if it expired, extend its expiry"},
		{"repo invalid", fmt.Errorf("%w: suite", repo.ErrInvalid), exitUsage, ""},
		{"not published", fmt.Errorf("%w: kubectl", repo.ErrNotFound), exitUsage, ""},
		{"not managed", repo.ErrNotManaged, exitUsage, ""},
		{"mirror manifest", fmt.Errorf("%w: schema \"x\"", mirror.ErrManifest), exitUsage, "updeb-mirror.json"},
		{"mirror folder incomplete", fmt.Errorf("%w: 1 missing", mirror.ErrFailed), exitCheck, "bring the missing and corrupt files over again"},
		{"malformed envelope", fmt.Errorf("x.intoto.json: %w: not a JSON object", dsse.ErrMalformed), exitUsage, "DSSE envelope"},
		{"not a provenance record", fmt.Errorf("x.intoto.json: %w: predicate type", provenance.ErrRecord), exitUsage, "DSSE envelope"},
		{"unreadable base", fmt.Errorf("verify: %w", fmt.Errorf("%w: nope is not a commit", gate.ErrBase)), exitUsage, "--base"},
		{"recipe that does not load at the base", fmt.Errorf("verify: %w", fmt.Errorf("%w: %w", gate.ErrBase, gate.ErrBaseRecipe)), exitUsage, "does not load with this updeb"},
		{"sigstore policy", fmt.Errorf("%w: no identity", sigstore.ErrPolicy), exitUsage, "anchored regexp"},
		{"bad trusted root", fmt.Errorf("%w: x.json: not JSON", sigstore.ErrTrustedRoot), exitUsage, "updeb trust refresh"},
		{"no sigstore verifier", wrap(fmt.Errorf("%w: u", trust.ErrNoSigstore)), exitUsage, ""},

		// 3: network or I/O failure after retries.
		{"rate limit", wrap(&track.APIError{URL: "u", Status: 403, RateLimit: true}), exitNetwork, "GITHUB_TOKEN"},
		{"rate limit on 404", &track.APIError{URL: "u", Status: 404, RateLimit: true}, exitNetwork, "GITHUB_TOKEN"},
		// The token was sent: "set GITHUB_TOKEN" would send the operator
		// after a setting they have.
		{"rate limit of the token", wrap(&track.APIError{URL: "u", Status: 403, RateLimit: true, Token: true}), exitNetwork, "GITHUB_TOKEN was sent, and its quota is spent"},
		{"secondary rate limit", &track.APIError{URL: "u", Status: 403, RateLimit: true, Secondary: true}, exitNetwork, "GITHUB_TOKEN does not lift it"},
		{"token refused", wrap(&track.APIError{URL: "u", Status: 401, Token: true}), exitNetwork, "GitHub refused GITHUB_TOKEN (expired, revoked or mistyped)"},
		// No token was sent (a GitHub Enterprise server that wants one):
		// "GitHub refused GITHUB_TOKEN" would name one that does not exist.
		{"token wanted", wrap(&track.APIError{URL: "u", Status: 401}), exitNetwork, "the API wants a token and none was sent: set GITHUB_TOKEN"},
		// A token without access (scope, SAML SSO, IP allow list): a
		// lasting refusal, not something unusable to try again later.
		{"token without access", wrap(&track.APIError{URL: "u", Status: 403, Token: true, Message: "Resource protected by organization SAML enforcement."}), exitNetwork, "GITHUB_TOKEN may not read the repository"},
		{"API error", &track.APIError{URL: "u", Status: 502}, exitNetwork, "try again later"},
		{"unusable upstream", fmt.Errorf("%w: no versions", track.ErrUpstream), exitNetwork, "try again later"},
		{"unusable support data", fmt.Errorf("%w: u: the answer is HTML", supportdata.ErrAPI), exitNetwork, "copy in use was kept"},
		{"an unusable compatibility table", &compatdata.SourceError{Table: "helm", URL: "u", Err: errors.New("the answer is an HTML page")}, exitNetwork, "data: sources:"},
		{"offline miss", &fetch.OfflineError{Missing: []string{"u"}}, exitNetwork, "without --offline"},
		{"missing from the mirror", wrap(&fetch.MissingError{URL: "u", Where: "mirror file:///m/u"}), exitNetwork, "updeb mirror export"},
		{"stdout a closed pipe", fmt.Errorf("printing: %w", &stdoutError{err: &fs.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}}), exitClosedPipe, ""},
		{"stdout on a full disk", &stdoutError{err: &fs.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}}, exitNetwork, "its output is incomplete"},
		{"full disk in the cache", wrap(&diskfull.Error{Dir: "/var/cache/updeb", Err: &fs.PathError{Op: "write", Path: "/var/cache/updeb/tmp/x", Err: syscall.ENOSPC}}), exitNetwork, "the disk holding /var/cache/updeb is full"},
		{"full disk writing a package", wrap(&fs.PathError{Op: "write", Path: "/srv/out/.updeb-build-1/x.deb", Err: syscall.ENOSPC}), exitNetwork, "the disk holding /srv/out/.updeb-build-1 is full"},
		{"quota behind a network error", wrap(&fetch.NetworkError{URL: "u", Err: syscall.EDQUOT}), exitNetwork, "quota is spent"},
		{"download failed, direct", wrap(netErr), exitNetwork, "no proxy was used (direct connection)"},
		// The host answered, with redirects only: "check that this host
		// reaches it" would send the operator after the network.
		{"redirect loop", wrap(&fetch.NetworkError{URL: "https://u", Attempts: 1, Err: &url.Error{Op: "Get", URL: "https://u", Err: fetch.ErrTooManyRedirects}}), exitNetwork, "redirect after redirect"},
		{"redirect to no usable URL", wrap(&fetch.NetworkError{URL: "https://u", Attempts: 1, Err: &url.Error{Op: "Get", URL: "https://u", Err: fmt.Errorf("%w: https://u -> http://:80/x", fetch.ErrBadRedirect)}}), exitNetwork, "redirected to no usable URL"},
		// The host answered 404: "check that this host reaches it" would
		// send the operator after the network.
		{"no such file", wrap(&fetch.NetworkError{URL: "https://u", Attempts: 1, Err: &fetch.StatusError{URL: "https://u", StatusCode: 404, Status: "404 Not Found"}}), exitNetwork, "has no such file: check the URL"},
		{"no such file in a mirror folder", wrap(&fetch.NetworkError{URL: "https://u", Target: "file:///m/u", Attempts: 1, Err: &fetch.StatusError{URL: "file:///m/u", StatusCode: 404, Status: "404 Not Found (no such file in the mirror)"}}), exitNetwork, "has no such file: check the URL"},
		{"download failed through the proxy", wrap(&fetch.NetworkError{URL: "https://u", Proxy: "http://p:3128", Attempts: 6, Err: syscall.ECONNRESET}), exitNetwork, "check the proxy (--proxy"},
		{"release day unknown", wrap(&track.DayUnknownError{Recipe: "runc", Version: "1.4.4", Err: netErr}), exitNetwork, "--date YYYY-MM-DD"},
		{"proxy named https://, speaking http", wrap(&fetch.NetworkError{URL: "u", Proxy: "https://p:3128", Attempts: 1, Err: fmt.Errorf("%w: tls: first record does not look like a TLS handshake", fetch.ErrProxyNotTLS)}), exitNetwork, "write the proxy's URL with http://"},
		{"proxy down", wrap(&fetch.NetworkError{URL: "u", Proxy: "http://p:3128", Attempts: 3, Err: fmt.Errorf("%w: refused", fetch.ErrProxyUnreachable)}), exitNetwork, "nothing answers at that proxy"},
		{"proxy wants credentials (CONNECT)", wrap(&fetch.NetworkError{URL: "https://u", Proxy: "http://p:3128", Attempts: 1, Err: &fetch.ProxyRefusedError{Proxy: "http://p:3128", Host: "u:443", StatusCode: 407, Status: "407 Proxy Authentication Required"}}), exitNetwork, "http://USER:PASSWORD@HOST:PORT"},
		{"proxy wants credentials (plain http)", wrap(&fetch.NetworkError{URL: "http://u", Proxy: "http://p:3128", Attempts: 1, Err: &fetch.StatusError{URL: "http://u", StatusCode: 407, Status: "407 Proxy Authentication Required"}}), exitNetwork, "http://USER:PASSWORD@HOST:PORT"},
		{"proxy wants Kerberos or NTLM (CONNECT)", wrap(&fetch.NetworkError{URL: "https://u", Proxy: "http://p:3128", Attempts: 1, Err: &fetch.ProxyRefusedError{Proxy: "http://p:3128", Host: "u:443", StatusCode: 407, Status: "407 Proxy Authentication Required", Challenges: []string{"Negotiate", "NTLM"}}}), exitNetwork, "a local proxy that logs in for it (cntlm, px)"},
		{"proxy wants Kerberos or NTLM (plain http)", wrap(&fetch.NetworkError{URL: "http://u", Proxy: "http://p:3128", Attempts: 1, Err: &fetch.StatusError{URL: "http://u", StatusCode: 407, Status: "407 Proxy Authentication Required", Header: http.Header{"Proxy-Authenticate": {"Negotiate"}}}}), exitNetwork, "a local proxy that logs in for it (cntlm, px)"},
		{"untrusted certificate (a proxy inspecting TLS)", wrap(&fetch.NetworkError{URL: "https://u", Proxy: "http://p:3128", Attempts: 1, Err: &url.Error{Op: "Get", URL: "https://u", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}}), exitNetwork, "add its CA to ca-bundle:"},
		{"proxy refuses an answer as too big (plain http)", wrap(&fetch.NetworkError{URL: "http://u", Proxy: "http://p:3128", Attempts: 1, Err: &fetch.StatusError{URL: "http://u", StatusCode: 502, Status: "502 Bad Gateway", Header: http.Header{"X-Squid-Error": {"ERR_TOO_BIG 0"}}}}), exitNetwork, "raise that limit in the proxy's configuration"},
		{"proxy forbids the host", wrap(&fetch.NetworkError{URL: "https://u", Proxy: "http://p:3128", Attempts: 1, Err: &fetch.ProxyRefusedError{Proxy: "http://p:3128", Host: "u:443", StatusCode: 403, Status: "403 Forbidden"}}), exitNetwork, "check the proxy's rules"},
		{"corrupt in a mirror folder", wrap(fmt.Errorf("the copy in the mirror file:///m/u is %w: %w", fetch.ErrCorruptCopy, &digest.MismatchError{Subject: "u", Algorithm: digest.SHA256})), exitCheck, "Bring it over again"},
		{"unreadable in a mirror folder", wrap(&fetch.NetworkError{URL: "https://h/a", Target: "file:///media/usb/h/a", Attempts: 1, Err: &fs.PathError{Op: "openat", Path: "a", Err: syscall.EACCES}}), exitNetwork, "could not be read: make it readable"},
		{"download too slow", wrap(&fetch.NetworkError{URL: "u", Attempts: 3, Err: fmt.Errorf("%w: x", fetch.ErrRetryTime)}), exitNetwork, "retry-time"},
		{"interrupted", wrap(context.Canceled), exitInterrupted, "interrupted"},
		{"stopped by a signal", &interruptedError{msg: "interrupted (signal: terminated)", err: context.Canceled}, exitInterrupted, "nothing half-done"},
		{"rekor unavailable", wrap(&sigstore.FetchError{URL: "https://rekor.sigstore.dev/api/v1/log/entries/x", Status: 503, Err: errors.New("busy")}), exitNetwork, "rekor-url"},
		{"rekor through the fetcher", wrap(&sigstore.FetchError{URL: "u", Err: netErr}), exitNetwork, "give the proxy"},
		{"attestations not in the mirror", wrap(&sigstore.FetchError{URL: "u", Status: 404, Err: fmt.Errorf("%w: file:///usb/x", sigstore.ErrNotMirrored)}), exitNetwork, "the mirror folder lacks the file"},
		{"deadline", context.DeadlineExceeded, exitNetwork, ""},
		{"file I/O", fmt.Errorf("writing: %w", pathErr), exitNetwork, ""},
		{"a folder through a dangling symlink", fmt.Errorf("cache: %w", os.MkdirAll(filepath.Join(dangling, "tmp"), 0o755)), exitNetwork, dangling + " is a symlink to /mnt/share/out, which does not exist (a share not mounted?)"},
		{"a folder where a file is", &fs.PathError{Op: "mkdir", Path: "/etc/passwd", Err: syscall.EEXIST}, exitNetwork, ""},
		{"an output folder updeb may not write", fmt.Errorf("report folder ro/rep: %w", &fs.PathError{Op: "mkdir", Path: "ro/rep", Err: syscall.EACCES}), exitNetwork, fmt.Sprintf("updeb runs as uid %d, which may not mkdir ro/rep (or use the folder above it)", os.Geteuid())},
		{"a folder that is a file", fmt.Errorf("cache: %w", &fs.PathError{Op: "mkdir", Path: "updeb.yaml", Err: syscall.ENOTDIR}), exitNetwork, "updeb.yaml, or a folder above it, is a file, not a folder"},
		{"a read-only file system", &fs.PathError{Op: "open", Path: "/usr/out/x.deb", Err: syscall.EROFS}, exitNetwork, "/usr/out/x.deb is on a read-only file system"},
		{"rename", &os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EXDEV}, exitNetwork, ""},
		{"syscall", os.NewSyscallError("fsync", syscall.EIO), exitNetwork, ""},
		{"socket", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, exitNetwork, ""},
		{"name lookup", &net.DNSError{Err: "no such host", Name: "example.org"}, exitNetwork, ""},
		{"errno", fmt.Errorf("flock: %w", syscall.ENOLCK), exitNetwork, ""},

		// The one default: nobody anticipated it, so it is not success and
		// not a retryable network failure.
		{"unclassified", errors.New("build: Options.Now is required"), exitDefault, ""},

		// Joined failures (one per recipe or job): a check before invalid
		// input before the network.
		{"alarm beats network", errors.Join(netErr, wrap(track.ErrReupload)), exitCheck, "ALARM"},
		{"invalid beats network", errors.Join(netErr, wrap(recipe.ErrInvalid)), exitUsage, "'updeb lint'"},
		{"check beats invalid", errors.Join(wrap(recipe.ErrInvalid), &digest.MismatchError{}), exitCheck, "pinned digest"},
		{"input beats I/O", invalidInput(pathErr, ""), exitUsage, ""},
	}
	reached := make([]bool, len(exitRules))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hint := exitStatus(tt.err)
			if code != tt.code {
				t.Errorf("exit %d, want %d (error %v)", code, tt.code, tt.err)
			}
			if (tt.hint == "") != (hint == "") || !strings.Contains(hint, tt.hint) {
				t.Errorf("hint %q, want one containing %q", hint, tt.hint)
			}
			if i, _ := exitRuleFor(tt.err); i >= 0 {
				reached[i] = true
			}
		})
	}
	for i, ok := range reached {
		if !ok {
			t.Errorf("exitRules[%d] (exit %d) is matched by no case: add one, or drop the rule", i, exitRules[i].code)
		}
	}
}

// TestPrintError: the error, then the hint on its own line, and no hint line
// when there is none.
func TestPrintError(t *testing.T) {
	var b bytes.Buffer
	printError(&b, invalidInput(errors.New("bad.yaml:3: unknown field \"x\"\n"), "fix the config file"), false)
	if want := "updeb: error: bad.yaml:3: unknown field \"x\"\nupdeb: hint: fix the config file\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	printError(&b, errors.New("boom"), false)
	if want := "updeb: error: boom\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	// A file name with a line break cannot add an error or hint line of
	// its own; the error's own lines (one per recipe) stay lines.
	b.Reset()
	printError(&b, invalidInput(errors.New("stat a\nupdeb: error: all good.deb: no such file\nrecipe b: bad"), "name the .deb\nupdeb: hint: ignore this"), false)
	if want := "updeb: error: stat a\\nupdeb: error: all good.deb: no such file\nrecipe b: bad\nupdeb: hint: name the .deb\\nupdeb: hint: ignore this\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestErrorLogJSON: with --log-format json the final error is one JSON
// record like every other line of stderr (with -q too), saying the exit
// code and the hint as fields; a notice (plan --apply's changes) is an INFO
// record.
func TestErrorLogJSON(t *testing.T) {
	local := time.Local // the record's time is UTC, as every other line's
	time.Local = time.FixedZone("UTC-5", -5*3600)
	t.Cleanup(func() { time.Local = local })
	type record struct {
		Time, Level, Msg, Hint string
		ExitCode               *int `json:"exit_code"`
	}
	records := func(stderr string) []record {
		t.Helper()
		var recs []record
		for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			var r record
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Errorf("--log-format json: a line that is not JSON: %q", line)
			} else if !strings.HasSuffix(r.Time, "Z") {
				t.Errorf("--log-format json: time %q is not UTC: %s", r.Time, line)
			}
			recs = append(recs, r)
		}
		return recs
	}
	for _, global := range [][]string{{"--log-format", "json"}, {"--log-format", "json", "-q"}} {
		code, stdout, stderr := runCLI(t, append(global, "lint", "--recipes", t.TempDir(), "--json", "nosuch")...)
		recs := records(stderr)
		if code != exitUsage || stdout != "" || len(recs) != 1 {
			t.Fatalf("%v: exit %d, stdout %q, want exit %d and one record:\n%s", global, code, stdout, exitUsage, stderr)
		}
		if r := recs[0]; r.Level != "ERROR" || !strings.Contains(r.Msg, `recipe "nosuch"`) || !strings.Contains(r.Hint, "recipes are named after their file") || r.ExitCode == nil || *r.ExitCode != exitUsage {
			t.Errorf("%v: %+v", global, r)
		}
	}
	// A usage error that stops the flags being read before --log-format
	// (an unknown flag or a bad value earlier on the line, as a wrapper that
	// appends --log-format json to every command line meets them) is a JSON
	// record too.
	for _, args := range [][]string{
		{"build", "--bogus", "--log-format", "json"},
		{"build", "--bogus", "value", "--log-format=json", "hello"},
		{"build", "--jobs", "many", "--log-format", "json"},
		{"-x", "--log-format", "json", "version"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		recs := records(stderr)
		if code != exitUsage || stdout != "" || len(recs) != 1 || recs[0].Level != "ERROR" || recs[0].ExitCode == nil || *recs[0].ExitCode != exitUsage || recs[0].Hint == "" {
			t.Errorf("%v: exit %d, stdout %q, want exit %d and one JSON record with its hint:\n%s", args, code, stdout, exitUsage, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "build", "--bogus", "--", "--log-format", "json"); code != exitUsage || !strings.HasPrefix(stderr, "updeb: error: unknown flag: --bogus\n") {
		t.Errorf("--log-format json after --: exit %d\n%s", code, stderr)
	}
	var b bytes.Buffer
	printError(&b, &changedError{n: 2}, true)
	if r := records(b.String()); len(r) != 1 || r[0].Level != "INFO" || r[0].ExitCode == nil || *r[0].ExitCode != exitCheck {
		t.Errorf("a notice: %q", b.String())
	}
}

// TestSparseMemberHint: a sparse member, as GNU tar writes one in each of
// its formats, is refused with a hint that says what it is and what can be
// done, not to point files: path: "at the file itself", which it is.
func TestSparseMemberHint(t *testing.T) {
	testenv.RequireTool(t, "tar")
	dir := t.TempDir()
	tool := filepath.Join(dir, "tool")
	if err := os.WriteFile(tool, []byte("data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(tool, 1<<20); err != nil { // a hole of a MiB after the data
		t.Fatal(err)
	}
	for _, flags := range [][]string{{"--format=gnu"}, {"--format=posix", "--sparse-version=0.0"}, {"--format=posix", "--sparse-version=0.1"}, {"--format=posix", "--sparse-version=1.0"}} {
		out := filepath.Join(t.TempDir(), "tool.tar")
		testenv.Run(t, "tar", append(append([]string{"-C", dir, "-S"}, flags...), "-cf", out, "tool")...)
		err := archive.Select(context.Background(), out, archive.Tar, []string{"tool"}, archive.Limits{}, func(archive.Member, io.Reader) error { return nil })
		code, hint := exitStatus(fmt.Errorf("tool (amd64): source tool: %w", err))
		if code != exitCheck || !strings.Contains(hint, "sparse") || strings.Contains(hint, "at the file itself") {
			t.Errorf("%v: exit %d, hint %q for %v; want %d and a hint about a sparse member", flags, code, hint, err, exitCheck)
		}
	}
}

// Every Sigstore refusal reason gets advice of its own, not the catch-all.
func TestSigstoreRefusalHints(t *testing.T) {
	generic := sigstoreRefusalHint(&sigstore.RefusedError{})
	seen := map[string]sigstore.Reason{}
	for _, r := range []sigstore.Reason{sigstore.ReasonMalformed, sigstore.ReasonIdentity, sigstore.ReasonUntrustedCertificate,
		sigstore.ReasonKeyValidity, sigstore.ReasonBadSignature, sigstore.ReasonNoLogEntry, sigstore.ReasonDigestMismatch, sigstore.ReasonNoAttestation, sigstore.ReasonStatementType} {
		h := sigstoreRefusalHint(&sigstore.RefusedError{Refusals: []sigstore.Refusal{{Reason: r}}})
		if h == generic {
			t.Errorf("reason %s: only the generic hint %q", r, h)
		}
		if other, dup := seen[h]; dup {
			t.Errorf("reasons %s and %s share the hint %q", other, r, h)
		}
		seen[h] = r
	}
}

// The fetcher marks a file mirror's 404 with the header the Sigstore
// verifier reads (neither package imports the other).
func TestMirrorMissingHeaderAgrees(t *testing.T) {
	if fetch.MirrorMissingHeader != sigstore.MirrorMissingHeader {
		t.Fatalf("fetch sets %q, sigstore reads %q", fetch.MirrorMissingHeader, sigstore.MirrorMissingHeader)
	}
}

// TestEmptyFallbackFlags: a flag whose value otherwise comes from the
// config (or the environment, or a default), given empty (an unset shell
// variable), is refused (exit 2) rather than silently giving way to the
// config.
func TestEmptyFallbackFlags(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "updeb.yaml")
	os.WriteFile(cfg, []byte("out: elsewhere\nrepo: {dir: elsewhere}\n"), 0o644)
	for _, args := range [][]string{
		{"--out", "", "build"},
		{"build", "--out="},
		{"--cache", "", "fetch", "hello"},
		{"--proxy", "", "fetch", "hello"},
		{"publish", "--repo", "", "x.deb"},
		{"publish", "--suite", "", "x.deb"},
		{"repo", "remove", "--component", "", "helm"},
		{"build", "--compression", ""},
		{"trust", "refresh", "--tuf-url", ""},
		{"publish", "--key", "", "x.deb"},
		{"repo", "refresh", "--key", "k.asc", "--key", ""},
		{"outdated", "--github-api", ""},
		{"verify-provenance", "--provenance", "", "x.deb"},
		{"verify", "--base", "", "hello"},
		{"repo", "verify", "--keyring", ""},
		{"repo", "remove", "--arch", "", "helm"},
		{"build", "--arch="},
		{"plan", "--apply", "--only", ""},
		{"data", "refresh", "--table", ""},
		{"data", "refresh", "--write", ""},
		{"report", "--output", "site", "--metrics", ""},
		{"plan", "--apply", "--message", ""},
		{"compat", "--output", ""},
		{"verify-signature", "--bundle", "b.json", "--sigstore-identity", "i", "--sigstore-issuer", "https://x", "--sigstore-source-repository", "", "a"},
		{"plan", "--apply", "--base", ""},
		{"bump", "hello", "--to", ""},
		{"bump", "hello", "--to", "1.0.0", "--date", ""},
		{"compat", "--now", ""},
	} {
		code, _, stderr := runCLI(t, append([]string{"--config", cfg}, args...)...)
		name := ""
		for _, a := range args {
			if strings.HasPrefix(a, "--") {
				name = strings.TrimSuffix(a, "=")
			}
		}
		if code != exitUsage || !strings.Contains(stderr, name+" is empty") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}

// TestEmptyConfigSettings: a path, the proxy or a checked text setting in
// the config given empty ("" or spaces, a template's unset variable) is
// refused (exit 2, at its line, nothing on stdout), as the flag given empty
// is: it gave way to the default without a word, and 'cache gc' with
// 'cache: ""' collected $XDG_CACHE_HOME/updeb, another configuration's
// cache, exit 0; 'proxy: ""' sent every download direct, or through the
// environment's proxy; 'version-suffix: ""' built Debian's own versions.
func TestEmptyConfigSettings(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "xdg-cache"))
	cfg := filepath.Join(dir, "updeb.yaml")
	for _, tc := range []struct {
		config string
		args   []string
		want   string
	}{
		{"cache: \"\"\n", []string{"cache", "gc", "--json"}, cfg + ":1:8: cache is empty"},
		{"out: \" \"\n", []string{"cache", "gc", "--json"}, cfg + ":1:6: out is empty"},
		{"repo:\n  dir: ''\n", []string{"repo", "list", "--json"}, cfg + ":2:8: repo.dir is empty"},
		{"repo:\n  key: \"\"\n", []string{"repo", "list", "--json"}, cfg + ":2:8: repo.key is empty"},
		{"build:\n  provenance-key: \"\"\n", []string{"cache", "gc", "--json"}, cfg + ":2:19: build.provenance-key is empty"},
		{"proxy: \"\"\n", []string{"cache", "gc", "--json"}, cfg + ":1:8: proxy is empty"},
		{"build:\n  version-suffix: \"\"\n", []string{"cache", "gc", "--json"}, cfg + ":2:19: build.version-suffix is empty"},
		{"repo:\n  origin: \" \"\n", []string{"repo", "list", "--json"}, cfg + ":2:11: repo.origin is empty"},
		{"build:\n  compression: \"\"\n", []string{"cache", "gc", "--json"}, cfg + ":2:16: build.compression is empty"},
		{"build:\n  xz-mode: ''\n", []string{"cache", "gc", "--json"}, cfg + ":2:12: build.xz-mode is empty"},
	} {
		if err := os.WriteFile(cfg, []byte(tc.config), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, append([]string{"--config", cfg}, tc.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.config, code, out, stderr, tc.want)
		}
	}
}

// TestConfigYmlNotRead: an updeb.yml in the working folder, where updeb
// reads updeb.yaml, is refused (exit 2, naming both): updeb ran on the
// defaults, exit 0, the file's settings (here its cache) never applied.
func TestConfigYmlNotRead(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "xdg-cache"))
	os.WriteFile("updeb.yml", []byte("cache: site-cache\n"), 0o644)
	code, out, stderr := runCLI(t, "cache", "gc", "--json")
	if code != exitUsage || out != "" || !strings.Contains(stderr, "updeb: error: updeb.yml: updeb reads updeb.yaml, not this file: rename it to updeb.yaml, or name it with --config") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming updeb.yml", code, out, stderr)
	}
	// Named, it is read.
	if code, out, stderr := runCLI(t, "--config", "updeb.yml", "cache", "gc", "--json"); code != 0 || !strings.Contains(out, `"cache": "site-cache"`) {
		t.Errorf("--config updeb.yml: exit %d\n%s%s", code, out, stderr)
	}
}

// TestEmptyFallbackFlagsDocumented: docs/configuration.md names every flag
// that cannot be given empty.
func TestEmptyFallbackFlagsDocumented(t *testing.T) {
	doc := readDoc(t, "docs/configuration.md")
	_, para, _ := strings.Cut(doc, "cannot be given empty:")
	para, _, _ = strings.Cut(para, "\n\n")
	for _, name := range fallbackFlags {
		if !strings.Contains(para, "`--"+name+"`") {
			t.Errorf("docs/configuration.md does not name --%s among the flags that cannot be given empty", name)
		}
	}
}

// TestGlobalFallbackFlagsSayDefault: a global flag whose value otherwise
// comes from the config or a default says which in its help (and so in
// docs/commands): an operator who leaves it out learns where the files go.
func TestGlobalFallbackFlagsSayDefault(t *testing.T) {
	root := newRootCmd(&globalOptions{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
	for _, name := range fallbackFlags {
		f := root.PersistentFlags().Lookup(name)
		if f != nil && f.DefValue == "" && !strings.Contains(f.Usage, "default") {
			t.Errorf("--%s: its help (%q) does not say what it is when not given", name, f.Usage)
		}
	}
}

// TestNoArgumentsSaidSo: an argument to a command that takes none is named
// as such (exit 2), not as an unknown command.
func TestNoArgumentsSaidSo(t *testing.T) {
	for _, args := range [][]string{{"compat", "release-sets.yaml"}, {"repo", "list", "production"}} {
		code, _, stderr := runCLI(t, args...)
		want := fmt.Sprintf("updeb %s takes no arguments, got %q", strings.Join(args[:len(args)-1], " "), args[len(args)-1])
		if code != exitUsage || !strings.Contains(stderr, want) || strings.Contains(stderr, "unknown command") {
			t.Errorf("%v: exit %d, want %q\n%s", args, code, want, stderr)
		}
	}
}

// TestVerboseAndQuiet: -v and -q together are refused (exit 2): debug lines
// on a stderr that -q promises holds only errors would be neither.
func TestVerboseAndQuiet(t *testing.T) {
	for _, args := range [][]string{{"-v", "-q", "version"}, {"version", "--quiet", "--verbose"}} {
		code, stdout, stderr := runCLI(t, args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "contradict each other") {
			t.Errorf("%v: exit %d, stdout %q\n%s", args, code, stdout, stderr)
		}
	}
}

// A config file the user names that cannot be read is exit 2 naming it,
// also for the commands that use nothing of it; help is not held up.
func TestNamedConfigIsRead(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such.yaml")
	for _, args := range [][]string{{"lint"}, {"version"}, {"inspect", "x.deb"}, {"keys", "list", "k.asc"}} {
		code, _, stderr := runCLI(t, append([]string{"--config", missing}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, missing) {
			t.Errorf("%v: exit %d, want %d naming %s\n%s", args, code, exitUsage, missing, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "--config", missing, "help", "lint"); code != 0 {
		t.Errorf("help: exit %d\n%s", code, stderr)
	}
}

// TestUnreadableConfigHint: a config file this user may not read (for root,
// whom modes do not stop, a write-only sysctl) is exit 2 with the hint for
// a file updeb may not open, not "fix the config file", whose text is fine.
func TestUnreadableConfigHint(t *testing.T) {
	unreadable := filepath.Join(t.TempDir(), "updeb.yaml")
	if err := os.WriteFile(unreadable, []byte("fetch: {retries: 1}\n"), 0); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		unreadable = "/proc/sys/vm/drop_caches"
	}
	code, _, stderr := runCLI(t, "--config", unreadable, "lint")
	if code != exitUsage || !strings.Contains(stderr, unreadable+": cannot read the config file: permission denied\nupdeb: hint: updeb runs as uid ") {
		t.Errorf("exit %d, want %d with the hint for a file this user may not read\n%s", code, exitUsage, stderr)
	}
}

// TestUsageHintNamesTheCommand: the hint under a bad flag or argument names
// the command's own help, by its whole path (updeb help repo list, not
// updeb help list, which is no command and shows the top help), and the top
// help for a flag the top level does not know.
func TestUsageHintNamesTheCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"repo", "list", "--repo"}, "see 'updeb help repo list'"},
		{[]string{"repo", "gc", "--bogus"}, "see 'updeb help repo gc'"},
		{[]string{"keys", "list", "-x"}, "see 'updeb help keys list'"},
		{[]string{"build", "--bogus"}, "see 'updeb help build'"},
		{[]string{"repo", "history", "a", "b"}, "see 'updeb help repo history'"},
		{[]string{"--bogus"}, "see 'updeb --help'"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, "updeb: hint: "+c.hint+"\n") {
			t.Errorf("updeb %s: exit %d, want %d and the hint %q:\n%s", strings.Join(c.args, " "), code, exitUsage, c.hint, stderr)
		}
	}
}

// TestCommandAfterDoubleDash: a command after "--" is an argument, and the
// error says so and where "--" goes; it said 'unknown command "lint"' and
// 'did you mean lint?'.
func TestCommandAfterDoubleDash(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "lint"}, "updeb: error: \"lint\" after \"--\" is read as an argument of updeb, not as the command updeb lint\nupdeb: hint: put \"--\" after the command and its flags: updeb lint [flags] -- ARG...\n"},
		{[]string{"repo", "--", "list"}, "updeb: error: \"list\" after \"--\" is read as an argument of updeb repo, not as the command updeb repo list\nupdeb: hint: put \"--\" after the command and its flags: updeb repo list [flags] -- ARG...\n"},
	} {
		if code, stdout, stderr := runCLI(t, c.args...); code != exitUsage || stdout != "" || stderr != c.want {
			t.Errorf("updeb %s: exit %d, want %d\n%s%s\nwant stderr:\n%s", strings.Join(c.args, " "), code, exitUsage, stdout, stderr, c.want)
		}
	}
}

// TestHelpUnknownCommand: help for a command that does not exist is a usage
// error with a suggestion, as the command itself would be, not the top
// help and exit 0; help for a command that exists still works.
func TestHelpUnknownCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "buld"}, `unknown command "buld" for "updeb"`},
		{[]string{"help", "repo", "lst"}, `unknown command "lst" for "updeb repo"`},
		// cobra adds completion when the command runs, after the refusal
		// was set up on every group: 'completion bsh' printed the help,
		// exit 0 (a script sourcing its output got the help text).
		{[]string{"completion", "bsh"}, `unknown command "bsh" for "updeb completion"`},
		{[]string{"help", "completion", "zssh"}, `unknown command "zssh" for "updeb completion"`},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "did you mean") {
			t.Errorf("updeb %s: exit %d, want %d and %q:\n%s%s", strings.Join(c.args, " "), code, exitUsage, c.want, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"help"}, {"help", "repo"}, {"help", "repo", "list"}, {"help", "completion", "bash"}} {
		if code, stdout, stderr := runCLI(t, args...); code != 0 || !strings.Contains(stdout, "Usage:") {
			t.Errorf("updeb %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}
