package main

// The repository's flags and config, shared by publish and every repo
// subcommand: which repository, suite and component, its settings and keys.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/dsse"
	"github.com/updeb/updeb/pkg/provenance"
	"github.com/updeb/updeb/pkg/strictjson"
)

// repoOptions are the flags every command that works on the repository shares.
// Each falls back to the config file's repo: section, then to a default (see
// resolve); for publish, a package's own recipe may name its suite and
// component (recorded in its provenance record) and wins over the config.
// Suite settings (origin, label, ...) given by a flag are changes asked of
// the suite; the config's only set up a new suite (a suite's stored setting
// wins over the config, with a warning when they differ); neither keeps what
// the suite stores.
type repoOptions struct {
	dir              string
	suite            string
	component        string
	keyFiles         []string
	origin           string
	label            string
	codename         string
	description      string
	architectures    []string
	validFor         time.Duration
	keep             int
	allowFieldChange bool

	changed                func(flag string) bool // nil for commands that do not write
	cfgSuite, cfgComponent string                 // from the config, filled by resolve
	settings               repo.SettingsChange
	defaults               repo.SettingsChange // the config's: a new suite's settings only
}

func (o *repoOptions) addFlags(cmd *cobra.Command, writes bool) {
	f := cmd.Flags()
	f.StringVar(&o.dir, "repo", "", "repository folder (pool/ and dists/ live here; default: config repo.dir, else ./repo)")
	f.StringVar(&o.suite, "suite", "", "suite (dists/<suite>; default: the recipe's, else config repo.suite, else stable)")
	if !writes {
		return
	}
	o.changed = f.Changed
	f.StringVar(&o.component, "component", "", "component, for example component/kubernetes131 (default: the recipe's, else config repo.component, else main)")
	f.StringArrayVar(&o.keyFiles, "key", nil, "armored secret signing key (from 'updeb keys generate'), repeatable: every suite written is signed by each (a key rotation); default: config repo.key and repo.keys, else $UPDEB_SIGNING_KEY")
	f.StringVar(&o.origin, "origin", "", "Release Origin field (stored with the suite; default: the suite's)")
	f.StringVar(&o.label, "label", "", "Release Label field (stored with the suite; default: the suite's)")
	f.StringVar(&o.codename, "codename", "", "Release Codename field (stored with the suite; default: the suite's, at creation (publish or promote) config repo.codename, else the suite name)")
	f.StringVar(&o.description, "description", "", "Release Description field (stored with the suite)")
	f.StringSliceVar(&o.architectures, "architectures", nil, "architectures that always get an index, added to the suite's (Architecture: all packages go to each)")
	f.DurationVar(&o.validFor, "valid-for", 0, "Valid-Until = Date + this duration, stored with the suite (0: none); renew with 'updeb repo refresh'")
	f.IntVar(&o.keep, "keep", 0, fmt.Sprintf("generations with distinct packages kept for rollback, stored with the suite (default: the suite's, at creation %d)", repo.DefaultKeep))
	f.BoolVar(&o.allowFieldChange, "allow-field-change", false, "make a change apt clients refuse until an administrator accepts it on each (Origin, Label, Codename) or that drops a signing key")
}

// notTaken hides flags of the shared set (addFlags) that cmd does not read,
// and refuses them given (exit 2), with why: taken without a word, 'repo
// rollback --component X SUITE' rolled back every component of the suite,
// and 'repo gc --suite staging' collected every suite.
func notTaken(cmd *cobra.Command, why string, names ...string) {
	for _, n := range names {
		cmd.Flags().MarkHidden(n) //nolint:errcheck // addFlags made it
	}
	cmd.PreRunE = func(c *cobra.Command, _ []string) error {
		for _, n := range names {
			if c.Flags().Changed(n) {
				return invalidInput(fmt.Errorf("%s takes no --%s: %s", c.CommandPath(), n, why), helpHint(c))
			}
		}
		return nil
	}
}

// suiteOf is the suite of a command that takes one, as its argument or as
// --suite (flag), else def. Both, naming two suites, are refused (exit 2):
// 'repo history --suite production staging' showed staging without a word.
func suiteOf(flag string, args []string, def string) (string, error) {
	if len(args) == 0 {
		return first(flag, def), nil
	}
	if flag != "" && flag != args[0] {
		return "", usageErrorf("--suite %s and the argument %s name two suites: give one", flag, args[0])
	}
	return args[0], nil
}

