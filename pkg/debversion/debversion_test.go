package debversion

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// versions whose every ordered pair is compared with dpkg: epochs, tildes,
// letters, digits, leading zeros, revisions, punctuation.
var corpus = []string{
	"0", "0.0", "0.1", "1", "1.0", "1.0-0", "1.0-1", "1.0-1.1", "1.0-2", "1.0-10", "1.0~rc1", "1.0~rc1-1",
	"1.0~~", "1.0~", "1.0+1", "1.0+b1", "1.0.1", "1.0a", "1.0A", "1.0.a", "01.00", "1.00", "1:0.1", "1:1.0",
	"2:0", "10", "9", "1.30.0~rc.1", "1.30.0", "1.30.0-1~wmf1", "1.30.0-1", "1.30.0-1+deb12u1", "1.30.10",
	"1.30.9", "3.15.4-1", "3.15.4-1~bpo12+1", "1.2.3-4ubuntu1", "1.2.3-4", "2.0.0+dfsg-1", "2.0.0-1",
	"1.0-a", "1.0-A", "1.0.0.0", "1.0+~", "1:1.0-1", "0:1.0-1",
}

// A hand-checked table: these expectations are dpkg's documented behaviour,
// written down independently of the implementation.
var known = []struct {
	a, b string
	want int
}{
	{"1.0", "1.0-0", 0},
	{"1.0~rc1", "1.0", -1},
	{"1.0~~", "1.0~", -1},
	{"1.0~", "1.0", -1},
	{"1.0", "1.0+1", -1},
	{"1.0", "1.0a", -1},
	{"1.0a", "1.0.1", -1}, // letters sort before non-letters such as "."
	{"1:0.1", "2.0", 1},
	{"0:1.0-1", "1.0-1", 0},
	{"01.00", "1.0", 0},
	{"1.30.0~rc.1", "1.30.0", -1},
	{"1.30.0-1~wmf1", "1.30.0-1", -1},
	{"1.30.10", "1.30.9", 1},
	{"1.0-10", "1.0-2", 1},
	{"1.0A", "1.0a", -1},
	{"3.15.4-1~bpo12+1", "3.15.4-1", -1},
}

