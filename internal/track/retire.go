package track

import (
	"fmt"
	"os"
	"time"

	"github.com/updeb/updeb/internal/recipe"
)

// MarkEndOfLife writes "end-of-life: DAY" into r's file in place: after
// release-date, or over an older mark; every other byte is kept. The new
// text must load as lint would before it replaces the file (writeInPlace).
// It reports whether the file changed (false: already marked that day).
func MarkEndOfLife(r *recipe.Recipe, day time.Time) (bool, error) {
	original, err := os.ReadFile(r.Path)
	if err != nil {
		return false, err
	}
	top, err := recipe.Document(r.Path, original)
	if err != nil {
		return false, err
	}
	value := day.UTC().Format(time.DateOnly)
	var updated []byte
	if n := mapValue(top, "end-of-life"); n != nil {
		if n.Value == value {
			return false, nil
		}
		if updated, err = splice(r.Path, original, []edit{{n, value}}); err != nil {
			return false, err
		}
	} else {
		if mapValue(top, "release-date") == nil {
			return false, fmt.Errorf("%s: no release-date to write end-of-life after", r.Path)
		}
		updated = insertAfterKey(original, top, "release-date", "end-of-life: "+value)
	}
	if _, err := loadBytes(r.Path, r.Root, updated); err != nil {
		return false, fmt.Errorf("the recipe marked end-of-life does not pass lint (not written): %w", err)
	}
	return true, writeInPlace(r.Path, updated)
}
