package fetch

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"
)

// NetworkError is a download that failed for good: after the last retry, or at
// once for an answer retrying cannot change (404). The CLI maps it to exit 3.
type NetworkError struct {
	URL      string // the upstream URL asked for
	Target   string // the URL actually requested when a mirror rewrote it, else ""
	Proxy    string // the proxy used, "" for a direct connection
	Attempts int
	Err      error // the last error
}

func (e *NetworkError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fetch %s", e.URL)
	if e.Target != "" {
		fmt.Fprintf(&b, " (mirror %s)", e.Target)
	}
	if e.Proxy != "" {
		fmt.Fprintf(&b, " via proxy %s", e.Proxy)
	} else {
		b.WriteString(" (direct, no proxy)")
	}
	fmt.Fprintf(&b, ": failed after %d attempt", e.Attempts)
	if e.Attempts != 1 {
		b.WriteString("s")
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *NetworkError) Unwrap() error { return e.Err }

// StatusError is an HTTP answer other than 200/206.
type StatusError struct {
	URL        string // the URL that answered, where redirects led (a pre-signed one's signature hidden)
	StatusCode int
	Status     string
	RetryAfter time.Duration // from a 429, 503 or 403's Retry-After, 0 when absent (a 403 is not retried)
	Header     http.Header   // the answer's headers (rate-limit state, ...)
	Body       string        // the start of the answer's body (an API's error message)
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %q", e.URL, e.Status)
}

// ProxyTooBig reports whether the answer is a proxy's refusal of the
// server's answer as too big (squid's X-Squid-Error: ERR_TOO_BIG, at 502
// for headers over its reply_header_max_size): every try gets it again.
func (e *StatusError) ProxyTooBig() bool {
	return strings.HasPrefix(e.Header.Get("X-Squid-Error"), "ERR_TOO_BIG")
}

// ProxyRefusedError is the proxy's answer other than 200 to the CONNECT of
// an https request: 407 (it wants credentials, or refused those in the proxy
// URL), 403 (its rules forbid the host or port), 5xx (it could not reach the
// host). Only a 5xx, 408 or 429 is retried.
type ProxyRefusedError struct {
	Proxy      string // the proxy URL, password hidden
	Host       string // host:port of the CONNECT
	StatusCode int
	Status     string
	Challenges []string // its Proxy-Authenticate headers (a 407 names the schemes it takes)
}

// BasicRefused reports whether the Proxy-Authenticate challenges of a 407
// offer schemes and Basic is none of them (Negotiate, NTLM): credentials in
// the proxy URL, which are sent as Basic, can never satisfy that proxy.
func BasicRefused(challenges []string) bool {
	offered := false
	for _, h := range challenges {
		for c := range strings.SplitSeq(h, ",") {
			scheme, _, _ := strings.Cut(strings.TrimSpace(c), " ")
			if strings.EqualFold(scheme, "Basic") {
				return false
			}
			// An auth-param of the challenge before (realm="x") is no scheme.
			offered = offered || (scheme != "" && !strings.Contains(scheme, "="))
		}
	}
	return offered
}

func (e *ProxyRefusedError) Error() string {
	return fmt.Sprintf("proxy %s answered the CONNECT to %s with %q", e.Proxy, e.Host, e.Status)
}

// DowngradeError is a redirect from https to http, which is always refused.
type DowngradeError struct{ From, To string }

func (e *DowngradeError) Error() string {
	return fmt.Sprintf("refusing redirect from https to plain http: %s -> %s", e.From, e.To)
}

// SizeError is an artifact larger than Options.MaxSize.
type SizeError struct {
	URL   string
	Limit int64
	Size  int64 // the announced Content-Length, or the bytes read when it passed the limit
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%s is larger than the size limit of %d bytes (at least %d bytes)", e.URL, e.Limit, e.Size)
}

// OfflineError lists what offline mode needed but the cache does not hold:
// files it never had (Missing), and files whose cached copy failed its
// digest and was removed (Corrupt).
type OfflineError struct{ Missing, Corrupt []string }

func (e *OfflineError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("%d file(s) not in the cache:\n  %s", len(e.Missing), strings.Join(e.Missing, "\n  ")))
	}
	if len(e.Corrupt) > 0 {
		parts = append(parts, fmt.Sprintf("%d file(s) in the cache failed their digest and were removed:\n  %s", len(e.Corrupt), strings.Join(e.Corrupt, "\n  ")))
	}
	return "offline: " + strings.Join(parts, "\n")
}

