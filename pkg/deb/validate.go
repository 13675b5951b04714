package deb

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/updeb/updeb/pkg/control"
	"github.com/updeb/updeb/pkg/debversion"
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// checkVersionSyntax checks [epoch:]upstream[-revision] as dpkg does
// (pkg/debversion.Parse, the one home of the rule) and returns why it is
// refused, naming the part and the value.
func checkVersionSyntax(v string) error {
	_, err := debversion.Parse(v)
	if se, ok := errors.AsType[*debversion.SyntaxError](err); ok {
		return errors.New(se.Detail)
	}
	return err
}

// ownFields are written from Control's own members or computed; Extra must not
// set them.
var ownFields = []string{"Package", "Version", "Architecture", "Maintainer", "Installed-Size",
	"Pre-Depends", "Depends", "Recommends", "Suggests", "Enhances", "Conflicts", "Breaks", "Replaces",
	"Provides", "Section", "Priority", "Multi-Arch", "Homepage", "Description"}

func singleLine(name, value string) error {
	if err := CheckFieldText(value, false); err != nil {
		return invalidf("control field %s: value %q %v", name, value, err)
	}
	return nil
}

// CheckFieldText returns why Write refuses value as the text of a control
// field, or of a part of one that is one line (a relation, the synopsis):
// a control character other than tab, which dpkg's parser and Debian policy
// 5.1 refuse in DEBIAN/control (control.ParseStrict, which Inspect reads it
// with), a line break where multiline is false, or, in a multi-line text, a
// line of white space other than spaces and tabs (U+00A0, U+2003). The
// recipe loader checks a recipe's control texts with it, so that lint
// refuses at the recipe's line what Write would refuse at build time.
func CheckFieldText(value string, multiline bool) error {
	for _, c := range value {
		switch {
		case c == '\n' && !multiline:
			return errors.New("must be a single line")
		case c == '\n' || c == '\t':
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("must not hold the control character %q", c)
		}
	}
	if !multiline {
		return nil
	}
	// Write drops the spaces and tabs that end a line (a line of them is an
	// empty line, written "."), not other white space: a line of only
	// U+00A0 is one dpkg takes, and one that lintian (which then skips the
	// package: "Continuation line not in paragraph") and control.ParseStrict
	// read as a blank line inside the value.
	for i, line := range strings.Split(value, "\n") {
		if strings.TrimSpace(line) == "" && strings.Trim(line, " \t") != "" {
			return fmt.Errorf("line %d holds only white space (%+q), which lintian reads as a blank line that ends the control file: leave the line empty for a paragraph break", i+1, strings.Trim(line, " \t"))
		}
	}
	return nil
}

