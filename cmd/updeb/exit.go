package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/console"
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

// Exit codes, as documented in docs/scripting.md ("Exit codes"). exitRules is
// the one place that maps an error to one of them.
const (
	exitOK      = 0 // success
	exitCheck   = 1 // a check failed: signature, checksum, cross-check, verification, a report with failures
	exitUsage   = 2 // usage or invalid input: flags, arguments, recipe, config, a file the user named
	exitNetwork = 3 // network or I/O failure after retries
	// exitInterrupted follows SIGINT or SIGTERM (128 + SIGINT, the shell's
	// convention), whatever the command was doing.
	exitInterrupted = 130
	// exitClosedPipe is the results' reader gone ('updeb repo list | head
	// -1'): 128 + SIGPIPE, what the shell reports for any program a
	// closed pipe stops, and nothing is printed (runOn).
	exitClosedPipe = 141
	// exitQuit follows SIGQUIT (Ctrl-\): every goroutine's stack, then
	// 128 + SIGQUIT at once (dumpOnQuit).
	exitQuit = 131
)

// exitDefault is the code of an error no rule matches: a failure nobody
// anticipated is never success, and not a network failure a caller would
// retry, so it is 1, a failure someone must look at (the message says what).
const exitDefault = exitCheck

// The libraries cannot know two things only a command knows: that a value or
// file came from the user (a flag, an argument, the --config or --set file),
// and that a report the command printed holds failures. The command says so
// with one of these two errors; exitRules maps them like any other.

// inputError is invalid input from the user: a bad flag or argument, or a file
// the user named that cannot be read or used. Exit 2.
type inputError struct {
	err  error
	hint string
}

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// failedError is a check the command ran whose findings it printed: a
// compatibility violation, a recipe behind its track under --exit-code. Exit 1.
type failedError struct {
	err  error
	hint string
}

func (e *failedError) Error() string { return e.err.Error() }
func (e *failedError) Unwrap() error { return e.err }

// changedError is not a failure: a command (plan --apply) wrote changes for
// someone to review and commit. Exit 1, printed as a notice, not an error.
type changedError struct {
	n       int
	message string // the change description written, "" for none
}

func (e *changedError) Error() string {
	s := fmt.Sprintf("%d change(s) written", e.n)
	if e.message != "" {
		s += "; the change description is in " + e.message
	}
	return s
}

// stdoutError is a write to stdout that failed: the command's results, or
// some of them, are lost (exit 3), whatever else it did.
type stdoutError struct{ err error }

func (e *stdoutError) Error() string {
	return "the results could not be written to stdout: " + e.err.Error()
}
func (e *stdoutError) Unwrap() error { return e.err }

// invalidInput marks err as the user's input (exit 2), with a hint that may be empty.
func invalidInput(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &inputError{err: err, hint: hint}
}

// usageErrorf reports bad flags or arguments (exit 2).
func usageErrorf(format string, args ...any) error {
	return &inputError{err: fmt.Errorf(format, args...)}
}

// checkFailed reports the failures of a report the command printed (exit 1).
func checkFailed(err error, hint string) error {
	return &failedError{err: err, hint: hint}
}

// exitRule maps the errors it matches to an exit code and a hint for the user.
type exitRule struct {
	code  int
	match func(error) (hint string, ok bool)
}

// is matches errors wrapping target.
func is(target error, code int, hint string) exitRule {
	return exitRule{code, func(err error) (string, bool) { return hint, errors.Is(err, target) }}
}

// as matches errors of type E; hint may look at the error found.
func as[E error](code int, hint func(E) string) exitRule {
	return exitRule{code, func(err error) (string, bool) {
		e, ok := errors.AsType[E](err)
		if !ok {
			return "", false
		}
		return hint(e), true
	}}
}

// asIf matches errors of type E for which pred holds.
func asIf[E error](code int, pred func(E) bool, hint string) exitRule {
	return exitRule{code, func(err error) (string, bool) {
		e, ok := errors.AsType[E](err)
		return hint, ok && pred(e)
	}}
}

func fixed[E error](hint string) func(E) string { return func(E) string { return hint } }

// hintProxyAuth is the hint for a proxy that answered 407.
const hintProxyAuth = "the proxy wants credentials, or refused those given: put them in the proxy URL, http://USER:PASSWORD@HOST:PORT (percent-encode @ : / % in them), in --proxy, proxy: in the config or HTTPS_PROXY"

// hintProxyAuthScheme is the hint for a proxy that answered 407 offering
// no Basic authentication (fetch.BasicRefused).
const hintProxyAuthScheme = "the proxy takes no Basic credentials (its Proxy-Authenticate offers only other schemes, such as Negotiate, NTLM or Digest), and credentials in the proxy URL are sent as Basic: giving them again will not help. Point updeb at a local proxy that logs in for it (cntlm, px), or have the proxy accept Basic"

