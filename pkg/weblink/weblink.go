// Package weblink reads RFC 8288 Link headers, as paginated APIs (GitHub's
// REST API) send them.
package weblink

import (
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
