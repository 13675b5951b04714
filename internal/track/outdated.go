package track

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
)

// withVersion returns a copy of r at another upstream version (for rendering
// its URLs); the copy shares everything else with r.
// urlPlan is enough to render URLs: the maintainer is only a placeholder for
// recipes that name none (the site's default applies when they are built).
var urlPlan = recipe.ResolveOptions{DefaultMaintainer: "updeb <updeb@localhost>"}

func withVersion(r *recipe.Recipe, version string) *recipe.Recipe {
	c := *r
	c.Version = version
	return &c
}

// Artifacts returns every URL r would fetch at version, for every
// architecture: sources, detached signatures (OpenPGP, cosign's .sig and
// .cert, Sigstore bundles) and checksum files, without
// duplicates, in recipe order.
func Artifacts(r *recipe.Recipe, version string) ([]string, error) {
	c := withVersion(r, version)
	var out []string
	seen := map[string]bool{}
	add := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, a := range r.Architectures {
		p, err := c.Resolve(a.Debian, urlPlan)
		if err != nil {
			return nil, fmt.Errorf("%s at version %s: %w", r.Name, version, err)
		}
		for _, s := range p.Sources {
			add(s.URL)
			for _, u := range s.AuxURLs() {
				add(u)
			}
		}
	}
	return out, nil
}

