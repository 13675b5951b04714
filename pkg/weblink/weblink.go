// Package weblink reads RFC 8288 Link headers, as paginated APIs (GitHub's
// REST API) send them, and says how URLs compare and print.
package weblink

import (
	"net/url"
	"slices"
	"strings"
)

// Next extracts the rel="next" target of a Link header ("" when there is
// none): several header lines may be given joined by commas.
func Next(h string) string {
	for _, part := range strings.Split(h, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "rel") && slices.ContainsFunc(strings.Fields(strings.Trim(val, `"`)), isNext) {
				return target[1 : len(target)-1]
			}
		}
	}
	return ""
}

func isNext(rel string) bool { return strings.EqualFold(rel, "next") }

// Port is u's port, or its scheme's default (80 for http, 443 for https):
// https://ghe.example:443/ and https://ghe.example/ are one origin.
func Port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
}

// Host is u's host written one way, as the URLs of one origin may spell it
// otherwise: in lower case, without a final dot, an IPv6 address in
// brackets, and the port only where it is not the scheme's default
// (https://Releases.Example.org.:443/ has the host releases.example.org).
func Host(u *url.URL) string {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 address
	}
	if p := u.Port(); p != "" && p != Port(&url.URL{Scheme: u.Scheme}) {
		host += ":" + p
	}
	return host
}

// SameOrigin says whether a and b are one origin (RFC 6454): the same scheme
// and host, whatever their case, and the same port, a default one named or
// not. A next page of a listing must be on the origin its token is for.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && Port(a) == Port(b)
}

// RedactQuery hides the values of the query parameters of s (a URL that
// may not parse) that carry a credential (secretParam) before an error or
// a log prints it: they become xxxxx, and the rest of s stays as it is.
func RedactQuery(s string) string {
	q := strings.Index(s, "?")
	if q < 0 {
		return s
	}
	query, rest := s[q+1:], ""
	if h := strings.Index(query, "#"); h >= 0 {
		query, rest = query[:h], query[h:]
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		if name, _, ok := strings.Cut(p, "="); ok && secretParam(name) {
			params[i] = name + "=xxxxx"
		}
	}
	return s[:q+1] + strings.Join(params, "&") + rest
}

// secretParam reports whether a query parameter's value is a credential:
// the signature of a pre-signed URL, which downloads until it expires (S3's
// X-Amz-Signature and X-Amz-Credential, GCS's X-Goog-Signature, Azure's
// sig and CloudFront's Signature; GitHub's release assets redirect to one,
// with a jwt beside it, and its attestations' bundle_url is one), a token,
// a key or a password.
func secretParam(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	name = strings.ToLower(name)
	for _, w := range []string{"sig", "credential", "token", "jwt", "key", "secret", "password", "auth"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
