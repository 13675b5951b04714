package report

import (
	"bytes"
	"context"

	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/csvsafe"
	"github.com/updeb/updeb/pkg/lockfile"
)

// Files are the files Write writes into its folder, in order.
var Files = []string{"index.html", "report.json", "recipes.csv", "actions.csv", "sets.csv", "data.csv", "suites.csv", "packages.csv", "pending.csv"}

// Write writes the page, the JSON and the CSV files into dir (made when
// missing, 0755 whatever the umask: a web server running as another user
// serves it), each atomically (a reader sees the old file or the new one)
// and all together (atomicfile.CommitAll: every file is written before the
// first is renamed into place), one Write at a time (a lock on dir, waited
// for until ctx is done: an interrupt stops the wait).
func Write(ctx context.Context, dir string, r *Report) error {
	if err := atomicfile.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report folder %s: %w", dir, err)
	}
	writers := map[string]func(io.Writer, *Report) error{
		"index.html": WriteHTML, "report.json": WriteJSON, "recipes.csv": recipesCSV, "actions.csv": actionsCSV,
		"sets.csv": func(w io.Writer, r *Report) error { return compat.Render(w, r.Compat, compat.FormatCSV) },
		"data.csv": dataCSV, "suites.csv": suitesCSV, "packages.csv": packagesCSV, "pending.csv": pendingCSV,
	}
	// Every file is made before any is written, as valid UTF-8 (bad bytes
	// U+FFFD, as encoding/json makes them in report.json): a server's
	// message in Latin-1 (a proxy's error page) would make the page and
	// the CSV files unreadable to a UTF-8 reader (Python's csv module).
	out := make([][]byte, len(Files))
	for i, name := range Files {
		var b bytes.Buffer
		if err := writers[name](&b, r); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		out[i] = bytes.ToValidUTF8(b.Bytes(), []byte("\uFFFD"))
	}
	// One Write at a time in the folder, so that two runs never leave a
	// mix of their files; the temporary files there are then killed runs'.
	lock, err := lockfile.AcquireDir(ctx, dir, 100*time.Millisecond)
	if err != nil {
		return fmt.Errorf("report folder %s: %w", dir, err)
	}
	defer lock.Unlock()
	atomicfile.RemoveLeftovers(dir, Files...)
	var temps []*atomicfile.File
	defer func() {
		for _, t := range temps {
			t.Abort()
		}
	}()
	for i, name := range Files {
		t, err := atomicfile.Create(filepath.Join(dir, name), 0o644)
		if err == nil {
			temps = append(temps, t)
			_, err = t.Write(out[i])
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
		}
	}
	if err := atomicfile.CommitAll(temps); err != nil {
		return fmt.Errorf("writing the report into %s: %w", dir, err)
	}
	return nil
}

// WriteJSON writes the report as one indented JSON object.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func writeCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csvsafe.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

func recipesCSV(w io.Writer, r *Report) error {
	var rows [][]string
	for _, x := range r.Recipes {
		rows = append(rows, []string{x.Name, x.Component, x.Version, x.Newest, x.Latest, strconv.FormatBool(x.Behind), x.Unknown, x.State, x.Support, x.Action})
	}
	return writeCSV(w, []string{"recipe", "component", "version", "newest_in_track", "newest", "behind", "unknown", "state", "support", "action"}, rows)
}

func actionsCSV(w io.Writer, r *Report) error {
	var rows [][]string
	for _, a := range r.Plan.Actions {
		var breaks, fixes []string
		for _, e := range a.Sets {
			if len(e.Breaks) > 0 {
				breaks = append(breaks, e.Set)
			}
			if len(e.Fixes) > 0 {
				fixes = append(fixes, e.Set)
			}
		}
		rows = append(rows, []string{a.Kind, a.Component, a.Recipe, a.NewRecipe, a.From, a.Version, a.ReleaseDate, a.Command, strings.Join(breaks, " "), strings.Join(fixes, " "), a.Reason})
	}
	return writeCSV(w, []string{"kind", "component", "recipe", "new_recipe", "from", "to", "release_date", "command", "breaks", "fixes", "reason"}, rows)
}

func dataCSV(w io.Writer, r *Report) error {
	var rows [][]string
	for _, t := range r.Data {
		// A table without a date has no age: an empty cell, as the page's
		// "unknown", where a 0 would read as fresh.
		age := ""
		if t.AsOf != "" {
			age = strconv.Itoa(t.AgeDays)
		}
		rows = append(rows, []string{t.Name, t.Copy, t.AsOf, age})
	}
	return writeCSV(w, []string{"table", "copy", "as_of", "age_days"}, rows)
}

func suitesCSV(w io.Writer, r *Report) error {
	var rows [][]string
	if r.Repository != nil {
		for _, s := range r.Repository.Suites {
			// A Release without a Valid-Until never expires: empty cells,
			// where a 0 would read as expiring now.
			until, left := "", ""
			if !s.ValidUntil.IsZero() {
				until, left = s.ValidUntil.Format(time.RFC3339), strconv.FormatInt(s.ExpiresIn, 10)
			}
			var comps []string
			for _, c := range s.Components {
				comps = append(comps, c.Name)
			}
			rows = append(rows, []string{s.Name, strconv.Itoa(s.Generation), s.Date.Format(time.RFC3339), until, left, strings.Join(comps, " ")})
		}
	}
	return writeCSV(w, []string{"suite", "generation", "date", "valid_until", "expires_in_seconds", "components"}, rows)
}

func packagesCSV(w io.Writer, r *Report) error {
	var rows [][]string
	if r.Repository != nil {
		for _, s := range r.Repository.Suites {
			for _, c := range s.Components {
				for _, p := range c.Packages {
					rows = append(rows, []string{s.Name, c.Name, p.Name, p.Version, strings.Join(p.Architectures, " ")})
				}
			}
		}
	}
	return writeCSV(w, []string{"suite", "component", "package", "version", "architectures"}, rows)
}

func pendingCSV(w io.Writer, r *Report) error {
	var rows [][]string
	if r.Repository != nil {
		for _, p := range r.Repository.Pending {
			rows = append(rows, []string{p.Package, p.Component, p.Staging, p.Production})
		}
	}
	return writeCSV(w, []string{"package", "component", "staging", "production"}, rows)
}
