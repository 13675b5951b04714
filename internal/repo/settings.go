package repo

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/updeb/updeb/internal/aptname"
)

// settingsFile is the name of a suite's settings in each of its generation
// directories: written with the generation, so the settings and the Release
// they produced are switched in together.
const settingsFile = "updeb-suite.json"

// DefaultKeep is how many generations of a suite are kept for rollback when
// nothing says otherwise.
const DefaultKeep = 10

// Settings are what a suite keeps from one generation to the next: the
// Release fields, the keys that sign it, how long a signature stays valid and
// how many generations are kept. They are stored with every generation
// (dists/<suite>/updeb-suite.json) and change only when asked (SettingsChange).
type Settings struct {
	Format      int    `json:"format"`
	Origin      string `json:"origin"`
	Label       string `json:"label"`
	Suite       string `json:"suite"`
	Codename    string `json:"codename"`
	Description string `json:"description"`
	// Architectures and Components are every one the suite has listed: a
	// Release never lists fewer than the last one (a client configured for
	// one that disappears gets warnings on every update).
	Architectures []string `json:"architectures"`
	Components    []string `json:"components"`
	// SigningKeys are the fingerprints of the keys the Release is signed with.
	SigningKeys []string `json:"signing-keys"`
	// ValidFor, when positive, gives the Release a Valid-Until of Date +
	// ValidFor: clients refuse it once expired, so it must be refreshed in time.
	ValidFor Duration `json:"valid-for"`
	// Keep is how many generations with distinct contents are kept for
	// rollback (refresh-only generations do not count).
	Keep int `json:"keep"`
}

// Duration is a time.Duration written as "168h0m0s" in the settings file.
type Duration time.Duration

// MarshalJSON writes the duration as Go's time.Duration.String().
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("valid-for %q is not a duration like 168h", s)
	}
	*d = Duration(v)
	return nil
}

const settingsFormat = 1

// SettingsChange is what an operation asks of a suite's settings. A nil field
// keeps the stored value (or the default, for a new suite); Architectures are
// added to the stored ones.
type SettingsChange struct {
	Origin, Label, Codename, Description *string
	Architectures                        []string
	ValidFor                             *time.Duration
	Keep                                 *int
	// AllowFieldChange lets a change through that clients refuse until an
	// administrator accepts it on each (Origin, Label, Suite, Codename) or that
	// locks out clients trusting only a dropped signing key.
	AllowFieldChange bool
}

// withDefaults is c with d's value for every field c leaves nil;
// architectures are added.
func (c SettingsChange) withDefaults(d SettingsChange) SettingsChange {
	pick := func(v, def *string) *string {
		if v != nil {
			return v
		}
		return def
	}
	c.Origin, c.Label, c.Codename, c.Description = pick(c.Origin, d.Origin), pick(c.Label, d.Label), pick(c.Codename, d.Codename), pick(c.Description, d.Description)
	if c.ValidFor == nil {
		c.ValidFor = d.ValidFor
	}
	if c.Keep == nil {
		c.Keep = d.Keep
	}
	c.Architectures = append(slices.Clone(c.Architectures), d.Architectures...)
	return c
}

// warnDefaults warns about each config value (Options.Defaults) that
// differs from what the suite stores and that no flag (c) changes: the
// stored setting wins, and the operator is told so and how to change it.
// The config's architectures are added as always (a list only grows).
func (r *Repo) warnDefaults(stored Settings, c SettingsChange) {
	d := r.opts.Defaults
	warn := func(field, config, kept, change string) {
		r.opts.Logger.Warn(fmt.Sprintf("the config's repo: %s: %s is not applied: suite %s keeps its stored %s %s (set when it was created or by an earlier --%s); %s", field, config, stored.Suite, field, kept, field, change),
			"suite", stored.Suite, "setting", field, "stored", kept, "config", config)
	}
	// A field apt clients compare (apply's breaks): the flag alone is
	// refused, which the warning advised.
	str := func(field string, def, flag *string, kept string, breaks bool) {
		if def != nil && flag == nil && *def != kept {
			change := fmt.Sprintf("give --%s to change it", field)
			if breaks {
				change = fmt.Sprintf("give --%s with --allow-field-change to change it: apt clients that updated from the suite then fail until an administrator accepts the change on each", field)
			}
			warn(field, strconv.Quote(*def), strconv.Quote(kept), change)
		}
	}
	str("origin", d.Origin, c.Origin, stored.Origin, true)
	str("label", d.Label, c.Label, stored.Label, true)
	str("codename", d.Codename, c.Codename, stored.Codename, true)
	str("description", d.Description, c.Description, stored.Description, false)
	if d.ValidFor != nil && c.ValidFor == nil && Duration(*d.ValidFor) != stored.ValidFor {
		warn("valid-for", d.ValidFor.String(), time.Duration(stored.ValidFor).String(), "give --valid-for to change it")
	}
	if d.Keep != nil && c.Keep == nil && *d.Keep != stored.Keep {
		warn("keep", strconv.Itoa(*d.Keep), strconv.Itoa(stored.Keep), "give --keep to change it")
	}
}