func validateControl(c *Control) []error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// The rules of single fields are checkControl's (controlcheck.go), which
	// runs them again on the rendered paragraph below: the same functions, so
	// a package Write accepts is one Inspect accepts.
	field := func(name string, err error) {
		if err != nil {
			add(invalidf("control field %s: %v", name, err))
		}
	}
	field("Package", checkPackageField(c.Package))
	field("Version", checkVersionField(c.Version))
	field("Architecture", checkArchitectureField(c.Architecture))
	for _, f := range []struct{ name, value string }{
		{"Maintainer", c.Maintainer}, {"Description", c.Summary},
	} {
		if strings.TrimSpace(f.value) == "" {
			add(invalidf("control field %s: required, found %q", f.name, f.value))
		}
	}
	for _, f := range []struct{ name, value string }{
		{"Maintainer", c.Maintainer}, {"Section", c.Section}, {"Priority", c.Priority},
		{"Multi-Arch", c.MultiArch}, {"Homepage", c.Homepage}, {"Description (Summary)", c.Summary},
	} {
		add(singleLine(f.name, f.value))
	}
	field("Multi-Arch", checkMultiArchField(c.MultiArch, c.Architecture))
	for _, rel := range c.relations() {
		for _, r := range rel.values {
			if strings.TrimSpace(r) == "" {
				add(invalidf("control field %s: empty relation in %q", rel.name, rel.values))
			}
			add(singleLine(rel.name, r))
		}
	}
	if strings.ContainsAny(c.Description, "\r\x00") {
		add(invalidf("control field Description: extended description %q contains a carriage return or NUL", c.Description))
	}
	seen := map[string]bool{}
	for _, f := range c.Extra {
		if err := control.ValidateFieldName(f.Name); err != nil {
			add(invalidf("control field %q in Extra: %v", f.Name, err))
			continue
		}
		for _, own := range ownFields {
			if strings.EqualFold(f.Name, own) {
				add(invalidf("control field %s in Extra: set by Control or computed by the writer, found %q", f.Name, f.Value))
			}
		}
		if seen[strings.ToLower(f.Name)] {
			add(invalidf("control field %s in Extra: duplicate, found again with %q", f.Name, f.Value))
		}
		seen[strings.ToLower(f.Name)] = true
		if strings.TrimSpace(f.Value) == "" {
			add(invalidf("control field %s in Extra: empty value", f.Name))
		} else if err := control.ValidateValue(f.Name, f.Value, true); err != nil {
			add(invalidf("control field %s in Extra: %v", f.Name, err))
		}
	}
	if len(errs) == 0 {
		// What Write writes must pass what Inspect checks, so that every
		// package built can be published: the same parser and field checks
		// (relationship syntax, control characters, size, ...).
		rendered := c.Paragraph(0)
		p, err := control.ParseStrict(rendered.Bytes(), "DEBIAN/control")
		if err != nil {
			return []error{invalidf("%v", err)}
		}
		for _, err := range checkControl(p) {
			add(invalidf("%v", err))
		}
	}
	return errs
}

var scriptNames = []string{"preinst", "postinst", "prerm", "postrm", "config"}

func validateScripts(scripts []Script) []error {
	var errs []error
	seen := map[string]bool{}
	for _, s := range scripts {
		known := false
		for _, n := range scriptNames {
			known = known || s.Name == n
		}
		if !known {
			errs = append(errs, invalidf("script %q: expected one of %s", s.Name, strings.Join(scriptNames, ", ")))
		}
		if seen[s.Name] {
			errs = append(errs, invalidf("script %q: given twice", s.Name))
		}
		seen[s.Name] = true
		if m := scriptMode(s); m&0o555 != 0o555 || m&^0o775 != 0 {
			errs = append(errs, invalidf("script %s: mode %#o: expected >= 0555 and <= 0775 (0755 normally)", s.Name, uint32(s.Mode)))
		}
	}
	return errs
}

// scriptMode is the mode a script gets; special, type and other bits
// (chmod's 04000 given as fs.FileMode(0o4755), which UnixMode drops) are
// kept so that validation sees and refuses them.
func scriptMode(s Script) fs.FileMode {
	if s.Mode == 0 {
		return 0o755
	}
	m := fs.FileMode(UnixMode(s.Mode))
	if s.Mode&^(fs.ModePerm|specialBits) != 0 {
		m |= 0o10000
	}
	return m
}

// dpkg unpacks every entry as PATH.dpkg-new (and moves what it replaces
// aside as PATH.dpkg-tmp) before renaming it into place, so an entry's
// path and last name must leave room for those 9 bytes: within Linux's
// PATH_MAX (4095 bytes without the NUL) and NAME_MAX (255), or dpkg stops
// the unpack with "File name too long". A conffile needs one byte more:
// where the installed one was changed, dpkg keeps the package's version
// beside it as PATH.dpkg-dist. MaxPath is counted from the root of a
// system installed at "/" (dpkg --root=DIR has len(DIR) bytes less).
const (
	MaxPath = 4095 - len(".dpkg-new")
	MaxName = 255 - len(".dpkg-new")
)

// PathLengthProblem is why dpkg cannot unpack the absolute path p for its
// length (see MaxPath and MaxName), or "".
func PathLengthProblem(p string) string { return lengthProblem(p, "unpacks it as", ".dpkg-new") }