const (
	hintSource   = "a source failed verification: nothing from it was packaged. Check the recipe's pins and the upstream release"
	hintRecipe   = "fix the recipe; 'updeb lint' checks it offline"
	hintUpstream = "the release source answered something unusable; try again later, or check --github-api / watch: url"
	hintRecord   = "a provenance record is the DSSE envelope 'updeb build' writes beside each package (DEB.intoto.json)"
	hintRefused  = "a file updeb was to read lies outside its folder (a symlink out of it) or is not a regular file; nothing was read"
)

// exitRules, first match wins, in this order (docs/scripting.md lists it, and
// TestExitRuleOrderDocumented keeps the two alike): an interruption; what the
// command knows (its usage errors, then its failed reports); a malformed .deb
// (2); then the libraries' errors: failed checks (1) before invalid input (2)
// before network and I/O failures (3), with a cancelled context (130) among
// the last. An error joined from several (one per recipe or job) gets the
// code of the first rule any of them matches, so an alarm is never hidden
// behind a flaky download.
var exitRules = []exitRule{
	// What the command knows.
	as(exitInterrupted, interruptedHint),
	as(exitUsage, func(e *inputError) string { return e.hint }),
	as(exitCheck, func(e *failedError) string { return e.hint }),
	as(exitCheck, fixed[*changedError]("review them (git diff), then commit them")),

	// A .deb that inspect or publish refuses is invalid input (2), even when
	// the refusal is the archive reader's bomb or traversal check, which for
	// an upstream artifact is a failed check (1).
	exitRule{exitUsage, func(err error) (string, bool) {
		return "the package is larger than updeb reads (its entries, sizes or members pass a limit that guards against hostile files); it may be valid: dpkg-deb --info gives a second opinion",
			errors.Is(err, deb.ErrMalformed) && errors.Is(err, archive.ErrLimit)
	}},
	is(deb.ErrMalformed, exitUsage, "the file is not a valid .deb; dpkg-deb --info gives a second opinion"),

	// 1: a check failed.
	is(dsse.ErrUnsigned, exitCheck, "sign provenance records: set build: provenance-key: in updeb.yaml (a key from 'updeb keys generate', such as the repository's) and build again"),
	exitRule{exitCheck, provenanceHint}, // before refusalHint: a record's refusal wraps the signature's
	is(provenance.ErrSubject, exitCheck, "the record is not this package's: the .deb or its record was swapped or changed after the build; trust neither"),
	as(exitCheck, auxHint),
	as(exitCheck, refusalHint),
	as(exitCheck, sigstoreRefusalHint),
	is(sigstore.ErrTUF, exitCheck, "the TUF repository's answer does not verify from its root (expired, wrongly signed, rolled back or altered): nothing was stored, the root in use is unchanged"),
	is(track.ErrUnvouched, exitCheck, "compare these digests with a value from elsewhere (upstream's release notes, a second mirror), then pass them with --sha256/--sha512 [SOURCE:]ARCH=HEX, or say --trust-on-first-use; the recipe records either"),
	is(fetch.ErrCorruptCopy, exitCheck, "the mirror's copy is not the pinned file: nothing was cached or packaged. Bring it over again (a mirror folder: 'updeb mirror export' where there is a way out, then 'updeb mirror verify' here; an HTTP mirror: see what it serves at the URL the error names, an error page or another file, and put the file there)"),
	as(exitCheck, fixed[*digest.MismatchError]("the bytes differ from the pinned digest: nothing was cached or packaged. Check the pin and the upstream release")),
	is(trust.ErrCrossCheck, exitCheck, hintSource),
	is(digest.ErrChecksums, exitCheck, hintSource),
	// Before ErrUnsafe and ErrNotRegular, which it matches: the entry is
	// the file, stored sparse, and no other path of the archive is it.
	is(archive.ErrSparse, exitCheck, "the archive stores that file sparse (tar -S: its runs of zeros left out, with a map of them that tar programs read differently), so its bytes are not one thing to package: updeb cannot package it from this archive. Use another artifact of the release that holds it (a zip, a plain binary, another build), or ask upstream to make the archive without tar's -S/--sparse"),
	// Before ErrUnsafe, which it matches: the source passed verification,
	// and the recipe names an entry that is not the file itself.
	asIf(exitCheck, func(e *archive.Error) bool { return e.Kind == archive.ErrNotRegular && e.Entry != "" },
		"the archive holds that name as a symlink, directory or other entry that is not a regular file: list it (tar -tvf, unzip -Z) and point the recipe's files: path: at the file itself, or find out whether upstream changed its layout"),
	is(archive.ErrUnsafe, exitCheck, hintSource),
	is(archive.ErrCorrupt, exitCheck, hintSource),
	is(archive.ErrMissing, exitCheck, "the archive holds no file of that name: list it (tar -tf, unzip -l) and fix the recipe's files: path:, or find out whether upstream changed its layout"),
	as(exitCheck, fixed[*fetch.SizeError]("raise fetch: max-size: in the config if this artifact really is that large")),
	as(exitCheck, fixed[*fetch.DowngradeError]("the upstream redirected to plain http; updeb never downloads over a downgraded connection")),
	is(fetch.ErrRedirectScheme, exitCheck, "updeb follows redirects to http(s) URLs only; point the recipe at a URL that serves the file"),
	as(exitCheck, fixed[*fetch.MirrorError](hintRefused)),
	is(confined.ErrRefused, exitCheck, hintRefused),
	is(mirror.ErrOutside, exitCheck, "mirror export writes only inside its folder and follows no symlink there: remove the symlink (or use another folder) and export again; nothing was written through it"),
	is(track.ErrNoRelease, exitCheck, "upstream has no complete release of that minor yet: try later, or name one with --to"),
	is(track.ErrAmbiguous, exitCheck, "upstream tagged one version twice, written otherwise: find out which tag it means (its release notes), then bump to it with --to"),
	is(track.ErrIncomplete, exitCheck, "upstream has not uploaded every artifact yet: try later, or --to an older complete version"),
	is(track.ErrReupload, exitCheck, "ALARM: upstream bytes changed for a pinned version. Do not re-pin blindly: find out why (a compromised release?) before anything else"),
	as(exitCheck, func(e *repo.ConflictError) string {
		if e.Given != "" {
			return "the repository is unchanged; publish one of the two .deb files, or rebuild the other with a new version or revision"
		}
		return "the repository is unchanged; give the new build a new version or revision"
	}),
	as(exitCheck, fixed[*repo.FieldChangeError]("a refused suite is unchanged; to make the change anyway, repeat with --allow-field-change")),
	is(gate.ErrFailed, exitCheck, "see the FAIL lines above"),
	is(mirror.ErrFailed, exitCheck, "bring the missing and corrupt files over again: 'updeb mirror export' where there is a way out, then copy the folder whole; one there that could not be read says why (make it readable to the user who builds)"),
	exitRule{exitCheck, func(err error) (string, bool) {
		return "another updeb process held the file's lock for longer than a rewrite waits (a long run, or one stopped with ^Z): let it end (or end it), then run the command again; nothing was written",
			errors.Is(err, yamlfile.ErrNotRewritten) && errors.Is(err, lockfile.ErrHeld) && errors.Is(err, context.DeadlineExceeded)
	}},
	is(yamlfile.ErrChanged, exitCheck, "the file holds another process's change (another updeb, an editor, a git checkout), made while this one wrote it, and nothing of this run: run the command again, which starts from it"),
	is(yamlfile.ErrNotRewritten, exitCheck, "the file was left as it was: the new text would not read back as exactly the new values (line breaks YAML counts that an editor may not show, U+2028, NEL or a lone CR?), or the file changed meanwhile; run again, or make the change by hand"),
	is(supportdata.ErrDropped, exitCheck, "the copy in use was kept. Find out why the data source lost those cycles (a partial mirror?); if they really are gone, run again with --allow-dropped"),
	is(compatdata.ErrDropped, exitCheck, "the copy in use was kept. Find out why upstream's table lost those rows (a partial mirror, a page rewritten?); if they really are gone, run again with --allow-dropped"),

	// 2: usage or invalid input.
	is(recipe.ErrNoMaintainer, exitUsage, "set build: maintainer: \"Name <email>\" in updeb.yaml (or maintainer: in the recipe)"),
	is(recipe.ErrInvalid, exitUsage, hintRecipe),
	is(deb.ErrInvalid, exitUsage, hintRecipe),
	is(archive.ErrWant, exitUsage, hintRecipe),
	is(openpgp.ErrKeyring, exitUsage, "a keyring is armored public key blocks (gpg --armor --export) or a binary keyring (gpg --export)"),
	is(openpgp.ErrPolicy, exitUsage, "a signer is a full primary key fingerprint; see 'updeb keys list'"),
	is(digest.ErrNoPin, exitUsage, ""),
	is(dsse.ErrMalformed, exitUsage, hintRecord),
	is(provenance.ErrRecord, exitUsage, hintRecord),
	is(srcurl.ErrInvalid, exitUsage, "write the URL plainly: http:// or https:// and a host, no user name, password or #fragment, no \"..\" or \".\" segments (however encoded), no control characters or spaces"),
	is(track.ErrNoWatch, exitUsage, "add a watch: section to the recipe (recipes/README.md)"),
	is(track.ErrDowngrade, exitUsage, "bump only moves forward; edit the recipe by hand to go back"),
	is(track.ErrExists, exitUsage, ""),
	is(track.ErrNotVersioned, exitUsage, "a new recipe per minor needs a series named NAME-MAJOR.MINOR; 'updeb bump RECIPE --new-minor MINOR' moves a single recipe in place"),
	is(track.ErrNoDate, exitUsage, "give the upstream release day with --date YYYY-MM-DD"),
	is(track.ErrTarget, exitUsage, ""),
	asIf(exitUsage, func(e *track.APIError) bool { return e.Status == 404 && !e.RateLimit },
		"check watch: github: OWNER/REPO in the recipe (and GITHUB_TOKEN for a private repository)"),
	is(signkey.ErrWeakKey, exitUsage, "generate an Ed25519 key with 'updeb keys generate'"),
	is(repo.ErrClock, exitUsage, "the repository is unchanged"),
	is(signkey.ErrCannotSign, exitUsage, "the file is a usable secret key, but the key cannot sign now (the error says why): if it expired, "+signkey.Renew+"; if it was revoked, rotate to a new key"),
	is(signkey.ErrKey, exitUsage, "a signing key (--key, repo: key:, build: provenance-key:) is the armored secret key 'updeb keys generate' wrote (PREFIX.secret.asc)"),
	is(repo.ErrInvalid, exitUsage, ""),
	is(repo.ErrNotFound, exitUsage, ""),
	is(repo.ErrNotManaged, exitUsage, ""),
	is(mirror.ErrManifest, exitUsage, "name a folder 'updeb mirror export' wrote (it holds updeb-mirror.json), or, to export, a new one"),
	is(gate.ErrBaseRecipe, exitUsage, "the recipe as it was at --base does not load with this updeb (a rule added since it was committed?), so the change cannot be compared with it; --base itself was read. A change that fixes that recipe cannot pass --base: check it with 'updeb verify' without --base and review its version and trust changes by hand"),
	is(gate.ErrBase, exitUsage, "--base must name a commit of the git repository that holds the recipes, and git must be able to read its files (a partial clone fetches them from its remote)"),
	is(sigstore.ErrPolicy, exitUsage, "a Sigstore policy names one identity (exact, or an anchored regexp that matches only the signer) and the OIDC issuer"),
	is(sigstore.ErrTrustedRoot, exitUsage, "a trusted root is Sigstore's trusted_root.json: 'updeb trust refresh' fetches the public-good one"),
	is(trust.ErrNoSigstore, exitUsage, ""),
	is(compatdata.ErrFile, exitUsage, "fix the data file (each override needs a reason:), or write it anew with 'updeb data refresh --write FILE'"),
	is(compatdata.ErrUnknownTable, exitUsage, ""),

	// 3: network or I/O failure after retries. Results lost on the way
	// to stdout first (its disk may be full, but no folder of updeb's),
	// then a full disk: it is never the network's or the proxy's fault,
	// and is not retried.
	asIf(exitClosedPipe, func(e *stdoutError) bool { return errors.Is(e, syscall.EPIPE) }, ""),
	as(exitNetwork, fixed[*stdoutError]("what the command did besides printing is done, but its output is incomplete: send stdout where it can be written (a disk with room) and run the command again to print it")),
	exitRule{exitNetwork, diskFullHint},
	as(exitNetwork, fixed[*track.DayUnknownError]("give the release day with --date YYYY-MM-DD, or try again once the release source answers")),
	asIf(exitNetwork, func(e *track.APIError) bool { return e.Secondary },
		"GitHub's secondary rate limit (too many requests in a short time; GITHUB_TOKEN does not lift it): wait until the time the error names (else a few minutes), then run again"),
	asIf(exitNetwork, func(e *track.APIError) bool { return e.RateLimit && e.Token },
		"GITHUB_TOKEN was sent, and its quota is spent (5000 requests an hour, shared by everything that uses the token): wait until the time the error names, then run again"),
	asIf(exitNetwork, func(e *track.APIError) bool { return e.RateLimit },
		"set GITHUB_TOKEN to a GitHub token: the API allows 60 requests an hour without one, 5000 with one"),
	asIf(exitNetwork, func(e *track.APIError) bool { return e.Status == 401 && !e.Token },
		"the API wants a token and none was sent: set GITHUB_TOKEN (it is sent over https, or plain http to this machine only)"),
	asIf(exitNetwork, func(e *track.APIError) bool { return e.Status == 401 },
		"GitHub refused GITHUB_TOKEN (expired, revoked or mistyped): set a valid token, or unset it (public repositories need none)"),
	asIf(exitNetwork, func(e *track.APIError) bool { return e.Status == 403 && e.Token },
		"GITHUB_TOKEN may not read the repository (GitHub's message says why: a fine-grained token without it, an organization's SAML single sign-on the token is not authorized for, an IP allow list); trying again will not help: grant the token access, or unset it (public repositories need none)"),
	as(exitNetwork, fixed[*track.APIError](hintUpstream)),
	is(track.ErrUpstream, exitNetwork, hintUpstream),
	is(supportdata.ErrAPI, exitNetwork, "the support data source answered something unusable; the copy in use was kept. Check data: endoflife-url: in the config, or try again later"),
	is(compatdata.ErrSource, exitNetwork, "the copy in use was kept. Check data: sources: (and mirrors:) in the config, or try again later; if upstream changed the page's layout, refresh the other tables with --table and report it"),
	as(exitNetwork, fixed[*fetch.OfflineError]("run without --offline to download them, or bring them into the cache or a mirror")),
	as(exitNetwork, func(e *fetch.MissingError) string {
		if e.Folder != "" {
			return "mount the stick or share that holds the mirror folder, or fix the to: of the mirrors: entry in the config; a folder not there lacks no file to export again"
		}
		return "the mirror folder lacks the file: bring it over again ('updeb mirror export' where there is a way out, 'updeb mirror verify' here)"
	}),
	is(fetch.ErrBadRedirect, exitNetwork, "the server redirected to no usable URL (a Location that does not parse, without a host name, or with an impossible port), and will again: it is broken; see where the URL leads with curl -sI URL, and try later or point the recipe at another URL"),
	is(fetch.ErrTooManyRedirects, exitNetwork, "the server answered with redirect after redirect (a loop, or a login page that leads back to itself), not with the file: see where the URL leads with curl -sIL URL"),
	is(fetch.ErrRetryTime, exitNetwork, "the download did not finish within fetch: retry-time; raise it in the config for a slow link, or check the proxy"),
	is(fetch.ErrProxyNotTLS, exitNetwork, "write the proxy's URL with http://, in --proxy, proxy: in the config or HTTPS_PROXY (HTTPS_PROXY names the proxy for https URLs, which go through it encrypted all the same, by CONNECT); https:// is for a proxy reached over TLS"),
	is(fetch.ErrProxyUnreachable, exitNetwork, "nothing answers at that proxy (3 tries over about 3 s, for a proxy being restarted): start it, or fix --proxy, proxy: in the config or HTTPS_PROXY"),
	asIf(exitNetwork, func(e *fetch.ProxyRefusedError) bool {
		return e.StatusCode == http.StatusProxyAuthRequired && fetch.BasicRefused(e.Challenges)
	}, hintProxyAuthScheme),
	asIf(exitNetwork, func(e *fetch.StatusError) bool {
		return e.StatusCode == http.StatusProxyAuthRequired && fetch.BasicRefused(e.Header.Values("Proxy-Authenticate"))
	}, hintProxyAuthScheme),
	asIf(exitNetwork, (*fetch.StatusError).ProxyTooBig,
		"the proxy refused the server's answer as too big (squid's ERR_TOO_BIG: headers over its reply_header_max_size, 64 KB by default, or a body over its reply_body_max_size), and would again: raise that limit in the proxy's configuration, or list the host in no-proxy: if it is reached directly"),
	asIf(exitNetwork, func(e *fetch.ProxyRefusedError) bool { return e.StatusCode == http.StatusProxyAuthRequired }, hintProxyAuth),
	asIf(exitNetwork, func(e *fetch.StatusError) bool { return e.StatusCode == http.StatusProxyAuthRequired }, hintProxyAuth),
	// The server (or a file mirror) answered: no file there. Not the
	// network's fault, nor the proxy's (it does not answer 404 for a host
	// it reached), nor an unreadable file in a mirror folder.
	asIf(exitNetwork, func(e *fetch.StatusError) bool { return e.StatusCode == 404 || e.StatusCode == 410 },
		"the server (or the mirror folder) has no such file: check the URL (the recipe's url: or watch:, a mirrors: entry), or whether upstream moved or removed it; a mirror folder may lack it ('updeb mirror export' brings it over)"),
	as(exitNetwork, fixed[*fetch.ProxyRefusedError]("the proxy refused to connect to that host (its answer, not the upstream's): check the proxy's rules, or list the host in no-proxy: if it is reached directly")),
	as(exitNetwork, fixed[*tls.CertificateVerificationError]("the server's TLS certificate did not verify (not signed by a trusted CA, expired, or for another name); behind a proxy that inspects TLS, add its CA to ca-bundle: in the config. updeb never downloads without verifying TLS")),
	asIf(exitNetwork, func(e *fetch.NetworkError) bool { return strings.HasPrefix(e.Target, "file:") },
		"the mirror folder holds the file, but it could not be read: make it readable to the user who builds (a copy may have kept its owner's modes), or bring it over again ('updeb mirror verify' names each such file)"),
	as(exitNetwork, func(e *fetch.NetworkError) string {
		if e.Proxy == "" {
			return "no proxy was used (direct connection): check that this host reaches it, or give the proxy (--proxy, proxy: in the config, HTTPS_PROXY)"
		}
		return "check the proxy (--proxy, proxy: in the config, HTTPS_PROXY) and that it reaches the host"
	}),
	is(sigstore.ErrNotMirrored, exitNetwork, "the mirror folder lacks the file named: export it again where there is a way out ('updeb mirror export' carries GitHub's attestation answers too), then 'updeb mirror verify' here"),
	is(sigstore.ErrUnavailable, exitNetwork, "Rekor, GitHub's API or the TUF repository could not be asked: check the proxy, mirrors:, and sigstore: rekor-url / github-api in the config (GITHUB_TOKEN raises GitHub's rate limit)"),
	is(context.Canceled, exitInterrupted, "interrupted: run the command again to finish"),
	is(context.DeadlineExceeded, exitNetwork, ""),
	exitRule{exitNetwork, danglingHint},
	exitRule{exitNetwork, pathHint},
	as(exitNetwork, fixed[*fs.PathError]("")),
	as(exitNetwork, fixed[*os.LinkError]("")),
	as(exitNetwork, fixed[*os.SyscallError]("")),
	as(exitNetwork, fixed[syscall.Errno]("")), // before net.Error, which an Errno also is
	as(exitNetwork, fixed[net.Error]("")),
}

