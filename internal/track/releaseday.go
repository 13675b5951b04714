package track

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/updeb/updeb/internal/recipe"
)

// ReleaseDay returns the day version of r was published, from its watch (a
// GitHub release's published_at, or a listing's date), a pre-release's too
// (bump --to names one whatever the watch's prereleases). An answer without that
// version or without a date is ErrNoDate; a release source that does not
// answer is a *DayUnknownError. Give o a Client that does not retry when the
// day is only a convenience (bump --to V without --date): the caller can ask
// the operator instead of waiting out a retry budget.
//
// The version is named (bump --to): a pre-release has its day like any
// release, whether or not the watch follows pre-releases.
func ReleaseDay(ctx context.Context, r *recipe.Recipe, version string, o Options) (time.Time, error) {
	rels, err := releases(ctx, r.Watch, o, true)
	if errors.Is(err, ErrNoWatch) {
		return time.Time{}, fmt.Errorf("%w for %s %s: the recipe has no watch: to ask", ErrNoDate, r.Name, version)
	}
	if err != nil {
		return time.Time{}, &DayUnknownError{Recipe: r.Name, Version: version, Err: err}
	}
	listed := false
	for _, rel := range rels {
		if rel.Version == version && !rel.Published.IsZero() {
			return rel.Published, nil
		}
		listed = listed || rel.Version == version
	}
	if !listed && r.Watch.GitHub != "" {
		return time.Time{}, fmt.Errorf("%w for %s %s: GitHub's release list (%s) has no release %s%s: a typo, a draft, a tag without a release, or older than the newest 1000",
			ErrNoDate, r.Name, version, r.Watch.GitHub, r.Watch.TagPrefix, version)
	}
	return time.Time{}, fmt.Errorf("%w for %s %s: the release source gives none", ErrNoDate, r.Name, version)
}

// DayUnknownError is a release day that could not be asked for: the release
// source (the GitHub API) did not answer.
type DayUnknownError struct {
	Recipe, Version string
	Err             error
}

func (e *DayUnknownError) Error() string {
	return fmt.Sprintf("%s %s: the release day comes from the release source, which did not answer: %v", e.Recipe, e.Version, e.Err)
}

func (e *DayUnknownError) Unwrap() error { return e.Err }
