package supportdata

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestLoadEmbedded(t *testing.T) {
	d, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(d.Products(), ","), "calico,cilium,containerd,etcd,istio,kubernetes"; got != want {
		t.Errorf("Products() = %s, want %s", got, want)
	}
	if !strings.Contains(d.Source, "Snapshot commit a70eca337600e7d721dc48112c271f98661d208b (2026-08-22") {
		t.Errorf("Source lost the snapshot line:\n%s", d.Source)
	}
	c, ok := d.Cycle("kubernetes", "1.35.4")
	if !ok {
		t.Fatal("no cycle for kubernetes 1.35.4")
	}
	want := Cycle{Product: "kubernetes", Name: "1.35", ReleaseDate: day("2025-12-17"), EOAS: day("2026-12-28"),
		EOL: day("2027-02-28"), Latest: "1.35.8", LatestReleaseDate: day("2026-08-20")}
	if c != want {
		t.Errorf("Cycle = %+v\nwant    %+v", c, want)
	}
	old, _ := d.Cycle("kubernetes", "1.17.3")
	if !old.EOASPassed || !old.EOAS.IsZero() || old.EOL != day("2020-12-25") {
		t.Errorf("1.17 eoas: true not kept: %+v", old)
	}
	etcd, _ := d.Cycle("etcd", "3.6.14")
	if !etcd.EOL.IsZero() || etcd.EOLPassed {
		t.Errorf("etcd 3.6 eol: false should be zero: %+v", etcd)
	}
	ist, _ := d.Cycle("istio", "1.30.3")
	if ist.SupportedKubernetes != "1.32 - 1.36" {
		t.Errorf("istio 1.30 SupportedKubernetes = %q", ist.SupportedKubernetes)
	}
	ctd, _ := d.Cycle("containerd", "2.3.4")
	if !ctd.LTS {
		t.Errorf("containerd 2.3 should be LTS")
	}
}