// exitStatus returns the exit code for err and the hint to print with it ("" for none).
func exitStatus(err error) (code int, hint string) {
	if err == nil {
		return exitOK, ""
	}
	code, hint = exitDefault, ""
	if i, h := exitRuleFor(err); i >= 0 {
		code, hint = exitRules[i].code, h
	}
	return code, hint
}

// exitRuleFor returns the index of the first rule that matches err (-1 for
// none) and its hint.
func exitRuleFor(err error) (int, string) {
	for i, r := range exitRules {
		if hint, ok := r.match(err); ok {
			return i, hint
		}
	}
	return -1, ""
}

// auxHint is the hint for a signature, checksum or Sigstore file refused
// twice: what the refusal itself suggests, and that the file is gone from
// the cache.
func auxHint(e *source.AuxError) string {
	refetch := "nothing was packaged and the file is no longer cached: run the build again to fetch it anew; if it keeps failing, compare it with upstream's (a proxy may be serving an error page) before touching the recipe"
	if e.Mirrored {
		// Fetched anew, it comes from the same mirror: what helps is
		// the mirror's copy brought up to date.
		refetch += "; it came from a mirror (mirrors: in the config), which serves the same copy again: compare the mirror's copy with upstream's, and bring the mirror up to date (for a mirror folder, updeb mirror export on a host with a way out, then carry it over)"
	}
	var sr *sigstore.RefusedError
	var vr *openpgp.RefusedError
	switch {
	case errors.As(e.Err, &sr):
		return sigstoreRefusalHint(sr) + "; " + refetch
	case errors.As(e.Err, &vr):
		return refusalHint(vr) + "; " + refetch
	}
	return refetch
}

