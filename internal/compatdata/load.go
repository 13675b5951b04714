package compatdata

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/yamlfile"
)

// data/compat.yaml is the bundled copy: snapshots of upstream's tables, with
// where each was copied from (its header and each table's source) and when.
//
//go:embed data/compat.yaml
var embedded []byte

// File is the refreshed copy's path inside the state folder.
var File = filepath.Join("support", "compat.yaml")

// RepositoryFile is the name of a recipes repository's data file (beside
// release-sets.yaml, in the folder that holds the recipes folder) unless the
// config names another (data: file:).
const RepositoryFile = "compat-data.yaml"

// Bundled parses the bundled copy; every table is in it.
func Bundled() (*Tables, error) {
	t, err := Parse("compat.yaml", embedded)
	if err != nil {
		return nil, err
	}
	t.setCopy(bundledCopy)
	return t, nil
}

// bundledCopy is the Copy of a table read from the bundled copy.
const bundledCopy = "bundled"

// setCopy records name as the copy of every table.
func (t *Tables) setCopy(name string) {
	for _, tb := range t.tables {
		tb.Copy = name
	}
}

// Set is the data a command checks against: every table and the end-of-life
// data, each with where it came from.
type Set struct {
	Tables *Tables
	EOL    *supportdata.Copy
	// Repository is the repository's data file in use, "" when none.
	Repository string
}

// Load returns the data to use, and a warning for every copy passed over.
//
// When repository (a recipes repository's data file) exists, it is used:
// its tables (any table it lacks from the bundled copy) and its end-of-life
// data (when it holds none, supportdata.Load's) — the same answer on every
// machine for the same commit. A repository file that does not parse is an
// error (ErrFile): falling back would give another answer on another machine.
//
// Otherwise each table is the newer of the state folder's refreshed copy
// (stateDir/File, when it parses and is not dated after today) and the
// bundled copy, by the table's own as_of (newerTables); the end-of-life data
// is supportdata.Load's.
func Load(stateDir, repository string) (*Set, []string, error) {
	bundled, err := Bundled()
	if err != nil {
		return nil, nil, fmt.Errorf("bundled compatibility tables: %w", err)
	}
	if repository != "" {
		b, err := yamlfile.ReadFile(repository, 0)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, nil, err
		default:
			return loadRepository(repository, b, bundled, stateDir)
		}
	}
	eol, warnings, err := supportdata.Load(stateDir)
	if err != nil {
		return nil, nil, err
	}
	set := &Set{Tables: bundled, EOL: eol}
	if stateDir == "" {
		return set, warnings, nil
	}
	path := filepath.Join(stateDir, File)
	refreshed, err := readCopy(path)
	now := time.Now()
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		warnings = append(warnings, fmt.Sprintf("the refreshed compatibility tables cannot be used (%v); using the bundled copy: run 'updeb data refresh'", err))
	case supportdata.AfterToday(refreshed.newest(), now):
		warnings = append(warnings, supportdata.FutureCopy("compatibility tables", path, refreshed.newest(), now))
	default:
		set.Tables, warnings = newerTables(path, refreshed, bundled, warnings)
	}
	return set, warnings, nil
}

// newerTables takes each table from whichever of the refreshed copy (read
// from path) and the bundled one has it newer by the table's own as_of: a
// refresh of some tables (--table) carries the others as they were, so
// after an upgrade of updeb the file can hold tables both newer and older
// than the bundled ones. A table of the same date is the bundled snapshot
// the refresh carried: bundled. The refreshed tables passed over as older
// are a warning (the next refresh of the state folder drops them).
func newerTables(path string, refreshed, bundled *Tables, warnings []string) (*Tables, []string) {
	refreshed.setCopy("refreshed " + path)
	var older []string
	for _, name := range Names() {
		r, b := refreshed.tables[name], bundled.tables[name]
		switch {
		case r == nil:
		case r.AsOf.After(b.AsOf):
			continue
		case r.AsOf.Before(b.AsOf):
			older = append(older, fmt.Sprintf("%s (as of %s, bundled %s)", name, r.AsOf.Format(time.DateOnly), b.AsOf.Format(time.DateOnly)))
		}
		refreshed.tables[name] = b
	}
	if len(older) > 0 {
		warnings = append(warnings, fmt.Sprintf("the refreshed compatibility tables %s hold tables older than the bundled copy's: %s; using the bundled ones (the next 'updeb data refresh' drops them)",
			path, strings.Join(older, ", ")))
	}
	return refreshed, warnings
}

// loadRepository reads a repository's data file.
func loadRepository(path string, b []byte, bundled *Tables, stateDir string) (*Set, []string, error) {
	t, err := Parse(path, b)
	if err != nil {
		return nil, nil, err
	}
	t.setCopy("repository " + path)
	// Used all the same (it is the repository's reviewed copy), but its age
	// cannot be told: stale (Status), until a refresh dates it anew.
	var warnings []string
	newest := t.newest()
	if t.EOL != nil && t.EOL.AsOf.After(newest) {
		newest = t.EOL.AsOf
	}
	if now := time.Now(); supportdata.AfterToday(newest, now) {
		warnings = append(warnings, fmt.Sprintf("the repository data file %s is as of %s, after today (%s): it was written with a wrong clock, and counts as stale: run 'updeb data refresh --write %s'",
			path, newest.UTC().Format(time.DateOnly), now.UTC().Format(time.DateOnly), path))
	}
	t.fillFrom(bundled)
	set := &Set{Tables: t, Repository: path}
	if t.EOL != nil {
		set.EOL = &supportdata.Copy{Data: t.EOL, Path: path, Repository: true}
		return set, warnings, nil
	}
	eol, eolWarnings, err := supportdata.Load(stateDir)
	if err != nil {
		return nil, nil, err
	}
	set.EOL = eol
	return set, append(append(warnings, eolWarnings...), fmt.Sprintf("%s holds no end-of-life data (endoflife:); using the %s end-of-life data: run 'updeb data refresh --write %s'", path, eol.Name(), path)), nil
}

// readCopy reads and parses a data file.
func readCopy(path string) (*Tables, error) {
	b, err := yamlfile.ReadFile(path, 0)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// newest is the latest date t carries: its "As of:" line's or a table's.
func (t *Tables) newest() time.Time {
	n := t.AsOf
	for _, tb := range t.tables {
		if tb.AsOf.After(n) {
			n = tb.AsOf
		}
	}
	return n
}

// fillFrom takes every table t lacks from other.
func (t *Tables) fillFrom(other *Tables) {
	for name, tb := range other.tables {
		if t.tables[name] == nil {
			t.tables[name] = tb
		}
	}
}

// Exists reports whether path names an existing file (a repository's data
// file is used when it does).
func Exists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