func TestCycleLookup(t *testing.T) {
	d, err := Parse("t.yaml", []byte(`
kubernetes:
  - {releaseCycle: "1.35", releaseDate: 2025-12-17, eol: false, latest: "1.35.8"}
  - {releaseCycle: "1.3", releaseDate: 2016-07-01, eol: true, latest: "1.3.10"}
major:
  - {releaseCycle: "3", releaseDate: 2020-01-01, eol: false, latest: "3.9.1"}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		product, version, want string
	}{
		{"kubernetes", "1.35.4", "1.35"},
		{"kubernetes", "v1.35.0", "1.35"},
		{"kubernetes", "1:1.35.0-1", "1.35"},
		{"kubernetes", "1.35.0~rc.1", "1.35"},
		{"kubernetes", "1.35", "1.35"},
		{"kubernetes", "1.035.1", "1.35"},
		{"kubernetes", "1.3.2", "1.3"},
		{"kubernetes", "1.36.0", ""},
		{"kubernetes", "1", ""},
		{"kubernetes", "x1.35", ""},
		{"kubernetes", "", ""},
		{"major", "3.1.4", "3"},
		{"major", "4.0", ""},
		{"nosuch", "1.35.0", ""},
	} {
		c, ok := d.Cycle(tc.product, tc.version)
		if ok != (tc.want != "") || c.Name != tc.want {
			t.Errorf("Cycle(%q, %q) = %q, %v; want %q", tc.product, tc.version, c.Name, ok, tc.want)
		}
	}
}

func TestStatus(t *testing.T) {
	c := Cycle{EOAS: day("2026-12-28"), EOL: day("2027-02-28")}
	noEOAS := Cycle{EOL: day("2026-06-01")}
	open := Cycle{}
	for _, tc := range []struct {
		c    Cycle
		now  string
		want string
	}{
		{c, "2026-08-22", "supported until 2026-12-28"},
		{c, "2026-12-27", "supported until 2026-12-28"},
		{c, "2026-12-28", "security-only until 2027-02-28"},
		{c, "2027-02-27", "security-only until 2027-02-28"},
		{c, "2027-02-28", "eol since 2027-02-28"},
		{noEOAS, "2026-05-31", "supported until 2026-06-01"},
		{noEOAS, "2026-06-01", "eol since 2026-06-01"},
		{open, "2030-01-01", "supported"},
		{Cycle{EOASPassed: true}, "2030-01-01", "security-only"},
		{Cycle{EOLPassed: true}, "2030-01-01", "eol"},
		// End of active support after the end of life (an odd answer):
		// supported until the end of life, not until 2040.
		{Cycle{EOAS: day("2040-01-01"), EOL: day("2027-06-28")}, "2026-12-03", "supported until 2027-06-28"},
		{Cycle{EOAS: day("2040-01-01"), EOL: day("2027-06-28")}, "2027-06-28", "eol since 2027-06-28"},
	} {
		if got := tc.c.Status(day(tc.now)).String(); got != tc.want {
			t.Errorf("%+v on %s: %q, want %q", tc.c, tc.now, got, tc.want)
		}
	}
	// Late in the day in a zone east of UTC is still the UTC day before.
	east := time.Date(2026, 12, 28, 1, 0, 0, 0, time.FixedZone("UTC+2", 2*3600))
	if got := c.Status(east).State; got != Supported {
		t.Errorf("2026-12-28 01:00 UTC+2 (= 12-27 UTC): %v, want supported", got)
	}
}

func TestProductOf(t *testing.T) {
	for in, want := range map[string]string{
		"kubelet": "kubernetes", "kube-proxy": "kubernetes", "kubectl": "kubernetes", "kubeadm": "kubernetes",
		"kubernetes": "kubernetes", "calicoctl": "calico", "istioctl": "istio", "etcd": "etcd", "helm": "helm",
		"kube-apiserver": "kubernetes", "cloud-controller-manager": "kubernetes", "kubectl-convert": "kubernetes",
		"kube-vip": "kube-vip", "kube-state-metrics": "kube-state-metrics", "kube-bench": "kube-bench",
	} {
		if got := ProductOf(in); got != want {
			t.Errorf("ProductOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"- a\n", "eol: invalid data: x.yaml:1:1: expected a mapping of product -> cycles"},
		{"k: 1\n", `eol: invalid data: x.yaml:1:4: product "k": expected a list of cycles`},
		{"k:\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, eol: false, latest: \"1.2.3\", foo: 1}\n",
			`eol: invalid data: x.yaml:2:81: k: unknown field "foo"`},
		{"k:\n  - releaseCycle: \"1.2\"\n    releaseDate: 2020-13-01\n",
			`eol: invalid data: x.yaml:3:18: k: field "releaseDate": expected a date YYYY-MM-DD, found "2020-13-01"`},
		{"k:\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, eol: maybe, latest: \"1.2.3\"}\n",
			`eol: invalid data: x.yaml:2:57: k: field "eol": expected a date YYYY-MM-DD, true or false, found "maybe"`},
		{"k:\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, latest: \"1.2.3\"}\n",
			`eol: invalid data: x.yaml:2:5: k: missing field "eol"`},
		{"k:\n  - {releaseCycle: \"one\", releaseDate: 2020-01-01, eol: false, latest: \"1.2.3\"}\n",
			`eol: invalid data: x.yaml:2:5: k: releaseCycle "one": expected MAJOR or MAJOR.MINOR`},
		{"k:\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, eol: false, latest: \"1.2.3\"}\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, eol: false, latest: \"1.2.3\"}\n",
			`eol: invalid data: x.yaml:3:5: k: cycle "1.2" given twice`},
		// the same cycle as lookups see it, in another spelling, with another end of life
		{"k:\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, eol: false, latest: \"1.2.3\"}\n  - {releaseCycle: \"01.2\", releaseDate: 2020-01-01, eol: true, latest: \"1.2.3\"}\n",
			`eol: invalid data: x.yaml:3:5: k: cycles "1.2" and "01.2" are the same cycle 1.2 given twice`},
		{"k:\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, eol: false, latest: \"1.2.3\"}\n  - {releaseCycle: \"1.2.0\", releaseDate: 2020-01-01, eol: true, latest: \"1.2.3\"}\n",
			`eol: invalid data: x.yaml:3:5: k: cycles "1.2" and "1.2.0" are the same cycle 1.2 given twice`},
		// a cycle of a major alone covers every minor of it: 1.2.x would match either
		{"k:\n  - {releaseCycle: \"1\", releaseDate: 2020-01-01, eol: true, latest: \"1.9.0\"}\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, eol: false, latest: \"1.2.3\"}\n",
			`eol: invalid data: x.yaml:3:5: k: cycles "1" and "1.2" overlap: a version 1.2.x would match either (a cycle named by its major alone covers all of it)`},
		{"k:\n  - {releaseCycle: \"1.2\", releaseCycle: \"1.3\"}\n",
			`eol: invalid data: x.yaml:2:27: k: field "releaseCycle" given twice`},
		{"k: [\n", "eol: invalid data: x.yaml:1:1: did not find expected node content"},
	} {
		_, err := Parse("x.yaml", []byte(tc.in))
		if err == nil || err.Error() != tc.want || !errors.Is(err, ErrData) {
			t.Errorf("Parse(%q):\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// Every cycle is checked: the first problem of each is reported, together.
func TestParseReportsEveryCycle(t *testing.T) {
	_, err := Parse("x.yaml", []byte(`k:
  - {releaseCycle: "1.2", releaseDate: 2020-13-01, eol: false}
  - {releaseCycle: "1.3", releaseDate: 2020-01-01, eol: false, latest: "1.3.1"}
  - {releaseCycle: "1.4", releaseDate: 2020-01-01, eol: false, latest: "1.4.1", lts: maybe}
j: {releaseCycle: "1"}
k: []
l: &a []
`))
	want := `eol: invalid data: x.yaml:7:4: l: YAML anchors and aliases are not supported`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	_, err = Parse("x.yaml", []byte(`k:
  - {releaseCycle: "1.2", releaseDate: 2020-13-01, eol: false}
  - {releaseCycle: "1.3", releaseDate: 2020-01-01, eol: false, latest: "1.3.1"}
  - {releaseCycle: "1.4", releaseDate: 2020-01-01, eol: false, latest: "1.4.1", lts: maybe}
j: {releaseCycle: "1"}
k: []
`))
	want = `eol: invalid data: x.yaml:2:40: k: field "releaseDate": expected a date YYYY-MM-DD, found "2020-13-01"
x.yaml:4:86: k: field "lts": expected true or false, found "maybe"
x.yaml:5:4: product "j": expected a list of cycles
x.yaml:6:1: product "k" listed twice`
	if err == nil || err.Error() != want || !errors.Is(err, ErrData) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(string(embedded))
	f.Add("k:\n  - {releaseCycle: \"1.2\", releaseDate: 2020-01-01, eol: true, latest: \"1.2.3\"}\n")
	f.Fuzz(func(t *testing.T, in string) {
		d, err := Parse("f.yaml", []byte(in))
		if err != nil {
			if !errors.Is(err, ErrData) {
				t.Fatalf("error does not wrap ErrData: %v", err)
			}
			return
		}
		for _, p := range d.Products() {
			for _, c := range d.Cycles(p) {
				got, ok := d.Cycle(p, c.Latest)
				if ok && got.Product != p {
					t.Fatalf("Cycle(%q, %q) returned product %q", p, c.Latest, got.Product)
				}
				_ = c.Status(time.Unix(0, 0))
			}
		}
	})
}
