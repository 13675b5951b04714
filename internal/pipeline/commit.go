package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/dirglob"
	"github.com/updeb/updeb/pkg/atomicfile"
)

// A recipe's packages appear in the output folder all together or not at all.
// The unit is the recipe: every architecture of it that this run builds. Each
// job writes its packages and provenance records into its own staging folder
// (.updeb-build-stage-*, inside the output folder, so the moves are renames);
// when the last job of a recipe is done, either some job failed and every
// staged file of the recipe is deleted, or the recipe is committed:
//
//  1. a journal (.updeb-state/commit-RECIPE.json) lists the renames and the
//     state records to write, and is written atomically;
//  2. the staged files are renamed to their final names and the folder synced;
//  3. the state records are written and the journal removed.
//
// A run killed between 1 and 3 (even by kill -9) left a journal; the next
// build into the same output folder (Run, under the folder's lock: `updeb
// build`, or the builds of `updeb verify` there) finishes the renames before
// it sweeps the staging folders, so the recipe ends up complete. Nothing else
// finishes a commit: `updeb fetch` and `mirror export` never touch the output
// folder. While such a
// journal exists the recipe's packages may be incomplete in the folder:
// `updeb publish` refuses a package from a folder with a pending journal
// (PendingCommit). Renames take microseconds, so that window is small.

const (
	stagePrefix   = ".updeb-build-stage-"
	journalPrefix = "commit-"
)

// staged is what one job wrote into its staging folder.
type staged struct {
	dir     string            // the job's staging folder
	state   string            // the state record to write after the commit
	key     string            // its input key
	outputs []Output          // the packages (each with its provenance record)
	records map[string]string // the records' recordBody, by Output.File
}

// journal is a commit in progress.
type journal struct {
	Renames []rename       `json:"renames"` // relative to the output folder
	States  []journalState `json:"states"`
}

type rename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type journalState struct {
	Path    string            `json:"path"` // relative to the output folder
	Key     string            `json:"key"`
	Outputs []Output          `json:"outputs"`
	Records map[string]string `json:"records,omitempty"`
}

func journalPath(out, recipe string) string {
	return filepath.Join(out, StateDir, stateFileName(journalPrefix+recipe, ".json"))
}

// commit moves the staged outputs of one recipe into the output folder as a
// unit (see above).
func commit(out, recipe string, jobs []*staged) error {
	var j journal
	for _, st := range jobs {
		rel, err := filepath.Rel(out, st.dir)
		if err != nil {
			return err
		}
		for _, o := range st.outputs {
			for _, name := range []string{o.File, o.File + ProvenanceSuffix} {
				j.Renames = append(j.Renames, rename{From: filepath.Join(rel, name), To: name})
			}
		}
		srel, err := filepath.Rel(out, st.state)
		if err != nil {
			return err
		}
		j.States = append(j.States, journalState{Path: srel, Key: st.key, Outputs: st.outputs, Records: st.records})
	}
	// A rename onto a folder fails; every other one in the output folder
	// succeeds. Checked before the journal, a folder in the way moves
	// nothing, rather than a package without its record or the rest of
	// its recipe.
	for _, r := range j.Renames {
		if fi, err := os.Lstat(filepath.Join(out, r.To)); err == nil && fi.IsDir() {
			return fmt.Errorf("%s is a folder: move it out of the way", filepath.Join(out, r.To))
		}
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	jp := journalPath(out, recipe)
	if err := atomicfile.WriteFile(jp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return finish(out, jp, j)
}

// finish carries out a written journal: renames (those not done yet), the
// state records, then the journal's removal. It is idempotent, so a run that
// finds a journal left by a killed one calls it again.
func finish(out, jp string, j journal) error {
	for _, r := range j.Renames {
		if !localName(r.From) || !localName(r.To) || strings.Contains(r.To, "/") {
			return fmt.Errorf("commit journal %s: bad rename %q -> %q", jp, r.From, r.To)
		}
		err := os.Rename(filepath.Join(out, r.From), filepath.Join(out, r.To))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := atomicfile.SyncDir(out); err != nil {
		return err
	}
	for _, s := range j.States {
		if !localName(s.Path) {
			return fmt.Errorf("commit journal %s: bad state path %q", jp, s.Path)
		}
		if err := saveState(filepath.Join(out, s.Path), s.Key, out, s.Outputs, s.Records); err != nil {
			// The outputs are in place; without a state record the next
			// run only builds them again.
			os.Remove(filepath.Join(out, s.Path))
		}
	}
	if err := os.Remove(jp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(jp))
}

// localName accepts a clean relative path inside the output folder.
func localName(p string) bool {
	return p != "" && filepath.IsLocal(p) && filepath.Clean(p) == p
}

// recoverCommits finishes the commits a killed run left journals for. It runs
// under the output folder's lock, before the staging folders are swept.
func recoverCommits(out string, log *slog.Logger) error {
	matches, err := dirglob.Glob(filepath.Join(out, StateDir), journalPrefix+"*.json")
	if err != nil {
		return err
	}
	var errs []error
	for _, jp := range matches {
		data, err := confined.ReadFile(jp, maxStateFile)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var j journal
		if err := json.Unmarshal(data, &j); err != nil {
			// Journals are written atomically: an unreadable one was never
			// ours to finish.
			log.Warn("removing an unreadable commit journal", "path", jp, "err", err)
			os.Remove(jp)
			continue
		}
		log.Info("finishing the commit of an interrupted build", "journal", jp)
		if err := finish(out, jp, j); err != nil {
			errs = append(errs, fmt.Errorf("finishing %s: %w", jp, err))
		}
	}
	return errors.Join(errs...)
}

// PendingCommit reports whether the output folder dir holds the journal of a
// commit a killed build did not finish: until a build runs there again (and
// finishes it), a recipe's packages there may be incomplete.
func PendingCommit(dir string) bool {
	m, _ := dirglob.Glob(filepath.Join(dir, StateDir), journalPrefix+"*.json")
	return len(m) > 0
}