// resolve fills what no flag gave from the config's repo: section and the
// defaults. Suite and component stay empty when neither names them, so that
// publish can use each package's recipe first (see target).
func (o *repoOptions) resolve(c *config.Config) {
	r := c.Repo
	o.dir = first(o.dir, r.Dir, "repo")
	if len(o.keyFiles) == 0 {
		for _, k := range append([]string{r.Key}, r.Keys...) {
			if k != "" {
				o.keyFiles = append(o.keyFiles, k)
			}
		}
	}
	if len(o.keyFiles) == 0 && getenv("UPDEB_SIGNING_KEY") != "" {
		o.keyFiles = []string{getenv("UPDEB_SIGNING_KEY")}
	}
	o.cfgSuite, o.cfgComponent = r.Suite, r.Component
	if o.changed == nil {
		return // a command that does not write
	}
	// A flag changes the suite; the config's values only set up a new suite
	// (repo.Options.Defaults): a suite's stored settings win over them, with
	// a warning when they differ.
	s, d := &o.settings, &o.defaults
	s.Origin, d.Origin = o.flag("origin", o.origin), nonEmpty(r.Origin)
	s.Label, d.Label = o.flag("label", o.label), nonEmpty(r.Label)
	s.Codename, d.Codename = o.flag("codename", o.codename), nonEmpty(r.Codename)
	s.Description, d.Description = o.flag("description", o.description), nonEmpty(r.Description)
	s.Architectures, d.Architectures = o.architectures, r.Architectures
	if o.changed("valid-for") {
		s.ValidFor = &o.validFor
	}
	if v := time.Duration(r.ValidFor); v > 0 {
		d.ValidFor = &v
	}
	if o.changed("keep") {
		s.Keep = &o.keep
	}
	if r.Keep > 0 {
		d.Keep = &r.Keep
	}
	s.AllowFieldChange = o.allowFieldChange
}

// flag returns the flag's value when it was given (even empty), else nil:
// keep what the suite stores.
func (o *repoOptions) flag(flag, value string) *string {
	if o.changed(flag) {
		return &value
	}
	return nil
}

// nonEmpty is a config value, nil when unset.
func nonEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// target is where one .deb goes: the flag, else the suite and component its
// recipe names (from the provenance record build wrote beside it), else the
// config's, else stable/main. A record whose text cannot be read in one
// reading (pkg/strictjson: a key twice, keys differing in case; a malformed
// envelope) is an error, not "no preference": the package would land
// elsewhere without a word; so is one larger than any record (dsse.MaxSize),
// and one about other bytes (sha256Hex is the .deb's): an older build's, or
// another package's, names where that build went. One that is no regular
// file is left unread.
func (o *repoOptions) target(deb, sha256Hex string) (suite, component string, err error) {
	var p recipeTarget
	if deb != "" && (o.suite == "" || o.component == "") {
		if p, err = readRecipeTarget(deb+pipeline.ProvenanceSuffix, filepath.Base(deb), sha256Hex); err != nil {
			return "", "", invalidInput(err, "the provenance record beside a package names its recipe's suite and component: build the package again, remove the record, or give --suite and --component; the repository is unchanged")
		}
	}
	return first(o.suite, p.Suite, o.cfgSuite, "stable"), first(o.component, p.Component, o.cfgComponent, "main"), nil
}

// recipeTarget is the suite and component a provenance record says the
// recipe names.
type recipeTarget struct {
	Component string `json:"component"`
	Suite     string `json:"suite"`
}

