// Package dirglob lists the entries of one folder whose names match a
// pattern: filepath.Glob with the folder's own path taken literally, so that
// a folder named "/srv/recipes [old]" or "out*" is not read as a pattern
// (which matched nothing, or other folders).
package dirglob

import (
	"path/filepath"
	"strings"
)

// Glob returns the paths dir/NAME of the entries of dir whose NAME matches
// pattern (filepath.Match syntax), as filepath.Glob does: sorted, nil when
// none, and an error only for a malformed pattern.
func Glob(dir, pattern string) ([]string, error) {
	return filepath.Glob(filepath.Join(escape(dir), pattern))
}

// escape quotes the characters filepath.Match reads as a pattern's.
func escape(path string) string {
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