func TestKnown(t *testing.T) {
	for _, tc := range known {
		got, err := CompareStrings(tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if back, _ := CompareStrings(tc.b, tc.a); back != -tc.want {
			t.Errorf("Compare(%q, %q) = %d, not antisymmetric", tc.b, tc.a, back)
		}
	}
}

// dpkgCompare asks dpkg for many pairs in one shell, returning -1/0/1 each.
func dpkgCompare(t testing.TB, pairs [][2]string) []int {
	t.Helper()
	var script strings.Builder
	for _, p := range pairs {
		fmt.Fprintf(&script, "if dpkg --compare-versions '%s' lt '%s'; then echo -1; elif dpkg --compare-versions '%s' eq '%s'; then echo 0; else echo 1; fi\n", p[0], p[1], p[0], p[1])
	}
	cmd := exec.Command("sh")
	cmd.Stdin = strings.NewReader(script.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dpkg: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(pairs) {
		t.Fatalf("dpkg gave %d answers for %d pairs", len(lines), len(pairs))
	}
	res := make([]int, len(lines))
	for i, l := range lines {
		fmt.Sscan(l, &res[i])
	}
	return res
}

func TestAgainstDpkg(t *testing.T) {
	testenv.RequireTool(t, "dpkg")
	var pairs [][2]string
	for _, a := range corpus {
		for _, b := range corpus {
			pairs = append(pairs, [2]string{a, b})
		}
	}
	if len(pairs) < 200 {
		t.Fatalf("only %d pairs", len(pairs))
	}
	want := dpkgCompare(t, pairs)
	for i, p := range pairs {
		got, err := CompareStrings(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		if got != want[i] {
			t.Errorf("Compare(%q, %q) = %d, dpkg says %d", p[0], p[1], got, want[i])
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "version string is empty"},
		{"1 0", "embedded spaces"},
		{" 1.0", "embedded spaces"},
		{":1.0", "epoch in version is empty"},
		{"a:1.0", "epoch in version is not number"},
		{"99999999999:1.0", "epoch in version is too big"},
		{"1:", "nothing after colon"},
		{"1.0-", "revision number is empty"},
		{"-1", "upstream version is empty"},
		{"v1.0", "does not start with digit"},
		{"1.0_1", "invalid character '_' in version number"},
		{"1.0-1=2", "invalid character '=' in revision number"},
		{"1.0-1_2", "invalid character '_' in revision number"},
	} {
		_, err := Parse(tc.in)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	v := MustParse("1:2.0-1")
	if v.String() != "1:2.0-1" || v.WithoutEpoch() != "2.0-1" || MustParse("0:2.0").String() != "2.0" {
		t.Errorf("String: %v %v", v, v.WithoutEpoch())
	}
}

func TestFromUpstream(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"v1.30.0-rc.1", "1.30.0~rc.1", ""},
		{"1.30.0", "1.30.0", ""},
		{"v3.15.4", "3.15.4", ""},
		{"v1.0.0-beta-2", "1.0.0~beta.2", ""},
		{"1.2.3+build.5", "1.2.3+build.5", ""},
		{"v2.0.0-alpha.1+meta", "2.0.0~alpha.1+meta", ""},
		// A pre-release glued to the version (PEP 440, Maven) sorts before
		// the release too; a letter that is no pre-release keyword is kept.
		{"1.37.0rc1", "1.37.0~rc1", ""},
		{"v3.0.0.RC2", "3.0.0~RC2", ""},
		{"2.1b", "2.1b", ""},
		{"1.2.3beta", "1.2.3~beta", ""},
		{"1.2.3.pre.4+meta", "1.2.3~pre.4+meta", ""},
		{"1.2.3alpha10", "1.2.3~alpha10", ""},
		{"1.1.1w", "1.1.1w", ""},
		{"1.2.3.Final", "1.2.3.Final", ""},
		{"1.2.3develop", "1.2.3develop", ""},
		{"kustomize/v5.4.3", "", "must start with a digit"},
		{"1.0_1", "", "invalid character"},
		{"", "", "must start with a digit"},
		// "1.0.0+" became 1.0.0, another upstream version's, and "1.0.0-" 1.0.0~.
		{"1.0.0-", "", "has an empty part"},
		{"1.0.0+", "", "has an empty part"},
		{"v1.0.0-+meta", "", "has an empty part"},
		{"1.0.0-rc..1", "", "has an empty part"},
		{"1..0", "", "has an empty part"},
		{"1.0.", "", "has an empty part"},
		{"1.0.0-.1", "", "has an empty part"},
		{"1.0.0-rc.+b", "", "has an empty part"},
		{" 1.30.0", "", "has white space around it"},
		{"v1.30.0\n", "", "has white space around it"},
		{"1.30.0\t", "", "has white space around it"},
	} {
		got, err := FromUpstream(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("FromUpstream(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("FromUpstream(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, pre := range []string{"v1.30.0-rc.1", "1.30.0rc1", "1.30.0.beta2", "1.30.0alpha"} {
		rc, _ := FromUpstream(pre)
		if c, _ := CompareStrings(rc, "1.30.0"); c != -1 {
			t.Errorf("%s mapped to %s does not sort before the release 1.30.0", pre, rc)
		}
	}
}

// FuzzCompare asks dpkg about every pair of versions our parser accepts; dpkg
// must accept them too and order them the same way.
func FuzzCompare(f *testing.F) {
	testenv.RequireTool(f, "dpkg")
	f.Add("1.0~rc1", "1.0")
	f.Add("1:2.0-1", "2.0-1+b1")
	f.Add("0009.a~", "9.a")
	f.Fuzz(func(t *testing.T, a, b string) {
		va, errA := Parse(a)
		vb, errB := Parse(b)
		if errA != nil || errB != nil || strings.ContainsAny(a+b, "'\\") {
			return
		}
		got := Compare(va, vb)
		want := dpkgCompare(t, [][2]string{{a, b}})[0]
		if got != want {
			t.Fatalf("Compare(%q, %q) = %d, dpkg says %d", a, b, got, want)
		}
	})
}
