package debversion

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrConstraint is wrapped by every constraint parse error.
var ErrConstraint = errors.New("invalid constraint")

// Constraint is a parsed version constraint over upstream versions: every
// clause must hold. It is the one constraint grammar of updeb: a recipe's
// requires and watch track, and the compatibility tables, all use it.
//
// Grammar (clauses separated by white space and/or commas; all must hold):
//
//	constraint = clause { [","] clause }
//	clause     = [op] version | "~" version | wildcard
//	op         = ">=" | "<=" | ">>" | "<<" | ">" | "<" | "=" | "==" | "!="
//	version    = an upstream version, optional leading "v" ("1.31", "1.31.4", "v1.30.0-rc.1")
//	wildcard   = a version followed by ".x", ".X" or ".*" ("1.31.x", "3.*")
//
// White space may separate an operator from its version (">= 1.29"). ">>"
// and "<<" are Debian's spelling of ">" and "<" (strictly greater, strictly
// less); ">" and "<" are strict too, unlike dpkg's obsolete relations. A
// version without op, and a wildcard, mean "=". "~1.31.4" means ">=1.31.4
// <1.32", "~1.31" means ">=1.31 <1.32" and "~1" means ">=1 <2". There is no
// "or", and no epoch or Debian revision: the versions are upstream ones.
//
// Versions are compared with Debian ordering (Compare) after FromUpstream
// ("1.30.0-rc.1" becomes "1.30.0~rc.1", before 1.30.0). A bound that is only
// numbers ("1.33") is patch-agnostic: a version with more numeric components is
// cut to the bound's length before comparing, so "<=1.32" allows 1.32.9,
// "<1.33" refuses 1.33.0 (and 1.33.0-rc.1), and "=1.31" allows every 1.31.x.
type Constraint struct {
	text    string
	clauses []clause
}

type clause struct {
	op    string // one of >=, <=, >, <, =, !=
	bound string // normalised (FromUpstream)
}

// String returns the constraint as written.
func (c Constraint) String() string { return c.text }

// ops are the operators, longest first so that ">=" is not read as ">".
var ops = []string{">=", "<=", ">>", "<<", "==", "!=", ">", "<", "=", "~"}

// canonicalOp maps an operator to the comparison it means.
var canonicalOp = map[string]string{
	"": "=", "=": "=", "==": "=", "!=": "!=",
	">=": ">=", "<=": "<=", ">": ">", ">>": ">", "<": "<", "<<": "<",
}

// ParseConstraint parses a constraint (see Constraint for the grammar).
func ParseConstraint(s string) (Constraint, error) {
	c := Constraint{text: s}
	fail := func(format string, args ...any) (Constraint, error) {
		return Constraint{}, fmt.Errorf("%w %q: %s", ErrConstraint, s, fmt.Sprintf(format, args...))
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	for i := 0; i < len(fields); i++ {
		tok := fields[i]
		op := ""
		for _, o := range ops {
			if strings.HasPrefix(tok, o) {
				op = o
				break
			}
		}
		v := tok[len(op):]
		if v == "" && op != "" { // ">= 1.29": the version is the next field
			if i+1 == len(fields) {
				return fail("operator %q has no version after it", op)
			}
			i++
			v = fields[i]
		}
		if strings.ContainsAny(v, "<>=!~") {
			return fail("unexpected operator inside %q", tok)
		}
		if base, ok := wildcard(v); ok {
			if op != "" {
				return fail("wildcard %q cannot follow an operator", v)
			}
			v = base
		}
		norm, err := FromUpstream(v)
		if err != nil {
			return fail("version %q: %v", v, err)
		}
		if op == "~" {
			nums := leadingParts(norm)
			if len(nums) == 0 {
				return fail("~ needs a numeric version, found %q", v)
			}
			// The upper bound bumps the minor (the major when only it is given),
			// in decimal: a number of any length has a next one.
			upper := append([]string(nil), nums[:min(len(nums), 2)]...)
			upper[len(upper)-1] = increment(upper[len(upper)-1])
			c.clauses = append(c.clauses, clause{">=", norm}, clause{"<", strings.Join(upper, ".")})
			continue
		}
		c.clauses = append(c.clauses, clause{canonicalOp[op], norm})
	}
	if len(c.clauses) == 0 {
		return fail("no version in constraint")
	}
	return c, nil
}

// wildcard recognises "1.31.x" / "1.31.*" and returns "1.31".
func wildcard(v string) (string, bool) {
	for _, suf := range []string{".x", ".X", ".*"} {
		if base, ok := strings.CutSuffix(v, suf); ok && base != "" {
			return base, true
		}
	}
	return "", false
}

// Allows reports whether the upstream version satisfies every clause. It fails
// when version is not a valid upstream version (see FromUpstream).
func (c Constraint) Allows(version string) (bool, error) {
	norm, err := FromUpstream(version)
	if err != nil {
		return false, err
	}
	for _, cl := range c.clauses {
		cmp, err := compareToBound(norm, cl.bound)
		if err != nil {
			return false, err
		}
		ok := false
		switch cl.op {
		case ">=":
			ok = cmp >= 0
		case "<=":
			ok = cmp <= 0
		case ">":
			ok = cmp > 0
		case "<":
			ok = cmp < 0
		case "=":
			ok = cmp == 0
		case "!=":
			ok = cmp != 0
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// compareToBound compares a normalised version with a normalised bound,
// patch-agnostically when the bound is purely numeric and shorter.
func compareToBound(version, bound string) (int, error) {
	bn := leadingParts(bound)
	if strings.Join(bn, ".") == bound {
		if vn := leadingParts(version); len(vn) > len(bn) {
			version = strings.Join(vn[:len(bn)], ".")
		}
	}
	// Both are upstream versions; "-0" makes them complete Debian versions so
	// that a "-" inside cannot be read as a revision.
	return CompareStrings(version+"-0", bound+"-0")
}

// LeadingNumbers returns the leading dot-separated decimal numbers of an
// upstream version ("1.31.4~rc.1" gives [1 31 4], "v1.2" gives nothing: map it
// with FromUpstream first). A number too large for an int ends the list.
func LeadingNumbers(v string) []int {
	var out []int
	for _, p := range leadingParts(v) {
		n, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		out = append(out, n)
	}
	return out
}

// leadingParts returns the leading dot-separated runs of digits of v, as
// written and of any length ("1.31.4~rc.1" gives "1", "31", "4"): constraints
// compare and bump them as text, so that a number beyond int64 is no
// different from any other.
func leadingParts(v string) []string {
	var out []string
	for v != "" {
		i := 0
		for i < len(v) && isDigit(v[i]) {
			i++
		}
		if i == 0 {
			break
		}
		out = append(out, v[:i])
		if i == len(v) || v[i] != '.' {
			break
		}
		v = v[i+1:]
	}
	return out
}

// increment returns the decimal number n+1 for the digits n ("099" gives "100").
func increment(n string) string {
	b := []byte(n)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}
