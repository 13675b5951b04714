package track

import (
	"context"
	"fmt"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/yamlfile"
)

// MarkEndOfLife writes "end-of-life: DAY" into r's file in place: after
// release-date, or over an older mark; every other byte is kept. The new
// text must read as exactly that change (yamlfile.Verify) and load as lint
// would, before yamlfile.Rewrite replaces the file, reading it back. It
// reports whether the file changed (false: already marked that day).
func MarkEndOfLife(ctx context.Context, r *recipe.Recipe, day time.Time) (bool, error) {
	original, top, err := readDocument(r.Path)
	if err != nil {
		return false, err
	}
	value := day.UTC().Format(time.DateOnly)
	var updated []byte
	if n := mapValue(top, "end-of-life"); n != nil {
		if n.Value == value {
			return false, nil
		}
		if updated, _, err = splice(r.Path, top, original, []edit{{n, value}}); err != nil {
			return false, err
		}
	} else {
		if mapValue(top, "release-date") == nil {
			return false, fmt.Errorf("%s: no release-date to write end-of-life after", r.Path)
		}
		updated = insertAfterKey(original, top, "release-date", "end-of-life: "+value)
	}
	changes := []yamlfile.Change{{Path: []string{"end-of-life"}, Value: value}}
	check := func(written []byte) error {
		if err := yamlfile.Verify(r.Path, original, written, changes); err != nil {
			return err
		}
		if _, err := loadBytes(r.Path, r.Root, written); err != nil {
			return fmt.Errorf("the recipe marked end-of-life does not pass lint (not written): %w", err)
		}
		return nil
	}
	if err := check(updated); err != nil {
		return false, err
	}
	return true, yamlfile.Rewrite(ctx, r.Path, original, updated, check, 0)
}