// refusalHint says what to do about a refused signature, from why it was refused.
func refusalHint(re *openpgp.RefusedError) string {
	keyring := re.Keyring
	if keyring == "" {
		keyring = "the keyring"
	}
	switch {
	case re.Has(openpgp.ReasonBadSignature):
		return "the data is not what was signed: re-download both files and compare their sizes and digests with upstream's"
	case re.Has(openpgp.ReasonUnknownSigner):
		return fmt.Sprintf("the signer is not in %s: get the upstream project's current KEYS file and check who signed (gpg --list-packets on the signature)", keyring)
	case re.Has(openpgp.ReasonNotAllowed):
		return "the signer's key is in the keyring but not on the allow-list: add its fingerprint with --signer (a recipe's signers:) only if upstream says it signs releases"
	case re.Has(openpgp.ReasonKeyRevoked):
		return fmt.Sprintf("the signing key was revoked: see 'updeb keys list %s' for when and why, and ask upstream which key signs its releases now (a compromised key's signatures never count again)", keyring)
	case re.Has(openpgp.ReasonKeyExpired):
		return fmt.Sprintf("see 'updeb keys list %s' for the key's dates; a refreshed key from upstream may carry a newer expiry", keyring)
	case re.Has(openpgp.ReasonFuture):
		return "the signature is dated after this machine's time (the error gives both): check this machine's clock (timedatectl); if it is right, ask upstream why the release was signed with a clock ahead"
	case re.Has(openpgp.ReasonMalformed), re.Has(openpgp.ReasonNoSignature):
		subject := "the signature"
		if re.Subject != "" {
			subject = filepath.Base(re.Subject)
		}
		return "is " + subject + " really an OpenPGP signature (.asc/.sig) or a clearsigned file?"
	}
	return "the signature's properties break updeb's policy (see 'updeb help verify-signature')"
}