// FieldChangeError refuses a settings change that apt clients would reject.
// The repository is unchanged.
type FieldChangeError struct {
	Suite   string
	Changes []FieldChange
}

// FieldChange is one refused change and what clients would do about it.
type FieldChange struct {
	Field, From, To string
	Clients         string // what every client that already updated will do
}

func (e *FieldChangeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "repo: suite %s: refusing a change that apt clients reject:", e.Suite)
	for _, c := range e.Changes {
		fmt.Fprintf(&b, "\n  %s %q -> %q: %s", c.Field, c.From, c.To, c.Clients)
	}
	return b.String()
}

// defaultSettings are a new suite's settings before any change.
func defaultSettings(suite string) Settings {
	return Settings{Format: settingsFormat, Suite: suite, Codename: suite, Keep: DefaultKeep}
}

// check refuses a value the Release file cannot carry, before anything
// is compared or written.
func (c SettingsChange) check() error {
	for _, f := range []struct {
		name string
		v    *string
	}{{"Origin", c.Origin}, {"Label", c.Label}, {"Description", c.Description}} {
		if f.v != nil {
			if err := aptname.Field(f.name, *f.v); err != nil {
				return err
			}
		}
	}
	if c.Codename != nil && *c.Codename != "" {
		return aptname.Codename(*c.Codename)
	}
	return nil
}

// apply returns s changed by c and signed by signer; exists says whether
// the suite has been published (only then can a change break clients).
func (s Settings) apply(c SettingsChange, signer *Signer, exists bool) (Settings, error) {
	if err := c.check(); err != nil {
		return s, invalid(err)
	}
	signingKeys := signer.Fingerprints()
	out := s
	out.Architectures = slices.Clone(s.Architectures)
	out.Components = slices.Clone(s.Components)
	var refused []FieldChange
	set := func(field string, dst *string, v *string, breaks bool) {
		if v == nil || *v == *dst {
			return
		}
		if breaks && exists && !c.AllowFieldChange {
			refused = append(refused, FieldChange{Field: field, From: *dst, To: *v, Clients: fmt.Sprintf(
				"apt-get update fails on every client that has updated from this suite (\"Repository ... changed its '%s' value from '%s' to '%s'\", exit 100) until an administrator runs apt-get update --allow-releaseinfo-change-%s on it; apt preferences and Puppet pins on the old value stop matching",
				field, *dst, *v, strings.ToLower(field))})
			return
		}
		*dst = *v
	}
	set("Origin", &out.Origin, c.Origin, true)
	set("Label", &out.Label, c.Label, true)
	codename := c.Codename
	if codename != nil && *codename == "" {
		codename = &out.Suite // an empty codename means the default: the suite
	}
	set("Codename", &out.Codename, codename, true)
	set("Description", &out.Description, c.Description, false)
	for _, a := range c.Architectures {
		if err := aptname.IndexArchitecture(a); err != nil {
			return s, invalid(err)
		}
		out.Architectures = addSorted(out.Architectures, a)
	}
	if c.ValidFor != nil {
		if err := aptname.ValidFor(*c.ValidFor); err != nil {
			return s, invalid(err)
		}
		out.ValidFor = Duration(*c.ValidFor)
	}
	if c.Keep != nil {
		if *c.Keep < 1 {
			return s, fmt.Errorf("%w: keep %d: at least the live generation is kept (want 1 or more; 2 or more to roll back)", ErrInvalid, *c.Keep)
		}
		out.Keep = *c.Keep
	}
	var dropped []string
	for _, k := range s.SigningKeys {
		if !signer.signs(k) {
			dropped = append(dropped, k)
		}
	}
	if exists && len(dropped) > 0 && !c.AllowFieldChange {
		refused = append(refused, FieldChange{Field: "signing keys", From: strings.Join(s.SigningKeys, " "), To: strings.Join(signingKeys, " "), Clients: fmt.Sprintf(
			"clients whose signed-by keyring holds only %s refuse every update (NO_PUBKEY); sign with the old and the new key together (--key OLD --key NEW) until every client has the new key, then drop the old one with --allow-field-change",
			strings.Join(dropped, ", "))})
	}
	out.SigningKeys = sortedCopy(signingKeys)
	if len(refused) > 0 {
		return s, &FieldChangeError{Suite: s.Suite, Changes: refused}
	}
	return out, nil
}

// addSorted adds v to the sorted set list.
func addSorted(list []string, v string) []string {
	i, found := slices.BinarySearch(list, v)
	if found {
		return list
	}
	return slices.Insert(list, i, v)
}

// marshal renders the settings file.
func (s Settings) marshal() []byte {
	data, _ := json.MarshalIndent(s, "", "  ") //nolint:errchkjson // plain strings, ints and slices
	return append(data, '\n')
}

