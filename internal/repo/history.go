package repo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/atomicfile"
)

// Record is one generation in a suite's history: when it was made, by which
// operation, and what it changed. Promotions name where the packages came
// from, so the history is the provenance of every package in the suite.
type Record struct {
	Suite      string    `json:"suite"`
	Generation int       `json:"generation"`
	Date       time.Time `json:"date"` // the Release Date
	// Operation is publish, remove, refresh, promote or rollback.
	Operation string `json:"operation"`
	By        string `json:"by,omitempty"` // who ran it (Options.Actor)
	// From is where a promotion's packages come from (SUITE/COMPONENT and its
	// generation), or the generation a rollback returned to.
	From    string  `json:"from,omitempty"`
	Added   []Entry `json:"added,omitempty"`
	Removed []Entry `json:"removed,omitempty"`
	// Settings are the settings the operation changed, as "Field: old -> new".
	Settings    []string   `json:"settings,omitempty"`
	SigningKeys []string   `json:"signing-keys,omitempty"`
	ValidUntil  *time.Time `json:"valid-until,omitempty"`
}

// complete fills what only writeGeneration knows.
func (rec Record) complete(suite string, n int, date time.Time, set Settings, by string) Record {
	rec.Suite, rec.Generation, rec.Date, rec.SigningKeys, rec.By = suite, n, date, set.SigningKeys, by
	if set.ValidFor > 0 {
		vu := date.Add(time.Duration(set.ValidFor))
		rec.ValidUntil = &vu
	}
	return rec
}

// HistoryEntry is a Record as `repo history` shows it: whether the generation
// is live and whether it is still kept (can be rolled back to).
type HistoryEntry struct {
	Record
	Live bool `json:"live"`
	Kept bool `json:"kept"`
}

func (r *Repo) historyFile(suite string) string {
	return filepath.Join(r.root, ".updeb", "history", suite+".jsonl")
}

// appendHistory adds rec to its suite's history, a JSON line per generation,
// before the generation is switched in. A write killed before the switch
// leaves a record of a generation that never went live: readers skip records
// after the live generation, and the next write's record of that number
// replaces it. A line cut short by a kill is removed before appending.
func (r *Repo) appendHistory(rec Record) error {
	name := r.historyFile(rec.Suite)
	if err := atomicfile.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	// The history is appended to where it is, never through a symlink (to a
	// file out of the repository, which would be chmodded and appended to)
	// and never blocking on a FIFO.
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		if fi, lerr := os.Lstat(name); lerr == nil && !fi.Mode().IsRegular() {
			return historyNotAFile(name, fi.Mode())
		}
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return historyNotAFile(name, fi.Mode())
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	end, err := completeLinesEnd(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := f.Truncate(end); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(line, '\n'), end); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if end == 0 {
		return atomicfile.SyncDir(filepath.Dir(name))
	}
	return nil
}

// completeLinesEnd returns the length of f up to its last newline: the part
// made of complete lines. It reads back from the end a block at a time:
// reading the whole history, to drop a line a killed write cut short, held
// all of it in memory.
func completeLinesEnd(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 64<<10)
	for end := st.Size(); end > 0; {
		start := max(end-int64(len(buf)), 0)
		block := buf[:end-start]
		if _, err := f.ReadAt(block, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(block, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// historyNotAFile refuses a history file that is no regular file.
func historyNotAFile(name string, m fs.FileMode) error {
	return fmt.Errorf("%w: %s is %s, not a file: the history is only a record, the repository does not depend on it; move it away to start a new one", ErrInvalid, name, confined.Kind(m))
}

// readHistory returns suite's records up to generation live, the last record
// of each generation, oldest first.
func (r *Repo) readHistory(suite string, live int) ([]Record, error) {
	name := r.historyFile(suite)
	// Never read through a symlink, as appendHistory never writes through
	// one: a link to a file out of the repository would have its first
	// bytes quoted in the error of a line that is no record.
	if fi, err := os.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, historyNotAFile(name, fi.Mode())
	}
	data, err := readFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	byGen := map[int]Record{}
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if line[len(line)-1] != '\n' {
			break // cut short by a killed write; never live
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil || rec.Generation < 1 {
			return nil, fmt.Errorf("%w: %s:%d: not a history record (%v): the history is only a record, the repository does not depend on it; move the file away to start a new one", ErrInvalid, name, n, err)
		}
		if rec.Generation <= live {
			byGen[rec.Generation] = rec
		}
	}
	out := make([]Record, 0, len(byGen))
	for _, rec := range byGen {
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Generation < out[j].Generation })
	return out, nil
}

// History returns suite's history (every suite's when suite is empty), oldest
// first: every recorded generation, whether it is live and whether it is
// still kept. Generations written before updeb kept a history appear with the
// operation "unrecorded".
func (r *Repo) History(suite string) ([]HistoryEntry, error) {
	suites, err := r.suitesOrAll(suite)
	if err != nil {
		return nil, err
	}
	if suite == "" {
		if err := r.warnLostLinks(); err != nil {
			return nil, err
		}
	}
	var out []HistoryEntry
	for _, s := range suites {
		live, err := r.liveGeneration(s)
		if err != nil {
			return nil, err
		}
		kept, err := r.keptGenerations(s, live)
		if err != nil {
			return nil, err
		}
		recs, err := r.readHistory(s, live)
		if err != nil {
			return nil, err
		}
		recorded := map[int]bool{}
		for _, rec := range recs {
			recorded[rec.Generation] = true
			out = append(out, HistoryEntry{Record: rec, Live: rec.Generation == live, Kept: slices.Contains(kept, rec.Generation)})
		}
		for _, n := range kept {
			if recorded[n] {
				continue
			}
			g, err := r.readGeneration(s, n)
			if err != nil {
				return nil, err
			}
			out = append(out, HistoryEntry{Record: Record{Suite: s, Generation: n, Date: g.release.date, Operation: "unrecorded", SigningKeys: g.settings.SigningKeys}, Live: n == live, Kept: true})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Suite != out[j].Suite {
			return out[i].Suite < out[j].Suite
		}
		return out[i].Generation < out[j].Generation
	})
	return out, nil
}

// suitesOrAll returns []string{suite} for an existing suite, or every suite
// when suite is empty; a suite that does not exist is ErrNotFound.
func (r *Repo) suitesOrAll(suite string) ([]string, error) {
	all, err := r.managedSuites()
	if err != nil {
		return nil, err
	}
	if suite == "" {
		// A folder that is not there is a mistyped --repo, not an empty
		// repository: listing it as one would hide the typo.
		if len(all) == 0 {
			if err := r.mustExist(); err != nil {
				return nil, err
			}
		}
		return all, nil
	}
	if err := validSuite(suite); err != nil {
		return nil, err
	}
	if !slices.Contains(all, suite) {
		return nil, r.noSuite(suite, all)
	}
	return []string{suite}, nil
}

// noSuite is the error for a suite that does not exist, naming those that
// do; a suite whose link is lost (its generations there) is said to be,
// with what restores it (lostLink), not to exist: "publish creates one".
func (r *Repo) noSuite(suite string, all []string) error {
	if err := r.lostLink(suite); err != nil {
		return err
	}
	if len(all) == 0 {
		return fmt.Errorf("%w: suite %s does not exist: %s has no published suite (publish creates one)", ErrNotFound, suite, r.root)
	}
	return fmt.Errorf("%w: suite %s does not exist in %s (suites: %s)", ErrNotFound, suite, r.root, strings.Join(all, ", "))
}
