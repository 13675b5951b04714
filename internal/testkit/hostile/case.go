package hostile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Case is one hostile fixture (testdata/hostile/CLASS/NAME.yaml).
type Case struct {
	About     string            `yaml:"about"`     // what the case attacks, in one line
	Copy      map[string]string `yaml:"copy"`      // into the work folder: destination -> source
	Setup     []Setup           `yaml:"setup"`     // file-system objects git cannot hold, or that point outside
	Env       map[string]string `yaml:"env"`       // added to a minimal environment
	Proxy     string            `yaml:"proxy"`     // $PROXY: "trickle" (answers, then a body of one byte a second) or "trickle-all" (every byte, one a second)
	Before    [][]string        `yaml:"before"`    // updeb runs that must succeed first (not checked otherwise)
	Run       []Step            `yaml:"run"`       // the command lines under test, in order
	Absent    []string          `yaml:"absent"`    // globs in the work folder that must match nothing at the end
	Present   []string          `yaml:"present"`   // globs that must match something at the end
	Unchanged []string          `yaml:"unchanged"` // paths whose files must be byte-identical before Run and after
	// NoDefaultChecks turns off the checks every case gets (DefaultAbsent).
	NoDefaultChecks bool `yaml:"no-default-checks"`
}

// DefaultAbsent is what no case may leave behind: a build's staging folders
// and unfinished commit journals, and the cache's temporary files.
var DefaultAbsent = []string{"out/.updeb-build-*", "out/.updeb-state/commit-*", "cache/tmp/*"}

// Setup makes one file-system object in the work folder (paths relative to it).
type Setup struct {
	Symlink string            `yaml:"symlink"` // a symbolic link here ...
	To      string            `yaml:"to"`      // ... pointing there (as given)
	FIFO    string            `yaml:"fifo"`
	Mkdir   string            `yaml:"mkdir"`
	Write   string            `yaml:"write"`   // a file, with Content, or From (a file in the work folder) with Replace applied
	Content string            `yaml:"content"` //
	From    string            `yaml:"from"`
	Replace map[string]string `yaml:"replace"` // old -> new, each new repeated Times times
	Times   int               `yaml:"times"`   // 0 means once
	Remove  string            `yaml:"remove"`
	// Git makes a git repository of this folder with the real git: every
	// file under it committed (a fixed identity and date); Pack then packs
	// its objects and refs (git repack -a -d, pack-refs, prune-packed).
	Git  string `yaml:"git"`
	Pack bool   `yaml:"pack"`
}

// Step is one command line and what it must do.
type Step struct {
	Setup     []Setup  `yaml:"setup"` // applied just before the command
	Args      []string `yaml:"args"`
	Exit      *int     `yaml:"exit"`   // required unless KillAfter is set
	Stderr    []string `yaml:"stderr"` // substrings that must all appear
	Stdout    []string `yaml:"stdout"`
	NotStderr []string `yaml:"not-stderr"` // substrings that must not appear
	KillAfter Duration `yaml:"kill-after"` // SIGKILL (or Signal) after this long; the exit code is then not checked, unless Signal is given
	Signal    string   `yaml:"signal"`     // TERM or INT: sent at KillAfter instead of SIGKILL; Exit is then checked when given
	Timeout   Duration `yaml:"timeout"`    // the command must end within it (default DefaultTimeout)
}

// DefaultTimeout bounds a step without a timeout of its own.
const DefaultTimeout = 60 * time.Second

// Duration is a time.Duration written "300ms", "20s".
type Duration time.Duration

// UnmarshalYAML reads a Go duration.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v <= 0 {
		return fmt.Errorf("line %d: %q is not a positive duration", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Parse reads one case strictly (unknown fields are errors) and checks it.
func Parse(data []byte) (*Case, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Case
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty case")
		}
		return nil, err
	}
	var errs []string
	if strings.TrimSpace(c.About) == "" {
		errs = append(errs, "about: say what the case attacks")
	}
	if len(c.Run) == 0 {
		errs = append(errs, "run: at least one step")
	}
	for i, s := range c.Run {
		if len(s.Args) == 0 {
			errs = append(errs, fmt.Sprintf("run[%d]: no args", i))
		}
		if s.Exit == nil && s.KillAfter == 0 {
			errs = append(errs, fmt.Sprintf("run[%d]: exit is required (or kill-after)", i))
		}
		if s.Signal != "" && (s.KillAfter == 0 || (s.Signal != "TERM" && s.Signal != "INT")) {
			errs = append(errs, fmt.Sprintf("run[%d]: signal is TERM or INT, with kill-after", i))
		}
		errs = append(errs, checkSetup(fmt.Sprintf("run[%d].setup", i), s.Setup)...)
	}
	errs = append(errs, checkSetup("setup", c.Setup)...)
	if c.Proxy != "" && c.Proxy != "trickle" && c.Proxy != "trickle-all" {
		errs = append(errs, fmt.Sprintf("proxy: %q is not a known proxy (trickle, trickle-all)", c.Proxy))
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return &c, nil
}

func checkSetup(where string, ss []Setup) []string {
	var errs []string
	for i, s := range ss {
		n := 0
		for _, p := range []string{s.Symlink, s.FIFO, s.Mkdir, s.Write, s.Remove, s.Git} {
			if p != "" {
				n++
			}
		}
		switch {
		case n != 1:
			errs = append(errs, fmt.Sprintf("%s[%d]: give exactly one of symlink, fifo, mkdir, write, remove, git", where, i))
		case s.Symlink != "" && s.To == "":
			errs = append(errs, fmt.Sprintf("%s[%d]: symlink needs to", where, i))
		case s.Pack && s.Git == "":
			errs = append(errs, fmt.Sprintf("%s[%d]: pack goes with git", where, i))
		case s.Write != "" && s.From != "" && s.Content != "":
			errs = append(errs, fmt.Sprintf("%s[%d]: write takes content or from, not both", where, i))
		}
	}
	return errs
}