// readSettings reads a generation's settings file. A missing file (a
// generation written before settings were stored) gives the settings its
// Release and InRelease imply.
func readSettings(genDir, suite string, rel *parsedRelease) (Settings, error) {
	name := filepath.Join(genDir, settingsFile)
	data, err := readFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return settingsFromRelease(genDir, suite, rel), nil
	}
	if err != nil {
		return Settings{}, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s; the suite's settings are unreadable: delete this file to rebuild them from the generation's Release and InRelease, then check them with 'updeb repo history %s'",
			ErrInvalid, name, fmt.Sprintf(format, args...), suite)
	}
	var s Settings
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, bad("%v", err)
	}
	switch {
	case s.Format > settingsFormat:
		return Settings{}, fmt.Errorf("%w: %s: settings format %d is newer than this updeb understands (%d): upgrade updeb", ErrInvalid, name, s.Format, settingsFormat)
	case s.Format < 1:
		return Settings{}, bad("no settings format")
	case s.Suite != suite:
		return Settings{}, bad("suite %q, but the file is in suite %s", s.Suite, suite)
	case s.Keep < 1:
		return Settings{}, bad("keep %d (want 1 or more)", s.Keep)
	}
	// The fields clients hold the suite to are the signed Release's: a
	// settings file that says otherwise was changed outside updeb, and the
	// next write (a refresh from a timer) signed the change without the
	// refusal a flag gets (FieldChangeError), and every client failed.
	releaseCodename := cmp.Or(rel.codename, suite)
	for _, f := range []struct{ name, stored, signed string }{{"Origin", s.Origin, rel.origin}, {"Label", s.Label, rel.label}, {"Codename", s.Codename, releaseCodename}} {
		if f.stored != f.signed {
			return Settings{}, bad("%s %q, but the generation's Release, which its InRelease signs, says %q (a change clients refuse is made with --%s and --allow-field-change)", f.name, f.stored, f.signed, strings.ToLower(f.name))
		}
	}
	for _, a := range s.Architectures {
		if aptname.Architecture(a) != nil {
			return Settings{}, bad("architecture %q", a)
		}
	}
	for _, c := range s.Components {
		if validListedComponent(c) != nil {
			return Settings{}, bad("component %q", c)
		}
	}
	sort.Strings(s.Architectures)
	sort.Strings(s.Components)
	return s, nil
}

// settingsFromRelease derives the settings of a generation written before
// settings were stored: the Release fields, Valid-Until - Date, and the
// issuers of InRelease's signatures.
func settingsFromRelease(genDir, suite string, rel *parsedRelease) Settings {
	s := defaultSettings(suite)
	s.Origin, s.Label, s.Codename, s.Description = rel.origin, rel.label, rel.codename, rel.description
	if s.Codename == "" {
		s.Codename = suite
	}
	s.Architectures = sortedCopy(rel.archs)
	s.Components = sortedCopy(rel.comps)
	if !rel.validUntil.IsZero() && rel.validUntil.After(rel.date) {
		s.ValidFor = Duration(rel.validUntil.Sub(rel.date))
	}
	if data, err := readFile(filepath.Join(genDir, "InRelease")); err == nil {
		s.SigningKeys = signatureIssuers(data)
	}
	return s
}

func sortedCopy(list []string) []string {
	out := slices.Clone(list)
	sort.Strings(out)
	return out
}

// signatureIssuers returns the issuer fingerprints of a clearsigned message's
// signatures (nil when it cannot tell).
func signatureIssuers(clearsigned []byte) []string {
	block, _ := clearsign.Decode(clearsigned)
	if block == nil {
		return nil
	}
	var out []string
	pr := packet.NewReader(block.ArmoredSignature.Body)
	for {
		p, err := pr.Next()
		if err != nil {
			return out
		}
		if sig, ok := p.(*packet.Signature); ok && len(sig.IssuerFingerprint) > 0 {
			out = append(out, strings.ToUpper(fmt.Sprintf("%x", sig.IssuerFingerprint)))
		}
	}
}

// settingsDiff returns what changed from old to new, as "Field: old -> new".
func settingsDiff(old, new Settings) []string {
	var out []string
	add := func(field string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			out = append(out, fmt.Sprintf("%s: %q -> %q", field, fmt.Sprint(a), fmt.Sprint(b)))
		}
	}
	add("Origin", old.Origin, new.Origin)
	add("Label", old.Label, new.Label)
	add("Codename", old.Codename, new.Codename)
	add("Description", old.Description, new.Description)
	add("Architectures", strings.Join(old.Architectures, " "), strings.Join(new.Architectures, " "))
	add("valid-for", time.Duration(old.ValidFor), time.Duration(new.ValidFor))
	add("keep", old.Keep, new.Keep)
	add("signing keys", strings.Join(old.SigningKeys, " "), strings.Join(new.SigningKeys, " "))
	return out
}