// ConffileLengthProblem is PathLengthProblem for a conffile: why dpkg
// cannot read p in DEBIAN/conffiles (MaxConffileLine) or keep the
// package's version of p beside a changed one, or "".
func ConffileLengthProblem(p string) string {
	if len(p) > MaxConffileLine {
		return fmt.Sprintf("is %d bytes long: dpkg -i reads a line of DEBIAN/conffiles into %d bytes, its newline included, and refuses a longer one (\"conffile name ... is too long\"), so at most %d", len(p), MaxConffileLine+1, MaxConffileLine)
	}
	return lengthProblem(p, "keeps the package's version of a changed conffile as", ".dpkg-dist")
}

// MaxConffileLine is the longest line of DEBIAN/conffiles dpkg -i takes,
// without its newline: deb_parse_conffiles reads it with fgets into 998
// bytes (MAXCONFFILENAME less 2), the NUL included, and refuses a line
// that does not end there (measured with dpkg 1.21: 996 installs, 997 is
// refused, where dpkg-deb --build takes up to 999).
const MaxConffileLine = 996

// lengthProblem is why dpkg cannot write p with suffix added, as it does
// ("unpacks it as" and the like), or "".
func lengthProblem(p, does, suffix string) string {
	if max := 4095 - len(suffix); len(p) > max {
		return fmt.Sprintf("is %d bytes long: dpkg %s PATH%s, which must fit in a Linux path (4095 bytes), so at most %d", len(p), does, suffix, max)
	}
	for c := range strings.SplitSeq(p, "/") {
		if max := 255 - len(suffix); len(c) > max {
			return fmt.Sprintf("has a name of %d bytes: dpkg %s NAME%s, which must fit in a file name (255 bytes), so at most %d", len(c), does, suffix, max)
		}
	}
	return ""
}

// checkPath refuses what dpkg refuses in a data.tar name (NUL, a newline),
// a path too long for dpkg to unpack (PathLengthProblem) and anything but
// an absolute, clean path, which md5sums and conffiles list one a line.
// Every other byte is dpkg's to take: spaces, backslashes (systemd's
// "\x2d"), UTF-8 and other bytes, tabs, carriage returns.
func checkPath(what, p string) error {
	if strings.ContainsAny(p, "\n\x00") {
		return invalidf("%s %q: contains a newline or NUL, which dpkg refuses in a file name", what, shorten(p))
	}
	if !strings.HasPrefix(p, "/") || p == "/" || path.Clean(p) != p {
		return invalidf("%s %q: expected an absolute, clean path below / (no ., .., // or trailing /)", what, shorten(p))
	}
	if problem := PathLengthProblem(p); problem != "" {
		return invalidf("%s %q: %s", what, shorten(p), problem)
	}
	return nil
}

// ConffileSpace is the white space dpkg drops from the end of a line of
// DEBIAN/conffiles (C's isspace: form feed and vertical tab too): a
// conffile whose name ends in one is recorded under another name.
const ConffileSpace = " \t\n\v\f\r"

// checkConffile adds dpkg's conffile rules to checkPath's: dpkg records
// conffiles as "PATH DIGEST" lines of its status file, which keep neither
// a carriage return nor white space at the end of a path, and keeps the
// package's version of a changed one as PATH.dpkg-dist
// (ConffileLengthProblem).
func checkConffile(c string) error {
	if err := checkPath("conffile", c); err != nil {
		return err
	}
	if strings.ContainsRune(c, '\r') || strings.TrimRight(c, ConffileSpace) != c {
		return invalidf("conffile %q: a carriage return or trailing white space, which dpkg's record of conffiles loses", c)
	}
	if problem := ConffileLengthProblem(c); problem != "" {
		return invalidf("conffile %q: %s", shorten(c), problem)
	}
	return nil
}