// Missing returns the artifacts of r at version that do not exist upstream
// (through the Client: the proxy and mirrors), in Artifacts order.
func Missing(ctx context.Context, r *recipe.Recipe, version string, o Options) ([]string, error) {
	urls, err := Artifacts(r, version)
	if err != nil {
		return nil, err
	}
	exists := make([]bool, len(urls))
	g, gctx := errgroup.WithContext(ctx)
	limit := o.Parallel
	if limit <= 0 {
		limit = 4
	}
	g.SetLimit(limit)
	for i, u := range urls {
		g.Go(func() error {
			ok, err := o.Client.Exists(gctx, u)
			exists[i] = ok
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var missing []string
	for i, u := range urls {
		if !exists[i] {
			missing = append(missing, u)
		}
	}
	return missing, nil
}

// Incomplete is a newer version skipped because some artifacts are not
// uploaded (yet).
type Incomplete struct {
	Version string   `json:"version"`
	Missing []string `json:"missing"`
}

// Candidates are the versions a recipe could move to.
type Candidates struct {
	Current string `json:"current"`
	Track   string `json:"track,omitempty"`
	// InTrack is the newest complete release in the track, or the current
	// version when there is none newer.
	InTrack Release `json:"newest_in_track"`
	// Latest is the newest complete release in any track, or the current
	// version when there is none newer.
	Latest Release `json:"newest"`
	// InMajor is the newest complete release of the current version's
	// major, or the current version when there is none newer: where a
	// recipe not of a series moves (plan) while Latest is of a newer major
	// (Helm 4 beside a 3.21.x track). Not in the JSON: Latest says it there.
	InMajor    Release      `json:"-"`
	Incomplete []Incomplete `json:"incomplete,omitempty"` // newer releases skipped, newest first
	// Stopped says why the search ended before the releases ran out: it
	// found MaxIncomplete newer releases incomplete and probed no more
	// (InTrack and Latest may then be older than a complete release upstream
	// has). Empty when every newer release down to the first complete one,
	// or to the current version, was probed.
	Stopped string `json:"stopped,omitempty"`
	// Withdrawn says that the current version's GitHub release is gone
	// (deleted, or made a draft again) from a listing that reaches back
	// to its release date: upstream may have pulled it. Empty otherwise.
	Withdrawn string `json:"withdrawn,omitempty"`
}

// errStopped ends Newest's search at MaxIncomplete (Candidates.Stopped).
var errStopped = errors.New("track: search stopped")

// MaxIncomplete bounds the newer releases Newest probes and finds
// incomplete before it stops: each costs an existence request per artifact,
// and a listing (a url: watch, up to 16 MiB) could name a million versions
// that do not exist.
const MaxIncomplete = 20

// Newest finds r's candidates: it lists the releases (see Releases) and, from
// the newest down, takes the first release whose artifacts all exist, once in
// the track and once overall. Releases not newer than the current version are
// never probed.
func Newest(ctx context.Context, r *recipe.Recipe, o Options) (*Candidates, error) {
	if r.Watch == nil {
		return nil, fmt.Errorf("%s: %w", r.Name, ErrNoWatch)
	}
	rels, err := Releases(ctx, r.Watch, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	current := Release{Version: r.Version}
	for _, rel := range rels {
		if rel.Version == r.Version {
			current = rel
		}
	}
	c := &Candidates{Current: r.Version, Track: r.Watch.Track, InTrack: current, Latest: current, InMajor: current}
	if current.Tag == "" && r.Watch.GitHub != "" {
		if c.Withdrawn, err = withdrawn(ctx, r, o); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
	}
	probed := map[string][]string{} // version -> missing artifacts, each probed once
	complete := func(rel Release) (bool, error) {
		missing, done := probed[rel.Version]
		if !done {
			if n := len(c.Incomplete); n >= MaxIncomplete {
				c.Stopped = fmt.Sprintf("the search stopped after %d newer releases found incomplete (%s down to %s): older ones were not probed; "+
					"name one known complete with 'updeb bump %s --to VERSION'", n, c.Incomplete[0].Version, c.Incomplete[n-1].Version, r.Name)
				return false, errStopped
			}
			var err error
			if missing, err = Missing(ctx, r, rel.Version, o); err != nil {
				return false, err
			}
			probed[rel.Version] = missing
			if len(missing) > 0 {
				c.Incomplete = append(c.Incomplete, Incomplete{Version: rel.Version, Missing: missing})
			}
		}
		return len(missing) == 0, nil
	}
	first := func(keep func(Release) (bool, error)) (Release, bool, error) {
		for _, rel := range rels {
			if compareVersions(rel.Version, r.Version) <= 0 {
				break // newest first: nothing newer follows
			}
			if ok, err := keep(rel); err != nil || !ok {
				if err != nil {
					return Release{}, false, err
				}
				continue
			}
			ok, err := complete(rel)
			if errors.Is(err, errStopped) {
				return Release{}, false, nil
			}
			if err == nil && ok {
				err = unambiguous(r, rels, rel)
			}
			if err != nil || ok {
				return rel, ok, err
			}
		}
		return Release{}, false, nil
	}
	rel, ok, err := first(func(rel Release) (bool, error) { return inTrack(r.Watch.Track, rel.Version) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	if ok {
		c.InTrack = rel
	}
	if rel, ok, err = first(func(Release) (bool, error) { return true, nil }); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	} else if ok {
		c.Latest, c.InMajor = rel, rel
	}
	// The newest overall is of another major: the newest of the current
	// one (a release probed already is not probed again).
	if major := numbersOf(r.Version); len(major) > 0 {
		sameMajor := func(rel Release) (bool, error) {
			n := numbersOf(rel.Version)
			return len(n) > 0 && n[0] == major[0], nil
		}
		if same, _ := sameMajor(c.InMajor); !same {
			c.InMajor = current
			if rel, ok, err = first(sameMajor); err != nil {
				return nil, fmt.Errorf("%s: %w", r.Name, err)
			} else if ok {
				c.InMajor = rel
			}
		}
	}
	return c, nil
}

// withdrawn says why r's version, not among the releases its watch
// follows, is not a pre-release left out either but gone from GitHub's
// listing: "" when it is listed, or when the listing (the newest 1000)
// has no release as old as r's release date and may only have left it
// behind.
func withdrawn(ctx context.Context, r *recipe.Recipe, o Options) (string, error) {
	rels, err := releases(ctx, r.Watch, o, true)
	if err != nil {
		return "", err
	}
	covered := false
	for _, rel := range rels {
		if compareVersions(rel.Version, r.Version) == 0 { // the same to dpkg: listed, however written
			return "", nil
		}
		covered = covered || !rel.Published.IsZero() && rel.Published.Before(r.ReleaseDate.Add(24*time.Hour))
	}
	if !covered {
		return "", nil
	}
	return fmt.Sprintf("%s %s (tag %s%s): no such release of %s any more, though its listing reaches back to the release date %s: upstream deleted it or made it a draft again (withdrawn?); "+
		"check upstream's notice before building it again, and move on with 'updeb bump %s --to VERSION'",
		r.Name, r.Version, r.Watch.TagPrefix, r.Version, r.Watch.GitHub, r.ReleaseDate.UTC().Format(time.DateOnly), r.Name), nil
}

// unambiguous refuses rel when another of upstream's releases is the same
// version to dpkg written otherwise (v1.3.0 and v1.03.0, or v1.3.0+): which
// of the two upstream meant is not for the order of its listing to decide,
// and both would be packaged as the same Debian version.
func unambiguous(r *recipe.Recipe, rels []Release, rel Release) error {
	for _, o := range rels {
		if o.Version != rel.Version && compareVersions(o.Version, rel.Version) == 0 {
			return fmt.Errorf("%w: %s and %s (%s = %s to dpkg): which one upstream means is not for the order of its listing to decide; "+
				"name it with 'updeb bump %s --to VERSION'", ErrAmbiguous, rel.Tag, o.Tag, rel.Version, o.Version, r.Name)
		}
	}
	return nil
}

// Support is the end-of-life status of a recipe's current version.
type Support struct {
	Product string `json:"product"` // the product in the end-of-life data
	Cycle   string `json:"cycle,omitempty"`
	State   string `json:"state"`          // supported, security-only, eol or unknown
	Date    string `json:"date,omitempty"` // YYYY-MM-DD: next boundary, EOL date, or since when EOL
	Text    string `json:"text"`           // "supported until 2026-10-28"
}

// SupportOf looks r's current version up in the end-of-life data on now's day.
// Products the data does not cover are "unknown". A recipe whose own
// end-of-life: mark is reached is end-of-life whatever the data says
// otherwise, as plan and compat take it.
func SupportOf(r *recipe.Recipe, data *supportdata.Data, now time.Time) Support {
	product := supportdata.ProductOf(Component(r))
	s := Support{Product: product, State: "unknown", Text: "unknown"}
	if data != nil {
		if cy, ok := data.Cycle(product, r.Version); ok {
			st := cy.Status(now)
			s.Cycle, s.State, s.Text = cy.Name, st.State.String(), st.String()
			if !st.Date.IsZero() {
				s.Date = st.Date.Format(time.DateOnly)
			}
		}
	}
	if s.State != supportdata.EndOfLife.String() && !r.EndOfLife.IsZero() && !r.EndOfLife.After(now) {
		dataSays := ""
		if s.State != "unknown" {
			dataSays = s.Text
		}
		s.Date = r.EndOfLife.UTC().Format(time.DateOnly)
		s.State, s.Text = supportdata.EndOfLife.String(), MarkedSupport(s.Date, dataSays)
	}
	return s
}

// MarkedSupport is the support text of a recipe whose end-of-life: mark
// (day) is reached. dataSays is what the support data says of its cycle
// when that is not end-of-life ("" when the data does not cover it): a mark
// written from an end-of-life day upstream has since moved says so, or the
// line's patches would stop without a word.
func MarkedSupport(day, dataSays string) string {
	if dataSays == "" {
		return "eol since " + day + " (marked in the recipe)"
	}
	return "eol since " + day + " (marked in the recipe, but the support data says " + dataSays + ": remove the mark to track it again)"
}

// Status is one row of updeb outdated.
type Status struct {
	Recipe string `json:"recipe"`
	File   string `json:"file"`
	Candidates
	Outdated     bool    `json:"outdated"`       // a newer complete release in the track
	OutOfSupport bool    `json:"out_of_support"` // the current version's cycle is end-of-life, or its end-of-life: mark is reached
	Support      Support `json:"support"`
	// NoWatch: the recipe has no watch, so nothing upstream was asked
	// (Candidates hold only its current version).
	NoWatch bool `json:"no_watch,omitempty"`
}

// Outdated is Newest plus the support status: everything updeb outdated shows.
// A recipe without a watch is ErrNoWatch.
func Outdated(ctx context.Context, r *recipe.Recipe, data *supportdata.Data, o Options) (*Status, error) {
	c, err := Newest(ctx, r, o)
	if err != nil {
		return nil, err
	}
	s := &Status{Recipe: r.Name, File: r.Path, Candidates: *c, Support: SupportOf(r, data, o.now())}
	s.Outdated = compareVersions(c.InTrack.Version, r.Version) > 0
	s.OutOfSupport = s.Support.State == "eol"
	return s, nil
}

// Unwatched is the status of a recipe without a watch: its support status
// alone, nothing upstream asked.
func Unwatched(r *recipe.Recipe, data *supportdata.Data, now time.Time) *Status {
	cur := Release{Version: r.Version}
	s := &Status{Recipe: r.Name, File: r.Path, Candidates: Candidates{Current: r.Version, InTrack: cur, Latest: cur}, Support: SupportOf(r, data, now), NoWatch: true}
	s.OutOfSupport = s.Support.State == "eol"
	return s
}
