// Package datafile holds what the bundled data files (internal/eol/data,
// internal/compat/data) share: their header comment names the source and snapshot.
package datafile

import "strings"

// Header returns the leading comment block of a YAML file, with each line's
// "#" and one following space removed, and outer blank lines trimmed.
func Header(b []byte) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		s := strings.TrimSpace(l)
		if !strings.HasPrefix(s, "#") {
			break
		}
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(s, "#"), " "))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