// sigstoreRefusalHint says what to do about refused Sigstore material, from
// why it was refused.
func sigstoreRefusalHint(re *sigstore.RefusedError) string {
	switch {
	case re.Has(sigstore.ReasonPredicateType):
		// Judged last, once the attestation verified: the signer is the
		// one named, and said something else than how the file was built.
		return "the attestation is the named signer's, but of another kind than build provenance (SLSA): if upstream vouches for its releases with that predicate type, name it in the recipe's signature: predicate-types: (or --sigstore-predicate-type), with https://slsa.dev/provenance/v1 if SLSA provenance counts too"
	case re.Has(sigstore.ReasonIdentity), re.Has(sigstore.ReasonIssuer):
		return "the signer is not the one named (the recipe's identity/issuer or public-key:, or --sigstore-identity/--sigstore-issuer/--sigstore-key): change them only if upstream announced a new signer (see docs/trust.md)"
	case re.Has(sigstore.ReasonDigestMismatch):
		return "the artifact is not what was signed: it was altered, or the signature or bundle belongs to another file"
	case re.Has(sigstore.ReasonUntrustedCertificate):
		return "the certificate does not chain to the trusted root in use ('updeb trust show'): a private Sigstore needs sigstore: trusted-root:, a stale root 'updeb trust refresh'"
	case re.Has(sigstore.ReasonNoTimestamp):
		return "nothing in the material vouches for when it was signed under the trusted root in use ('updeb trust show'): a log entry of a log it lists, or an RFC 3161 timestamp of a timestamp authority it lists; a private Sigstore needs sigstore: trusted-root:"
	case re.Has(sigstore.ReasonNoLogEntry), re.Has(sigstore.ReasonBadLogEntry), re.Has(sigstore.ReasonCertificateTime):
		return "the transparency log does not vouch for this signature: without a valid log entry a keyless signature proves nothing (check sigstore: rekor-url and mirrors: if they point elsewhere)"
	case re.Has(sigstore.ReasonBadSignature):
		return "the signature does not verify over what the material itself names: the signature or envelope was altered after signing; fetch it again, and if it persists do not trust this release"
	case re.Has(sigstore.ReasonKeyValidity):
		return "the signature was made outside the pinned key's validity window: a key used after it was retired or before it was issued vouches for nothing; ask upstream which key signed it"
	case re.Has(sigstore.ReasonNoAttestation):
		return "GitHub holds no attestation of these bytes in that repository: check github-attestations: in the recipe"
	case re.Has(sigstore.ReasonStatementType):
		return "the attestation is well-formed, but its in-toto statement is not of a type updeb reads (Statement v1 or v0.1), so it vouches for no artifact here: verify the signature or attestation upstream makes of the file itself, or ask upstream to attest with in-toto Statement v1"
	case re.Has(sigstore.ReasonUnsupported):
		return "updeb reads cosign's .sig/.cert and Sigstore bundles v0.1 to v0.3 (an attestation's envelope with one signature); the error says what this material is instead: compare with what upstream publishes"
	case re.Has(sigstore.ReasonMalformed):
		return "is it really cosign's .sig/.cert or a Sigstore bundle (v0.1 to v0.3)? compare with what upstream publishes"
	}
	return "the Sigstore material does not verify (see 'updeb help verify-signature')"
}