func validateConffiles(conffiles []string, byPath map[string]*item) []error {
	var errs []error
	seen := map[string]bool{}
	for _, c := range conffiles {
		if err := checkConffile(c); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[c] {
			errs = append(errs, invalidf("conffile %q: listed twice", c))
		}
		seen[c] = true
		it, ok := byPath[c]
		switch {
		case !ok:
			errs = append(errs, invalidf("conffile %q: not in the package's data", c))
		case it.typ != TypeFile && it.typ != TypeHardlink:
			errs = append(errs, invalidf("conffile %q: is a %s in the package's data, expected a regular file", c, it.typ))
		}
	}
	return errs
}

func validateTriggers(t string) []error {
	if strings.ContainsAny(t, "\r\x00") {
		return []error{invalidf("triggers %q: contains a carriage return or NUL", t)}
	}
	var errs []error
	for i, line := range strings.Split(t, "\n") {
		if len(line) > maxTriggerLine {
			errs = append(errs, invalidf("triggers line %d: %d bytes, more than the %d dpkg reads in a line (it refuses the package)", i+1, len(line), maxTriggerLine))
			continue
		}
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := CheckTrigger(line); err != nil {
			errs = append(errs, invalidf("triggers line %d: %v", i+1, err))
		}
	}
	return errs
}

// triggerDirectives are the directives of DEBIAN/triggers (deb-triggers(5)).
var triggerDirectives = []string{"interest", "interest-await", "interest-noawait", "activate", "activate-await", "activate-noawait"}

// CheckTrigger checks one line of DEBIAN/triggers as dpkg reads it
// (deb-triggers(5)): a directive (interest, interest-await,
// interest-noawait, activate, activate-await, activate-noawait) and one
// trigger name: a file trigger is an absolute path, an explicit trigger a
// word of printable ASCII; neither holds white space. An interest's name
// is one dpkg can classify (trig_classify_byname), or it refuses to
// install the package ("invalid or unknown syntax in trigger name"): a
// path below / without empty components, or a name that starts with a
// letter or digit followed by letters, digits, "+", "-" and "." (a package
// name's characters, "_" not among them). Directive and name, one space
// apart, fit in the maxTriggerLine bytes dpkg reads in a line.
func CheckTrigger(line string) error {
	f := strings.Fields(line)
	if len(f) != 2 {
		return fmt.Errorf("%q: expected DIRECTIVE NAME (one of %s, then one trigger name)", line, strings.Join(triggerDirectives, ", "))
	}
	directive, name := f[0], f[1]
	known := false
	for _, d := range triggerDirectives {
		known = known || d == directive
	}
	if !known {
		return fmt.Errorf("%q: unknown directive %q: expected one of %s", line, directive, strings.Join(triggerDirectives, ", "))
	}
	for i := 0; i < len(name); i++ {
		if name[i] <= ' ' || name[i] >= 0x7f {
			return fmt.Errorf("%q: trigger name %q: printable ASCII only (dpkg's rule)", line, name)
		}
	}
	if n := len(directive) + 1 + len(name); n > maxTriggerLine {
		// However it is written: dpkg refuses the package at unpack.
		return fmt.Errorf("%s %s: %d bytes, more than the %d dpkg reads in a line of triggers (it refuses the package)", directive, shorten(name), n, maxTriggerLine)
	}
	if strings.HasPrefix(name, "/") && path.Clean(name) != name {
		return fmt.Errorf("%q: file trigger %q is not a clean absolute path (write %q)", line, name, path.Clean(name))
	}
	if strings.HasPrefix(directive, "interest") && !interestName(name) {
		return fmt.Errorf("%q: dpkg refuses an interest in %q (\"invalid or unknown syntax in trigger name\"): a file trigger is a path below /, an explicit trigger a name of letters, digits, +, - and . that starts with a letter or digit", line, name)
	}
	return nil
}

// interestName reports whether dpkg classifies name, a clean file trigger
// or a word of printable ASCII (CheckTrigger), as a trigger one can be
// interested in (trig_classify_byname).
func interestName(name string) bool {
	if strings.HasPrefix(name, "/") {
		return name != "/"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("+-.", rune(c))) {
			return false
		}
	}
	return true
}