// Add merges o's lists into e's, sorted and without repeats.
func (e *OfflineError) Add(o *OfflineError) {
	e.Missing = slices.Compact(slices.Sorted(slices.Values(append(e.Missing, o.Missing...))))
	e.Corrupt = slices.Compact(slices.Sorted(slices.Values(append(e.Corrupt, o.Corrupt...))))
}

// MissingError is a file a file mirror does not hold: nothing to download.
type MissingError struct {
	URL    string // the upstream URL
	Where  string // "mirror file:///srv/mirror/x"
	Folder string // the mirror's folder, when it is not there at all (a stick not mounted), else ""
}

func (e *MissingError) Error() string {
	if e.Folder != "" {
		return fmt.Sprintf("fetch %s: missing from the %s: the mirror folder %s does not exist (a stick or share not mounted? a mistyped to: in mirrors:?)", e.URL, e.Where, e.Folder)
	}
	return fmt.Sprintf("fetch %s: missing from the %s", e.URL, e.Where)
}

// Unwrap makes a MissingError an fs.ErrNotExist.
func (e *MissingError) Unwrap() error { return fs.ErrNotExist }

// ErrCorruptCopy is wrapped (with the *digest.MismatchError) when a
// mirror's copy of a pinned file (a mirror folder's, an HTTP mirror's) is
// not the pinned bytes: the copy carried to the mirror is damaged, or the
// mirror answers with something else (an error page), not (as far as this
// says) the pin.
var ErrCorruptCopy = errors.New("corrupt")

// ErrProxyNotTLS is wrapped when a proxy named https:// answered in plain
// http (HTTPS_PROXY=https://proxy:3128 for a proxy that speaks http, as most
// do): not retried, since every try fails the same.
var ErrProxyNotTLS = errors.New("the proxy does not speak TLS: its URL wants http://, not https://")

// ErrProxyUnreachable is wrapped when nothing answered at the proxy itself
// (connection refused, no route, unknown host) after a few quick tries.
var ErrProxyUnreachable = errors.New("nothing answers at the proxy")

// ErrTooManyRedirects is wrapped when a download is redirected more than 10 times.
var ErrTooManyRedirects = errors.New("fetch: stopped after 10 redirects")

// ErrRedirectScheme is wrapped when a download is redirected to a URL that
// is neither http nor https (file:, data:, ftp:): refused, not retried.
var ErrRedirectScheme = errors.New("refusing redirect to a URL that is neither http nor https")

// ErrBadRedirect is wrapped when a download is redirected to no usable
// URL: a Location that does not parse, or a URL without a host name (which
// dials this machine) or with a port outside 1-65535: refused, not
// retried, since the server answers the same every time.
var ErrBadRedirect = errors.New("refusing redirect to no usable URL")

// ErrRetryTime is wrapped when a download's whole time budget
// (Options.MaxRetryTime, config fetch: retry-time) ran out, in the middle of
// an attempt or between two.
var ErrRetryTime = errors.New("the download's time budget is spent")

// errSlow is wrapped in the cause of an attempt cancelled for receiving less
// than Options.MinRate.
var errSlow = errors.New("transfer too slow")

// errIdle is the cause of an attempt cancelled because no bytes arrived in time.
var errIdle = errors.New("no data received within the idle timeout")