// diskFullHint names the folder whose disk is full (ENOSPC) or whose quota
// is spent (EDQUOT), wherever the write failed: the cache, the output
// folder, the repository, the state folder.
func diskFullHint(err error) (string, bool) {
	if !diskfull.Is(err) {
		return "", false
	}
	where := "the folder written to"
	if d := diskfull.Dir(err); d != "" {
		where = d
	}
	return fmt.Sprintf("the disk holding %s is full (or its quota is spent): free space there, or point the folder at a bigger disk, then run the command again; what was being written was discarded, nothing partial was kept", where), true
}

// danglingHint explains "mkdir DIR: file exists" where DIR is a symlink to
// a folder that does not exist (a share not mounted): MkdirAll does not
// follow it, and the error does not say so.
func danglingHint(err error) (string, bool) {
	pe, ok := errors.AsType[*fs.PathError](err)
	if !ok || pe.Op != "mkdir" || !errors.Is(pe.Err, fs.ErrExist) {
		return "", false
	}
	target, lerr := os.Readlink(pe.Path)
	if _, serr := os.Stat(pe.Path); lerr != nil || !errors.Is(serr, fs.ErrNotExist) {
		return "", false
	}
	return fmt.Sprintf("%s is a symlink to %s, which does not exist (a share not mounted?): make that folder, or name another", pe.Path, target), true
}

