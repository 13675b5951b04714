package main

// The support data and compatibility tables as the commands that read them
// (outdated, compat, plan, data status) load them.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/pkg/plural"
)

// repositoryDataFile is the recipes repository's data file: data: file: in
// the config, else compat-data.yaml in the folder that holds the recipes folder.
func (g *globalOptions) repositoryDataFile(cfg *config.Config) string {
	if cfg.Data.File != "" {
		return cfg.Data.File
	}
	return filepath.Join(filepath.Dir(filepath.Clean(g.recipesDir)), compatdata.RepositoryFile)
}

// missingDataFile is the file data: file: names when it does not exist
// ("" when the config names none, or it exists): the commands then read the
// other copies, and the first 'data refresh --write' creates it.
func missingDataFile(cfg *config.Config) string {
	if cfg.Data.File == "" {
		return ""
	}
	if _, err := os.Stat(cfg.Data.File); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return cfg.Data.File
}

// configPosition is where data: file: is written: CONFIG:LINE.
func configPosition(cfg *config.Config) string {
	if cfg.Data.FileLine == 0 {
		return cfg.File
	}
	return fmt.Sprintf("%s:%d", cfg.File, cfg.Data.FileLine)
}

// dataSet loads the data tables the commands use (compatdata.Load): the
// recipes repository's data file when there is one, else, table by table,
// the newer of the bundled and the state folder's copies. It notes which copy of the
// end-of-life data is used (and, with tables, which copy of the
// compatibility tables) and how old, and warns through the logger about what
// is older than the config allows. Without a state folder (no HOME) the bundled copies are used.
func (g *globalOptions) dataSet(cfg *config.Config, now time.Time, tables bool) (*compatdata.Set, error) {
	state, err := g.stateDirFor(cfg)
	if err != nil {
		state = ""
	}
	repo := g.repositoryDataFile(cfg)
	set, warnings, err := compatdata.Load(state, repo)
	if err != nil {
		return nil, invalidInput(err, "fix "+repo+" (its overrides: each needs a reason:), or write it anew with 'updeb data refresh --write "+repo+"'")
	}
	for _, w := range warnings {
		g.warnf("%s", w)
	}
	if missing := missingDataFile(cfg); missing != "" && !g.dataFileWarned {
		// A typo in data: file: would otherwise go unnoticed for months,
		// the bundled and refreshed copies standing in without a word.
		g.dataFileWarned = true
		instead := "the support data's " + set.EOL.Name() + " copy"
		if tables {
			instead += " and, table by table, the newer of the bundled and refreshed compatibility tables"
		}
		g.warnf("%s: data: file: names %s, which does not exist; using instead %s; fix the path, or run 'updeb data refresh --write %s' to create it",
			configPosition(cfg), missing, instead, missing)
	}
	refresh := "updeb data refresh"
	if set.Repository != "" {
		refresh += " --write " + set.Repository
	}
	maxDays := plural.Days(int(cfg.Data.MaxAge().Hours() / 24))
	g.note("support data: %s", set.EOL.Describe(now))
	// Data dated after today is stale too, but not old: the clock that
	// dated it, or this one, is wrong; "older than 30 days" beside "0 days
	// old" would send the reader looking for a refresh that never was.
	clockHint := "the clock of the machine that wrote it, or this one's, is wrong; it counts as stale"
	switch {
	case supportdata.AfterToday(set.EOL.Data.AsOf, time.Now()):
		g.warnf("the support data is dated after today (as of %s; %s): run '%s'", set.EOL.Data.AsOf.Format(time.DateOnly), clockHint, refresh)
	case set.EOL.Stale(now, cfg.Data.MaxAge()):
		g.warnf("the support data is older than %s (data: max-age-days:): run '%s'", maxDays, refresh)
	}
	if !tables {
		return set, nil
	}
	st := set.Status(now, cfg.Data.MaxAge())[1:]
	var copies, stale, ahead []string
	for _, t := range st {
		if !slices.Contains(copies, t.Copy) {
			copies = append(copies, t.Copy)
		}
		switch table := fmt.Sprintf("%s (as of %s)", t.Table, t.AsOf.Format(time.DateOnly)); {
		case t.Stale && supportdata.AfterToday(t.AsOf, time.Now()):
			ahead = append(ahead, table)
		case t.Stale:
			stale = append(stale, table)
		}
	}
	g.note("compatibility tables: %s copy ('updeb data status' lists each table's date)", strings.Join(copies, " and "))
	if len(stale) > 0 {
		g.warnf("compatibility tables older than %s (data: max-age-days:): %s: run '%s'", maxDays, strings.Join(stale, ", "), refresh)
	}
	if len(ahead) > 0 {
		g.warnf("compatibility tables dated after today: %s (%s): run '%s'", strings.Join(ahead, ", "), clockHint, refresh)
	}
	return set, nil
}

// supportData is the end-of-life data of dataSet, for the commands that read
// only that (outdated, plan).
func (g *globalOptions) supportData(cfg *config.Config, now time.Time) (*supportdata.Copy, error) {
	set, err := g.dataSet(cfg, now, false)
	if err != nil {
		return nil, err
	}
	return set.EOL, nil
}
