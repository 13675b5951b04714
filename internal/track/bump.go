package track

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/digest"
)

// Errors Bump refuses with; the CLI maps them to exit codes.
var (
	// ErrIncomplete: an artifact of the target version is missing (exit 1).
	ErrIncomplete = errors.New("track: release incomplete")
	// ErrReupload: the bytes upstream differ from the digest pinned for the
	// same version: an alarm, never an update (exit 1).
	ErrReupload = errors.New("track: upstream re-uploaded an artifact")
	// ErrDowngrade: the target is older than the current version (exit 2).
	ErrDowngrade = errors.New("track: target version is older than the recipe's")
	// ErrNoDate: no release date is known for the target (exit 2: give --date).
	ErrNoDate = errors.New("track: no release date")
)

// BumpOptions say where to bump to.
type BumpOptions struct {
	Options
	To   string    // target upstream version; "" means the newest complete one in the track
	Date time.Time // release-date; zero means the GitHub release's published_at
}

// BumpResult says what Bump did.
type BumpResult struct {
	Recipe      string                                  `json:"recipe"`
	File        string                                  `json:"file"`
	From        string                                  `json:"from"`
	To          string                                  `json:"to"`
	ReleaseDate string                                  `json:"release_date,omitempty"`
	Changed     bool                                    `json:"changed"` // false: already at To, bytes unchanged upstream
	Digests     map[string]map[string]map[string]string `json:"digests"` // source -> arch -> algorithm -> hex, as pinned now
	VerifiedBy  []string                                `json:"verified_by"`
}

// IncompleteError lists the target version's missing artifacts.
type IncompleteError struct {
	Version string
	Missing []string
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("version %s is not complete upstream: %d artifact(s) missing:\n  %s", e.Version, len(e.Missing), strings.Join(e.Missing, "\n  "))
}

func (e *IncompleteError) Unwrap() error { return ErrIncomplete }

// Bump moves the recipe at r.Path to a new upstream version: it checks every
// artifact exists, downloads the sources (fresh, through the Client), verifies
// their OpenPGP signatures, cross-checks the computed digests against the
// upstream checksum files, and rewrites version, release-date, revision ("1")
// and the pinned digests (only the algorithms the recipe already pins) in
// place: every other byte of the file is kept. The new file must load
// (recipe.Load, the same check as updeb lint) before it replaces the old one,
// atomically. When the target is the current version, nothing is written: the
// pins are compared with upstream's bytes and a difference is ErrReupload.
func Bump(ctx context.Context, r *recipe.Recipe, o BumpOptions) (*BumpResult, error) {
	original, err := os.ReadFile(r.Path)
	if err != nil {
		return nil, err
	}
	return bump(ctx, r, original, o, func(updated []byte) error {
		fi, err := os.Stat(r.Path)
		if err != nil {
			return err
		}
		return atomicfile.WriteFile(r.Path, updated, fi.Mode().Perm())
	})
}

// bump is Bump on r's text original; write puts the bumped, linted text in
// place.
func bump(ctx context.Context, r *recipe.Recipe, original []byte, o BumpOptions, write func(updated []byte) error) (*BumpResult, error) {
	res := &BumpResult{Recipe: r.Name, File: r.Path, From: r.Version, To: o.To}
	var published time.Time
	if res.To == "" || (o.Date.IsZero() && res.To != r.Version) {
		c, err := Newest(ctx, r, o.Options)
		if err != nil {
			return nil, err
		}
		if res.To == "" {
			res.To, published = c.InTrack.Version, c.InTrack.Published
		} else if rels, err := Releases(ctx, r.Watch, o.Options); err == nil {
			for _, rel := range rels {
				if rel.Version == res.To {
					published = rel.Published
				}
			}
		} else {
			return nil, err
		}
	}
	if debianOf(res.To) == "" {
		return nil, fmt.Errorf("%w: --to %q is not an upstream version", recipe.ErrInvalid, res.To)
	}
	if compareVersions(res.To, r.Version) < 0 {
		return nil, fmt.Errorf("%w: %s is at %s, asked for %s", ErrDowngrade, r.Name, r.Version, res.To)
	}
	if res.To != r.Version {
		missing, err := Missing(ctx, r, res.To, o.Options)
		if err != nil {
			return nil, err
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: %w", r.Name, &IncompleteError{Version: res.To, Missing: missing})
		}
	}
	pins, by, err := fetchVerified(ctx, r, res.To, o.Options)
	if err != nil {
		return nil, err
	}
	res.Digests, res.VerifiedBy = pins, by
	if res.To == r.Version {
		return res, checkReupload(r, pins)
	}
	date := o.Date
	if date.IsZero() {
		date = published
	}
	if date.IsZero() {
		return nil, fmt.Errorf("%w for %s %s: the release source gives none", ErrNoDate, r.Name, res.To)
	}
	res.ReleaseDate = date.UTC().Format(time.DateOnly)
	updated, err := rewrite(r, original, res)
	if err != nil {
		return nil, err
	}
	if _, err := loadBytes(r.Path, r.Root, updated); err != nil {
		return nil, fmt.Errorf("the bumped recipe does not pass lint (not written): %w", err)
	}
	if err := write(updated); err != nil {
		return nil, err
	}
	res.Changed = true
	return res, nil
}