// pathHint says what to do about a file or folder updeb may not read or
// write (EACCES, EPERM: the error names the path, not who updeb runs as),
// one on a read-only file system, or a folder whose path holds a file.
func pathHint(err error) (string, bool) {
	pe, ok := errors.AsType[*fs.PathError](err)
	switch {
	case !ok:
		return "", false
	case errors.Is(pe.Err, syscall.ENOTDIR):
		return fmt.Sprintf("%s, or a folder above it, is a file, not a folder: name a folder (or one to create)", pe.Path), true
	case errors.Is(pe.Err, syscall.EROFS):
		return fmt.Sprintf("%s is on a read-only file system: point the folder at one updeb can write to", pe.Path), true
	case errors.Is(pe.Err, fs.ErrPermission):
		return fmt.Sprintf("updeb runs as uid %d, which may not %s %s (or use the folder above it): give that user access (owner, mode), run updeb as a user who has it, or point the folder elsewhere", os.Geteuid(), pe.Op, pe.Path), true
	}
	return "", false
}

// orPathHint is pathHint's hint for err when it has one (a file updeb may
// not read, say), else hint: for the errors a command marks as input
// (exit 2), whose own hint would otherwise speak of something else.
func orPathHint(err error, hint string) string {
	if h, ok := pathHint(err); ok {
		return h
	}
	return hint
}