// readRecipeTarget reads them from the record at path (none: no record) of
// the package deb (its file name) whose sha256 is sha256Hex.
func readRecipeTarget(path, deb, sha256Hex string) (recipeTarget, error) {
	var st struct {
		PayloadType string               `json:"payloadType"` // an envelope dsse.Parse refused
		Payload     any                  `json:"payload"`
		Subject     []provenance.Subject `json:"subject"`
		Predicate   struct {
			BuildDefinition struct {
				ExternalParameters recipeTarget `json:"externalParameters"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	data, err := confined.ReadAtMost(path, dsse.MaxSize+1)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, confined.ErrRefused) {
		return recipeTarget{}, nil // none, or no record of build's (a device, a FIFO): left unread
	}
	if err != nil {
		return recipeTarget{}, err
	}
	if len(data) > dsse.MaxSize {
		// A regular file where build writes its record: one that large is
		// none of build's, and taken as no preference the package would
		// land in the config's suite and component without a word.
		return recipeTarget{}, fmt.Errorf("%s: larger than %d bytes, the largest record updeb reads", path, dsse.MaxSize)
	}
	env, envErr := dsse.Parse(data)
	if envErr == nil {
		data = env.Payload
	}
	// records of updeb before 2026-11 are the bare statement
	if err := strictjson.Unmarshal(data, &st); err != nil {
		if envErr != nil && strings.Contains(envErr.Error(), err.Error()) {
			err = nil // the envelope's error says it already: the bytes are no JSON to read either way
		}
		return recipeTarget{}, fmt.Errorf("%s: %w", path, errors.Join(envErr, err))
	}
	if envErr != nil && (st.PayloadType != "" || st.Payload != nil) {
		return recipeTarget{}, fmt.Errorf("%s: %w", path, envErr)
	}
	if len(st.Subject) > 0 && !aboutPackage(st.Subject, deb, sha256Hex) {
		var about []string
		for _, s := range st.Subject {
			about = append(about, fmt.Sprintf("%s (sha256 %s)", s.Name, first(s.Digest[string(digest.SHA256)], "none")))
		}
		return recipeTarget{}, fmt.Errorf("%s is not the record of %s (sha256 %s): it is about %s, another build's",
			path, deb, sha256Hex, strings.Join(about, ", "))
	}
	return st.Predicate.BuildDefinition.ExternalParameters, nil
}

// aboutPackage reports whether a record's subjects name the package deb
// with its sha256, as verify-provenance finds it: under its own name or,
// saved by apt with its epoch, under the pool's.
func aboutPackage(subjects []provenance.Subject, deb, sha256Hex string) bool {
	names := []string{deb}
	if name, ok := withoutAptEpoch(deb); ok {
		names = append(names, name)
	}
	for _, s := range subjects {
		if slices.Contains(names, s.Name) && strings.EqualFold(s.Digest[string(digest.SHA256)], sha256Hex) {
			return true
		}
	}
	return false
}

// open loads the config and the signing keys and returns the repository.
func (o *repoOptions) open(g *globalOptions) (*repo.Repo, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	o.resolve(cfg)
	if len(o.keyFiles) == 0 {
		return nil, usageErrorf("no signing key: pass --key FILE, set repo: key: in the config, or UPDEB_SIGNING_KEY")
	}
	var signers []*repo.Signer
	if slices.Contains(o.keyFiles, "") { // only a flag gives one: --key "" (repeatable, so not among fallbackFlags)
		return nil, emptyFlag("key")
	}
	for _, keyFile := range o.keyFiles {
		if inFolder(o.dir, keyFile) {
			return nil, invalidInput(fmt.Errorf("signing key %s lies in the repository folder %s, which is served to every client", keyFile, o.dir),
				"move it out of the repository folder (mode 0600, on the host that signs); if the repository was served with it there, make a new key and rotate to it (docs/operations.md, Key rotation)")
		}
		data, err := g.readSecretKey(keyFile, "a signing key (--key, repo: key:, UPDEB_SIGNING_KEY) is the file PREFIX.secret.asc that 'updeb keys generate' writes: name it, or create one")
		if err != nil {
			return nil, err
		}
		s, err := repo.ReadSigner(bytes.NewReader(data), keyFile)
		if err != nil {
			return nil, err
		}
		signers = append(signers, s)
	}
	signer, err := repo.JoinSigners(signers...)
	if err != nil {
		return nil, err
	}
	return repo.Open(o.dir, repo.Options{Settings: o.settings, Defaults: o.defaults, Signer: signer, Actor: actor(), Now: time.Now, Logger: g.logger()}), nil
}

// readSecretKey reads a signing key file (--key, repo: key:, build:
// provenance-key:) and warns when others than its owner may read or change
// it: its group (the file being the user's own, as ssh judges a private key
// file, which it refuses then) or every user of the host. A key file root
// owns and a service's group reads (0640 root:updeb) is a choice, not a slip.
// A public key file, which the caller refuses as such, holds no secret.
//
// A "path" that holds a line break or an armor header is the key itself (a
// CI secret put in $UPDEB_SIGNING_KEY as it is): it is refused without
// being printed, as an open error would print it, whole, into the log, and
// so is the key in base64 (the one line a masked CI variable holds). A
// file that cannot be read is an input error with hint.
func (g *globalOptions) readSecretKey(path, hint string) ([]byte, error) {
	line := strings.TrimRight(path, "\r\n")
	switch {
	case strings.ContainsAny(line, "\r\n") || strings.Contains(path, "-----BEGIN "):
		return nil, invalidInput(errors.New("a signing key is named by the path of its file, and this one is the key's text (not printed here)"),
			"write the key to a file only its owner can read, (umask 077; printf '%s\\n' \"$KEY\" > FILE), and name FILE")
	case signkey.Base64Key(line):
		return nil, invalidInput(errors.New("a signing key is named by the path of its file, and this one is the key's text in base64 (not printed here)"),
			"decode the key to a file only its owner can read, (umask 077; printf '%s' \"$KEY\" | base64 -d > FILE), and name FILE")
	case line != path:
		return nil, invalidInput(fmt.Errorf("the signing key's path %q ends with a line break", path),
			"remove it (a variable set from a file's text keeps its last line break)")
	}
	data, err := confined.ReadFile(path, signkey.MaxFileSize)
	if errors.Is(err, fs.ErrPermission) {
		hint = "the key file is there, but this user cannot read it: run as the user that owns it (a secret key stays mode 0600), or name a key this user owns"
	}
	if err != nil {
		return nil, invalidInput(err, hint)
	}
	if fi, err := os.Stat(path); err == nil && !signkey.PublicOnly(data) { // a public key is refused next, as one
		perm := fi.Mode().Perm()
		st, _ := fi.Sys().(*syscall.Stat_t)
		if perm&0o007 != 0 || (perm&0o070 != 0 && st != nil && int(st.Uid) == os.Geteuid()) {
			g.warnf("signing key %s is mode %04o: others than its owner can read or change this secret key; chmod 600 %s", path, perm, path)
		}
	}
	return data, nil
}

// inFolder reports whether the file name lies in the folder dir, or below
// it, once both are absolute and their symlinks resolved, or whether a
// symlink on the way to it does (a web server serves REPO/key.asc, a link
// to a key kept elsewhere, as the key).
func inFolder(dir, name string) bool {
	d, err := filepath.EvalSymlinks(dir)
	if err == nil {
		d, err = filepath.Abs(d)
	}
	if err != nil {
		return false
	}
	inside := func(n string) bool {
		rel, err := filepath.Rel(d, n)
		return err == nil && filepath.IsLocal(rel)
	}
	for range 40 { // as many links as the kernel follows in one path
		parent, err := filepath.EvalSymlinks(filepath.Dir(name))
		if err == nil {
			parent, err = filepath.Abs(parent)
		}
		if err != nil {
			return false
		}
		name = filepath.Join(parent, filepath.Base(name))
		if inside(name) {
			return true
		}
		target, err := os.Readlink(name)
		if err != nil {
			return false // no link (a file, or none): name is where it lies
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(parent, target)
		}
		name = target
	}
	return false
}

// actor names who runs updeb, user@host, for the repository's history.
func actor() string {
	name := getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

// openReadOnly loads the config and returns the repository for commands that
// do not sign (list, history, gc, verify). A folder that is not there (a
// mistyped --repo, the wrong working folder for ./repo) is refused: read as
// a repository with no suite, it listed nothing and exited 0.
func (o *repoOptions) openReadOnly(g *globalOptions) (*repo.Repo, *config.Config, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	o.resolve(cfg)
	if fi, err := os.Stat(o.dir); errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir() {
		why := "no such folder"
		if err == nil {
			why = "not a folder"
		}
		return nil, nil, invalidInput(fmt.Errorf("repository %s: %s", o.dir, why), "name the folder publish writes: --repo DIR, or repo: dir: in the config (default: ./repo)")
	}
	return repo.Open(o.dir, repo.Options{Logger: g.logger()}), cfg, nil
}
