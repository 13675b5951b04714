package track

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/yamlfile"
)

// A bump of a recipe loaded before another run bumped its file (two plan
// --apply at once) is refused, the file as the other run left it: it was
// written again and reported as this run's change (Changed, 1.2.0 -> 1.3.0).
func TestBumpRecipeBumpedSinceLoaded(t *testing.T) {
	u, file := scenario(t)
	o := testOptions(t, u, fetch.Options{})
	stale := load(t, file)
	if _, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "1.3.0"}); err != nil {
		t.Fatal(err)
	}
	before := readString(t, file)
	res, err := Bump(context.Background(), stale, BumpOptions{Options: o, To: "1.3.0"})
	if res != nil || !errors.Is(err, yamlfile.ErrChanged) || !strings.Contains(err.Error(), "since it was read at version 1.2.0 (its version is 1.3.0 now)") {
		t.Errorf("a bump of a recipe bumped since it was loaded: %+v %v", res, err)
	}
	if readString(t, file) != before {
		t.Error("the file changed")
	}
}