// provenanceHint says what to do about a refused provenance record.
func provenanceHint(err error) (string, bool) {
	if !errors.Is(err, provenance.ErrSignature) {
		return "", false
	}
	re, _ := errors.AsType[*openpgp.RefusedError](err)
	switch {
	case re == nil:
		return "the record's key ID names another key than the one that signed it: the record was altered", true
	case re.Has(openpgp.ReasonUnknownSigner), re.Has(openpgp.ReasonNotAllowed):
		return "the record was signed by a key other than the one given: check --key/--keyring (the key of build: provenance-key:, such as the repository's archive-keyring.asc)", true
	case re.Has(openpgp.ReasonBadSignature), re.Has(openpgp.ReasonMalformed), re.Has(openpgp.ReasonNoSignature):
		return "the record was changed after it was signed (or its signature was): trust neither it nor the package; build again", true
	}
	return refusalHint(re), true
}

// printError writes "error: ..." and, when there is one, "hint: ..." lines.
// An error quotes what servers and files said (a GitHub API message, an
// archive's entry name): termtext keeps their escape sequences off the
// terminal. With --log-format json (jsonLog) it is one record like every
// other line of stderr: level ERROR (INFO for a notice), msg, hint and
// exit_code.
func printError(w io.Writer, err error, jsonLog bool) {
	if jsonLog {
		code, hint := exitStatus(err)
		level, args := slog.LevelError, []any{}
		if _, ok := err.(*changedError); ok {
			level = slog.LevelInfo
		}
		if hint != "" {
			args = append(args, "hint", hint)
		}
		slog.New(console.JSONHandler(w, nil)).Log(context.Background(), level, strings.TrimSpace(err.Error()), append(args, "exit_code", code)...)
		return
	}
	if c, ok := err.(*changedError); ok {
		fmt.Fprintf(w, "updeb: %s\n", console.EscapeLines(c.Error())) // a notice: nothing failed
	} else {
		fmt.Fprintf(w, "updeb: error: %s\n", console.EscapeLines(strings.TrimSpace(err.Error())))
	}
	if _, hint := exitStatus(err); hint != "" {
		fmt.Fprintf(w, "updeb: hint: %s\n", console.EscapeLines(hint))
	}
}
