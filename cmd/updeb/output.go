package main

import (
	"encoding/json"
	"io"
)

// writeJSON is every command's --json output: indented, and without HTML
// escaping, so that "Name <email>" stays readable for people and jq alike.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