// fetchVerified downloads every source of r at version for every architecture
// and returns the digests to pin (only the algorithms r pins, per source and
// architecture) after each source's signature and checksum file verified.
func fetchVerified(ctx context.Context, r *recipe.Recipe, version string, o Options) (map[string]map[string]map[string]string, []string, error) {
	c := withVersion(r, version)
	now := o.now()
	// A key unique to this run: bump must see upstream's bytes as they are now,
	// never a copy cached for the same URL earlier.
	key := fmt.Sprintf("bump %s %s %s", r.Name, version, now.UTC().Format(time.RFC3339Nano))
	get := func(u string, algs ...digest.Algorithm) (*fetch.Result, error) {
		return o.Client.Fetch(ctx, fetch.Request{URL: u, AllowUnpinned: true, Key: key, Algorithms: algs})
	}
	pins := map[string]map[string]map[string]string{}
	var by []string
	for _, a := range r.Architectures {
		p, err := c.Plan(a.Debian, urlPlan)
		if err != nil {
			return nil, nil, err
		}
		for i, s := range p.Sources {
			// The fetcher computes sha256 and what is asked for: the
			// algorithms the recipe pins (the new pins), and sha512 too, so
			// that the cross-check compares every algorithm an upstream
			// checksum file may list (sha256 or sha512).
			algs := []digest.Algorithm{digest.SHA512}
			for alg := range r.Sources[i].Digests[a.Debian] {
				algs = append(algs, alg)
			}
			art, err := get(s.URL, algs...)
			if err != nil {
				return nil, nil, err
			}
			vouched, err := trust.Source(&s, art.Digests, art, func(u string) (*fetch.Result, error) { return get(u) }, now)
			if err != nil {
				return nil, nil, fmt.Errorf("%s %s (%s): %w", r.Name, version, a.Debian, err)
			}
			for _, x := range vouched {
				by = append(by, fmt.Sprintf("%s %s: %s", s.Name, a.Debian, x))
			}
			if pins[s.Name] == nil {
				pins[s.Name] = map[string]map[string]string{}
			}
			pins[s.Name][a.Debian] = map[string]string{}
			for alg := range r.Sources[i].Digests[a.Debian] {
				v, ok := art.Digests[alg]
				if !ok {
					return nil, nil, fmt.Errorf("%s: the fetcher computed no %s digest to pin", s.URL, alg)
				}
				pins[s.Name][a.Debian][string(alg)] = v
			}
		}
	}
	return pins, by, nil
}

// checkReupload compares upstream's bytes for the current version with the pins.
func checkReupload(r *recipe.Recipe, pins map[string]map[string]map[string]string) error {
	var diffs []string
	for _, s := range r.Sources {
		for _, a := range r.Architectures {
			for alg, want := range s.Digests[a.Debian] {
				if got := pins[s.Name][a.Debian][string(alg)]; got != want {
					diffs = append(diffs, fmt.Sprintf("%s %s %s: pinned %s, upstream now %s", s.Name, a.Debian, alg, want, got))
				}
			}
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %s %s was already pinned and its bytes changed upstream (re-uploaded?); the pins were kept:\n  %s", ErrReupload, r.Name, r.Version, strings.Join(diffs, "\n  "))
	}
	return nil
}

// rewrite returns the recipe file with the new version, date, revision and pins.
func rewrite(r *recipe.Recipe, data []byte, res *BumpResult) ([]byte, error) {
	n, err := findNodes(r.Path, data)
	if err != nil {
		return nil, err
	}
	if n.version == nil || n.releaseDate == nil {
		return nil, fmt.Errorf("%s: no version or release-date to rewrite", r.Path)
	}
	edits := []edit{{n.version, res.To}, {n.releaseDate, res.ReleaseDate}}
	if n.revision != nil && n.revision.Value != "1" {
		edits = append(edits, edit{n.revision, "1"})
	}
	for _, s := range r.Sources {
		for alg, v := range n.digests[s.Name] {
			if v.Kind == yaml.ScalarNode { // one value for every architecture
				vals := map[string]bool{}
				for _, a := range r.Architectures {
					vals[res.Digests[s.Name][a.Debian][string(alg)]] = true
				}
				if len(vals) != 1 {
					return nil, fmt.Errorf("%s: source %s pins one %s for every architecture, but upstream's files differ per architecture", r.Path, s.Name, alg)
				}
				for h := range vals {
					edits = append(edits, edit{v, h})
				}
				continue
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				arch := v.Content[i].Value
				edits = append(edits, edit{v.Content[i+1], res.Digests[s.Name][arch][string(alg)]})
			}
		}
	}
	return splice(r.Path, data, edits)
}

// loadBytes loads data as the content of the recipe file path, as updeb lint
// would, without writing it.
func loadBytes(path, root string, data []byte) (*recipe.Recipe, error) {
	return recipe.LoadBytes(path, data, recipe.LoadOptions{Root: root})
}
