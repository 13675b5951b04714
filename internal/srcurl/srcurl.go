// Package srcurl is the one grammar of the URLs updeb downloads: recipe
// sources, signatures, checksum files, watch pages and `updeb fetch URL`. Lint
// and the fetcher both call Check, so lint refuses exactly what a build would.
//
// A URL is refused unless it is printable ASCII (no control characters, spaces
// or other bytes that need percent-encoding), http or https with a host (and
// a port, if any, from 1 to 65535), no user name or password and no fragment,
// and its path is canonical: no empty, "." or ".." segment, however it is
// spelled. A segment is judged after full percent-decoding (repeated, so
// %252e%252e counts as ..), with an encoded "/" taken as a separator and
// ";parameters" dropped, and must then be printable ASCII without "\".
// Mirrors map a URL's path below a folder or an internal URL (package fetch):
// with this grammar no spelling of the path can climb out of it.
package srcurl

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/updeb/updeb/pkg/utf8cut"
	"github.com/updeb/updeb/pkg/weblink"
)

// MaxLen is the longest URL accepted.
const MaxLen = 4096

// ErrInvalid is wrapped by every refusal.
var ErrInvalid = errors.New("not an acceptable download URL")

// Error says why a URL is refused.
type Error struct {
	URL    string
	Reason string
}

func (e *Error) Error() string {
	u := Redact(e.URL)
	if len(u) > 200 {
		u = utf8cut.Prefix(u, 200) + "..."
	}
	return fmt.Sprintf("%q is not an acceptable download URL: %s", u, e.Reason)
}

// Redact hides the password of a URL that may not parse (so that
// url.URL.Redacted cannot) before an error or a log prints it: what follows
// the first ":" of the user information, up to its last "@", becomes xxxxx,
// and so does the user name where the password is empty ("TOKEN:@").
// Any "@" after the scheme counts, one in a path too: a password may hold
// "/" unencoded, and hiding too much is better than printing it. The values
// of query parameters that carry a credential become xxxxx too
// (weblink.RedactQuery).
func Redact(s string) string {
	return weblink.RedactQuery(redactPassword(s))
}

// redactPassword is Redact's part for the user information.
func redactPassword(s string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	at := strings.LastIndex(s[start:], "@")
	if at < 0 {
		return s
	}
	userinfo := s[start : start+at]
	c := strings.Index(userinfo, ":")
	switch {
	case c < 0:
		return s
	case c == len(userinfo)-1:
		// "TOKEN:@": the secret is the user name (curl -u TOKEN:, an API
		// key as a proxy's user).
		return s[:start] + "xxxxx:" + s[start+at:]
	}
	return s[:start] + userinfo[:c+1] + "xxxxx" + s[start+at:]
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Error) Unwrap() error { return ErrInvalid }

// Check returns the parsed URL, or an *Error saying why s is refused.
func Check(s string) (*url.URL, error) {
	bad := func(format string, args ...any) (*url.URL, error) {
		return nil, &Error{URL: s, Reason: fmt.Sprintf(format, args...)}
	}
	if len(s) > MaxLen {
		return bad("longer than %d bytes", MaxLen)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return bad("byte %d is %s; percent-encode it or remove it", i, describe(c))
		}
	}
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		return bad("not an http:// or https:// URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return bad("%v", err)
	}
	switch {
	case u.Host == "" || u.Hostname() == "":
		return bad("no host")
	case u.User != nil:
		return bad("a user name or password does not belong in a download URL")
	case strings.Trim(u.Host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") != "" ||
		!strings.HasPrefix(s[len(u.Scheme)+3:], u.Host):
		return bad("host %q: want a DNS name or an IP address, with an optional port", u.Host)
	case !ValidPort(u.Port()):
		// url.Parse takes any digits; no dial can use the port, and every
		// download of the URL would be retried until its budget is spent.
		return bad("port %s: want a port from 1 to 65535", u.Port())
	case strings.Contains(s, "#"):
		return bad("a fragment (#...) is never sent to the server; remove it")
	}
	path := u.EscapedPath()
	if path == "" {
		return u, nil
	}
	if _, err := Segments(path[1:]); err != nil {
		return bad("path %s", err)
	}
	return u, nil
}

// ValidPort reports whether a URL's port (url.URL.Port) is absent or a
// number from 1 to 65535, one a connection can be made to.
func ValidPort(p string) bool {
	n, err := strconv.Atoi(p)
	return p == "" || (err == nil && n >= 1 && n <= 65535)
}

// Segments splits an escaped URL path (without its leading "/") into its
// percent-decoded segments, refusing what Check refuses in a path. A trailing
// "/" gives a last empty segment; any other empty segment is refused.
func Segments(escaped string) ([]string, error) {
	raw := strings.Split(escaped, "/")
	out := make([]string, 0, len(raw))
	for i, seg := range raw {
		if seg == "" && i == len(raw)-1 {
			out = append(out, "")
			break
		}
		d, err := url.PathUnescape(seg)
		if err != nil {
			return nil, fmt.Errorf("segment %q: %v", seg, err)
		}
		if err := checkSegment(seg); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// checkSegment judges one escaped segment as the most lenient server would
// read it: decoded again and again, an encoded "/" taken as a separator
// (GitHub's kustomize%2Fv5.8.1 tags are real; a file mirror maps them to
// folders), parameters dropped.
func checkSegment(seg string) error {
	full := seg
	for range 8 {
		d, err := url.PathUnescape(full)
		if err != nil || d == full {
			break
		}
		full = d
	}
	for i := 0; i < len(full); i++ {
		switch c := full[i]; {
		case c == '\\':
			return fmt.Errorf("segment %q holds a backslash", seg)
		case c < ' ' || c >= 0x7f:
			return fmt.Errorf("segment %q decodes to %s", seg, describe(c))
		}
	}
	for _, part := range strings.Split(full, "/") {
		name, _, _ := strings.Cut(part, ";")
		if strings.Trim(name, ". ") != "" {
			continue
		}
		if name == "" {
			return fmt.Errorf("has an empty segment in %q (\"//\", an encoded \"/\" at an end, or parameters only)", seg)
		}
		return fmt.Errorf("segment %q holds a dot segment (%q); write the path without \".\" and \"..\"", seg, name)
	}
	return nil
}

func describe(c byte) string {
	switch {
	case c == 0:
		return "NUL"
	case c == '\r':
		return "CR"
	case c == '\n':
		return "LF"
	case c == ' ':
		return "a space"
	case c < ' ' || c == 0x7f:
		return fmt.Sprintf("the control character 0x%02x", c)
	}
	return fmt.Sprintf("the non-ASCII byte 0x%02x", c)
}
