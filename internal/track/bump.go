package track

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/internal/yamlfile"
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
	// ErrTarget: --to names the current version written otherwise (exit 2).
	ErrTarget = errors.New("track: --to is the current version written otherwise")
)

// BumpOptions say where to bump to.
type BumpOptions struct {
	Options
	To   string    // target upstream version; "" means the newest complete one in the track
	Date time.Time // release-date; zero means the GitHub release's published_at
	// DayClient, when set, asks the release source for the day of a --to
	// version (when Date is zero) instead of Client: one that does not retry
	// makes an unreachable API fail at once (see ReleaseDay).
	DayClient Client
	// Operator are digests the operator vouches for: source name -> Debian
	// architecture -> digests. Upstream's bytes must match them; a source
	// nothing upstream vouches for is pinned on them.
	Operator map[string]map[string]digest.Set
	// TrustOnFirstUse pins sources nothing vouches for anyway; each is named
	// in BumpResult.Unvouched and marked in the recipe.
	TrustOnFirstUse bool
	// BeforeWrite, when set, is called with the result once the new recipe
	// text has passed every check, just before it is written: what follows
	// the recipe (the release set file) is written there, so that a run
	// killed between the two writes leaves the recipe behind, and running
	// it again does the bump (what followed already follows). Its error
	// stops the bump: the recipe is not written.
	BeforeWrite func(*BumpResult) error
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
	// Unvouched names the sources ("SOURCE ARCH: how") pinned on the
	// operator's word alone: their digests or --trust-on-first-use.
	Unvouched []string `json:"unvouched,omitempty"`
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
// their signatures (OpenPGP or Sigstore), cross-checks the computed digests
// against the upstream checksum files, and rewrites version, release-date,
// revision ("1") and the pinned digests (only the algorithms the recipe
// already pins) in place: every other byte of the file is kept. The new file
// must load (recipe.Load, the same check as updeb lint) before it replaces the
// old one, atomically.
//
// Nothing is pinned that nothing vouches for: a source without a verified
// signature or a matching upstream checksum file is pinned only on the
// operator's digests (BumpOptions.Operator) or with TrustOnFirstUse, and then
// a comment above its pins records it; otherwise Bump refuses
// (*UnvouchedError) and writes nothing. A source without pins (a new recipe,
// loaded with recipe.LoadOptions.AllowUnpinned) gets them, after its url.
//
// When the target is the current version, the pins are compared with
// upstream's bytes and a difference is ErrReupload; only sources without pins
// are written.
func Bump(ctx context.Context, r *recipe.Recipe, o BumpOptions) (*BumpResult, error) {
	original, err := readLoaded(r)
	if err != nil {
		return nil, err
	}
	return bump(ctx, r, original, o, func(updated []byte, check func([]byte) error) error {
		return yamlfile.Rewrite(ctx, r.Path, original, updated, check, 0)
	})
}

// readLoaded reads r's file for a rewrite, refusing it (yamlfile.ErrChanged)
// when its version is no longer r's: another run (a plan --apply started
// with this one) bumped it since r was loaded, and a bump of r would write
// that run's change again and report it as its own.
func readLoaded(r *recipe.Recipe) ([]byte, error) {
	original, top, err := readDocument(r.Path)
	if err != nil {
		return nil, err
	}
	if n := mapValue(top, "version"); n == nil || n.Value != r.Version {
		now := "none"
		if n != nil {
			now = n.Value
		}
		return nil, fmt.Errorf("%s: %w: %w since it was read at version %s (its version is %s now); run the command again", r.Path, yamlfile.ErrNotRewritten, yamlfile.ErrChanged, r.Version, now)
	}
	return original, nil
}

// readDocument reads the recipe file path for a rewrite: its text and its
// top mapping. A path the rewrite would refuse (a symlink) is refused here,
// before the downloads and before the release set file follows.
func readDocument(path string) ([]byte, *yaml.Node, error) {
	if err := yamlfile.CheckRewritable(path); err != nil {
		return nil, nil, err
	}
	original, err := yamlfile.ReadFile(path, recipe.MaxSize)
	if err != nil {
		return nil, nil, err
	}
	top, err := recipe.Document(path, original)
	return original, top, err
}

// targetVersion is --to as recipes write versions: the watch's tag prefix
// stripped (v3.21.4 -> 3.21.4), as outdated strips it from the tags it
// reads, when what follows it is a version.
func targetVersion(r *recipe.Recipe, to string) string {
	if r.Watch == nil || r.Watch.TagPrefix == "" {
		return to
	}
	if v, ok := strings.CutPrefix(to, r.Watch.TagPrefix); ok && debianOf(v) != "" {
		return v
	}
	return to
}

// bump is Bump on r's text original; write puts the bumped, linted text in
// place.
func bump(ctx context.Context, r *recipe.Recipe, original []byte, o BumpOptions, write func(updated []byte, check func([]byte) error) error) (*BumpResult, error) {
	res := &BumpResult{Recipe: r.Name, File: r.Path, From: r.Version, To: targetVersion(r, o.To)}
	var published time.Time
	if res.To == "" {
		c, err := Newest(ctx, r, o.Options)
		if err != nil {
			return nil, err
		}
		if c.Stopped != "" && c.InTrack.Version == r.Version {
			// Not "already at": newer releases went unprobed.
			return nil, fmt.Errorf("%s: %w: %s", r.Name, ErrIncomplete, c.Stopped)
		}
		res.To, published = c.InTrack.Version, c.InTrack.Published
	}
	if debianOf(res.To) == "" {
		return nil, fmt.Errorf("%w: --to %q is not an upstream version", recipe.ErrInvalid, res.To)
	}
	switch c := compareVersions(res.To, r.Version); {
	case c < 0:
		return nil, fmt.Errorf("%w: %s is at %s, asked for %s", ErrDowngrade, r.Name, r.Version, res.To)
	case c == 0 && res.To != r.Version:
		// Its URLs would name other files, its packages the same version.
		return nil, fmt.Errorf("%w: --to %s is the version %s is at (%s), written otherwise: give --to %s to re-check the pins against upstream",
			ErrTarget, o.To, r.Name, r.Version, r.Version)
	}
	if o.Date.IsZero() && published.IsZero() && res.To != r.Version {
		day := o.Options
		if o.DayClient != nil {
			day.Client = o.DayClient
		}
		publishedDay, err := ReleaseDay(ctx, r, res.To, day)
		if err != nil {
			return nil, err
		}
		published = publishedDay
	}
	// A day after today (--date mistyped, a release source whose clock or
	// data is wrong) would be written, and every build would refuse the
	// recipe: the provenance signature is dated by it.
	if day, today := cmp.Or(o.Date, published).UTC().Format(time.DateOnly), o.now().UTC().Format(time.DateOnly); res.To != r.Version && day > today {
		return nil, fmt.Errorf("%w for %s %s: %s is after today (%s): a build refuses a release-date in the future", ErrNoDate, r.Name, res.To, day, today)
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
	fetched, err := fetchVerified(ctx, r, res.To, o.Options)
	if err != nil {
		return nil, err
	}
	edits, err := decide(r, res, fetched, o)
	if err != nil {
		return nil, err
	}
	newPins := slices.ContainsFunc(r.Sources, func(s recipe.Source) bool { return len(s.Digests) == 0 })
	if res.To == r.Version {
		if err := checkReupload(r, res.Digests); err != nil || !newPins {
			return res, err
		}
		res.ReleaseDate = r.ReleaseDate.Format(time.DateOnly)
	} else {
		date := o.Date
		if date.IsZero() {
			date = published
		}
		if date.IsZero() {
			return nil, fmt.Errorf("%w for %s %s: the release source gives none", ErrNoDate, r.Name, res.To)
		}
		res.ReleaseDate = date.UTC().Format(time.DateOnly)
	}
	updated, changes, err := rewrite(r, original, res)
	if err != nil {
		return nil, err
	}
	lines, err := pinLines(r, original, res, edits)
	if err != nil {
		return nil, err
	}
	updated = lines.apply(updated)
	// What is written must read as exactly the new values and otherwise the
	// old recipe (yamlfile.Verify), and pass lint; write re-reads it from
	// disk and checks again before it replaces anything.
	check := func(written []byte) error {
		if err := yamlfile.Verify(r.Path, original, written, changes); err != nil {
			return err
		}
		if _, err := loadBytes(r.Path, r.Root, written); err != nil {
			return fmt.Errorf("the bumped recipe does not pass lint (not written): %w", err)
		}
		return nil
	}
	if err := check(updated); err != nil {
		return nil, err
	}
	if o.BeforeWrite != nil {
		if err := o.BeforeWrite(res); err != nil {
			return nil, err
		}
	}
	if err := write(updated, check); err != nil {
		return nil, err
	}
	res.Changed = true
	return res, nil
}

// fetched is one source file fetched for one architecture: its digests and
// what vouched for it (trust.Source's words).
type fetched struct {
	digests digest.Set
	by      []string
}

// fetchVerified downloads every source of r at version for every architecture
// and verifies each one's signature and checksum file. It returns source ->
// architecture -> what was fetched; decide says what may be pinned.
func fetchVerified(ctx context.Context, r *recipe.Recipe, version string, o Options) (map[string]map[string]*fetched, error) {
	c := withVersion(r, version)
	now := o.now()
	// Fresh: bump must see upstream's bytes as they are now, never a copy
	// cached for the same URL earlier; a file that several sources or
	// architectures share (a checksum file) is downloaded once a run. (A key
	// unique to each run did that with an index entry and a lock file per
	// URL and run, which the cache kept forever.)
	key := "bump " + r.Name + " " + version
	got := map[string]*fetch.Result{}
	get := func(u string, algs ...digest.Algorithm) (*fetch.Result, error) {
		id := u + " " + fmt.Sprint(algs)
		if res, ok := got[id]; ok {
			return res, nil
		}
		res, err := o.Client.Fetch(ctx, fetch.Request{URL: u, AllowUnpinned: true, Key: key, Algorithms: algs, Fresh: true})
		if err == nil {
			got[id] = res
		}
		return res, err
	}
	out := map[string]map[string]*fetched{}
	for _, a := range r.Architectures {
		p, err := c.Resolve(a.Debian, urlPlan)
		if err != nil {
			return nil, err
		}
		for _, s := range p.Sources {
			// The fetcher computes sha256 and what is asked for: sha512 too,
			// so that the cross-check compares every algorithm an upstream
			// checksum file may list, and either can be pinned.
			art, err := get(s.URL, digest.SHA512)
			if err != nil {
				return nil, err
			}
			vouched, err := trust.Source(ctx, &s, art.Digests, art, trust.Verifiers{
				Get: func(u string) (*fetch.Result, error) { return get(u) }, Now: now, Sigstore: o.Sigstore})
			if err != nil {
				return nil, fmt.Errorf("%s %s (%s): %w", r.Name, version, a.Debian, err)
			}
			if out[s.Name] == nil {
				out[s.Name] = map[string]*fetched{}
			}
			out[s.Name][a.Debian] = &fetched{digests: art.Digests, by: vouched}
		}
	}
	return out, nil
}

// decide is bump's one vouching decision, over every source and
// architecture: what may be pinned (vouch), the digests to pin (the
// algorithms the recipe pins; for a source without pins, sha512 when the
// operator gave sha512 for it, else sha256), the evidence to report, and
// what to write besides the digests. Sources nothing vouches for are
// refused together (*UnvouchedError), pinning nothing.
func decide(r *recipe.Recipe, res *BumpResult, got map[string]map[string]*fetched, o BumpOptions) (map[string]sourceEdit, error) {
	day := o.now().UTC().Format(time.DateOnly)
	res.Digests = map[string]map[string]map[string]string{}
	edits := map[string]sourceEdit{}
	unvouched := &UnvouchedError{Recipe: r.Name, Version: res.To}
	for _, s := range r.Sources {
		ed := sourceEdit{}
		if len(s.Digests) == 0 {
			ed.alg = string(digest.SHA256)
			for _, d := range o.Operator[s.Name] {
				if _, ok := d[digest.SHA512]; ok {
					ed.alg = string(digest.SHA512)
				}
			}
		}
		how := map[string]bool{}
		var algs []string
		res.Digests[s.Name] = map[string]map[string]string{}
		for _, a := range r.ArchNames() {
			f := got[s.Name][a]
			by := f.by
			if res.To == r.Version && len(s.Digests[a]) > 0 {
				by = append([]string{"pinned-digest"}, by...) // a re-check: the pins vouch (checkReupload compares)
			}
			evidence, operator, none, err := vouch(s.Name, a, f.digests, by, o)
			if err != nil {
				return nil, err
			}
			if none {
				line := fmt.Sprintf("%s %s: %s", s.Name, a, describeDigests(f.digests))
				if len(by) > 0 {
					line += " (its upstream checksum file came over plain http, and vouches for nothing: whoever is on the path serves both; an https URL, or a signature, would)"
				}
				unvouched.Sources = append(unvouched.Sources, line)
				continue
			}
			for _, x := range evidence {
				res.VerifiedBy = append(res.VerifiedBy, fmt.Sprintf("%s %s: %s", s.Name, a, x))
			}
			if operator != "" {
				how[operator] = true
				res.Unvouched = append(res.Unvouched, fmt.Sprintf("%s %s: %s", s.Name, a, operator))
				algs = append(algs, algNames(o.Operator[s.Name][a])...)
			}
			pin := map[string]string{}
			for alg := range s.Digests[a] {
				pin[string(alg)] = f.digests[alg]
			}
			if ed.alg != "" {
				pin[ed.alg] = f.digests[digest.Algorithm(ed.alg)]
			}
			for alg, v := range pin {
				if v == "" {
					return nil, fmt.Errorf("%s: the fetcher computed no %s digest to pin for %s", s.Name, alg, a)
				}
			}
			res.Digests[s.Name][a] = pin
		}
		switch {
		case how[byTrustOnFirstUse]:
			ed.mark = mark(byTrustOnFirstUse, day, nil)
		case how[byOperatorDigest]:
			slices.Sort(algs)
			ed.mark = mark(byOperatorDigest, day, slices.Compact(algs))
		}
		edits[s.Name] = ed
	}
	if len(unvouched.Sources) > 0 {
		return nil, unvouched
	}
	return edits, nil
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
func rewrite(r *recipe.Recipe, data []byte, res *BumpResult) ([]byte, []yamlfile.Change, error) {
	n, err := findNodes(r.Path, data)
	if err != nil {
		return nil, nil, err
	}
	if n.version == nil || n.releaseDate == nil {
		return nil, nil, fmt.Errorf("%s: no version or release-date to rewrite", r.Path)
	}
	var edits []edit
	if res.To != r.Version { // else: pinning a new source, the release stays
		edits = append(edits, edit{n.version, res.To}, edit{n.releaseDate, res.ReleaseDate})
		if n.revision != nil && n.revision.Value != "1" {
			edits = append(edits, edit{n.revision, "1"})
		}
	}
	for _, s := range r.Sources {
		for alg, v := range n.digests[s.Name] {
			if v.Kind == yaml.ScalarNode { // one value for every architecture
				vals := map[string]bool{}
				for _, a := range r.Architectures {
					vals[res.Digests[s.Name][a.Debian][string(alg)]] = true
				}
				if len(vals) != 1 {
					return nil, nil, fmt.Errorf("%s: source %s pins one %s for every architecture, but upstream's files differ per architecture", r.Path, s.Name, alg)
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
	out, changes, err := splice(r.Path, n.top, data, edits)
	if err != nil {
		return nil, nil, err
	}
	// the pins of a source that had none, which pinLines adds
	for _, s := range r.Sources {
		if len(s.Digests) > 0 {
			continue
		}
		i, ok := n.index[s.Name]
		if !ok {
			return nil, nil, fmt.Errorf("%s: source %s is not in the file's sources", r.Path, s.Name)
		}
		for _, a := range r.ArchNames() {
			for alg, v := range res.Digests[s.Name][a] {
				changes = append(changes, yamlfile.Change{Path: []string{"sources", strconv.Itoa(i), alg, a}, Value: v})
			}
		}
	}
	return out, changes, nil
}

// loadBytes loads data as the content of the recipe file path, as updeb lint
// would, without writing it.
func loadBytes(path, root string, data []byte) (*recipe.Recipe, error) {
	return recipe.LoadBytes(path, data, recipe.LoadOptions{Root: root})
}
