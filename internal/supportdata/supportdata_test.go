package supportdata_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/squid"
)

func bundled(t *testing.T) *supportdata.Data {
	t.Helper()
	d, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRefreshThroughSquid: updeb data refresh's library against a fake
// endoflife.date reached through a real squid: a good refresh (a new minor
// appearing), then every kind of bad answer refused with the refreshed copy
// left byte for byte as it was, then cycles lost (refused, or accepted and
// recorded), and what supportdata.Load makes of it all.
func TestRefreshThroughSquid(t *testing.T) {
	sq := squid.ForTest(t)
	proxy, _ := url.Parse(sq.URL)
	f, err := fetch.New(t.TempDir(), fetch.Options{Proxy: proxy, Retries: -1, HeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)

	srv := eoltest.New(bundled(t), t.Cleanup)
	k137 := eoltest.Cycle("kubernetes", "1.37", "2026-08-26", "2027-08-28", "2027-10-28", "1.37.1")
	srv.Set("kubernetes", append([]supportdata.Cycle{k137}, srv.Cycles("kubernetes")...))
	srv.Set("nodejs", []supportdata.Cycle{eoltest.Cycle("nodejs", "24", "2025-05-06", "2026-10-20", "2028-04-30", "24.11.1")})
	state := t.TempDir()
	now := time.Date(2026, 11, 24, 10, 11, 12, 0, time.UTC)
	opts := supportdata.RefreshOptions{Client: f, StateDir: state, Now: now, Products: []string{"nodejs"},
		ProductURL: func(p string) string { return strings.ReplaceAll(srv.Template(), "{product}", p) }}
	path := filepath.Join(state, supportdata.File)

	c, warnings, err := supportdata.Load(state)
	if err != nil || c.Refreshed() || len(warnings) > 0 {
		t.Fatalf("before any refresh: %v, %v, %v", c.Name(), warnings, err)
	}

	res, err := supportdata.Refresh(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Products) != 7 || res.Replaced != "bundled" || res.Path != path {
		t.Errorf("result %+v", res)
	}
	for _, p := range res.Products {
		if p.Product == "kubernetes" && (len(p.Added) != 1 || p.Added[0] != "1.37") {
			t.Errorf("kubernetes: added %v, want [1.37]", p.Added)
		}
	}
	c, warnings, err = supportdata.Load(state)
	if err != nil || !c.Refreshed() || len(warnings) > 0 {
		t.Fatalf("after refresh: %v, %v, %v", c.Name(), warnings, err)
	}
	if got, ok := c.Data.Cycle("kubernetes", "1.37.1"); !ok || got.EOL.Format(time.DateOnly) != "2027-10-28" {
		t.Errorf("1.37 after refresh: %+v, %v", got, ok)
	}
	if _, ok := c.Data.Cycle("nodejs", "24.11.0"); !ok {
		t.Error("the extra product is missing")
	}
	if !c.Data.AsOf.Equal(now) {
		t.Errorf("as of %s, want %s", c.Data.AsOf, now)
	}
	if d := c.Describe(now.Add(72 * time.Hour)); d != "refreshed copy "+path+", as of 2026-11-24 (3 days old)" {
		t.Errorf("Describe: %s", d)
	}
	if c.Stale(now.Add(29*24*time.Hour), 30*24*time.Hour) || !c.Stale(now.Add(31*24*time.Hour), 30*24*time.Hour) {
		t.Error("Stale does not turn at 30 days")
	}
	good, _ := os.ReadFile(path)
	if !strings.Contains(string(good), "kubernetes: "+srv.URL+"/api/kubernetes.json") || !strings.Contains(string(good), "# As of: 2026-11-24T10:11:12Z") {
		t.Errorf("header does not name the sources and the date:\n%s", good[:400])
	}
	if log := sq.Log(); !strings.Contains(log, "GET "+srv.URL+"/api/istio.json") {
		t.Errorf("squid's log lacks the API requests:\n%s", log)
	}

	full := eoltest.V0(srv.Cycles("kubernetes"))
	for _, tc := range []struct {
		name   string
		answer eoltest.Answer
		is     error
		msg    string
	}{
		{"HTML error page", eoltest.Answer{Body: []byte("<html><body><h1>503 Service Unavailable</h1></body></html>")}, supportdata.ErrAPI, "the answer is HTML"},
		{"truncated", eoltest.Answer{Body: full[:len(full)-40]}, supportdata.ErrAPI, "cut short"},
		{"corrupt", eoltest.Answer{Body: bytes.Replace(full, []byte(`"2027-10-28"`), []byte(`"2027-13-45"`), 1)}, supportdata.ErrAPI, `field "eol": expected a date YYYY-MM-DD, found "2027-13-45"`},
		{"huge", eoltest.Answer{Body: append([]byte("["), bytes.Repeat([]byte(" "), supportdata.DefaultMaxAnswer+10)...)}, supportdata.ErrAPI, "larger than 1048576 bytes"},
		{"a key twice (the last would win)", eoltest.Answer{Body: bytes.Replace(full, []byte(`"eol": `), []byte(`"eol": "2020-01-01", "eol": `), 1)}, supportdata.ErrAPI, `key "eol" given twice`},
		{"a cycle twice, once with a leading zero", eoltest.Answer{Body: bytes.Replace(full, []byte(`[`), []byte(`[{"cycle": "01.36", "releaseDate": "2026-04-22", "eol": "2026-05-01", "latest": "01.36.1"}, `), 1)}, supportdata.ErrAPI, `the same cycle 1.36 given twice`},
		{"server error", eoltest.Answer{Status: 500, Body: []byte("oops")}, nil, "500"},
		{"not found", eoltest.Answer{Status: 404, Body: []byte(`{"message": "Product not found"}`)}, nil, "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Raw("kubernetes", tc.answer)
			_, err := supportdata.Refresh(context.Background(), opts)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err %v, want %v containing %q", err, tc.is, tc.msg)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, good) {
				t.Error("the refreshed copy changed")
			}
			if leftovers, _ := filepath.Glob(filepath.Join(state, "support", ".*")); len(leftovers) > 0 {
				t.Errorf("temporary files left behind: %v", leftovers)
			}
		})
	}

	t.Run("a cycle lost", func(t *testing.T) {
		srv.Set("kubernetes", srv.Cycles("kubernetes")[1:]) // 1.37 gone
		_, err := supportdata.Refresh(context.Background(), opts)
		var de *supportdata.DroppedError
		if !errors.As(err, &de) || !errors.Is(err, supportdata.ErrDropped) || strings.Join(de.Dropped["kubernetes"], ",") != "1.37" {
			t.Fatalf("err %v, want a supportdata.DroppedError for kubernetes 1.37", err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, good) {
			t.Error("the refreshed copy changed")
		}
		o := opts
		o.AllowDropped, o.Now = true, now.Add(time.Hour)
		res, err := supportdata.Refresh(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Replaced != "refreshed "+path {
			t.Errorf("replaced %q", res.Replaced)
		}
		after, _ := os.ReadFile(path)
		if !strings.Contains(string(after), "# Dropped (accepted with --allow-dropped): kubernetes 1.37") {
			t.Errorf("the header does not record the dropped cycle:\n%s", after[:500])
		}
	})

	t.Run("a cycle's dates move", func(t *testing.T) {
		// endoflife.date moves Istio's oldest cycle's end of life a month
		// earlier and records a new patch of Kubernetes' newest: both are
		// said, the date as a change of the cycle (a job that keeps a
		// repository's data file only when something changed needs it).
		istio := srv.Cycles("istio")
		last := &istio[len(istio)-1]
		was := last.EOL
		last.EOL = last.ReleaseDate.AddDate(1, 0, 0)
		srv.Set("istio", istio)
		k := srv.Cycles("kubernetes")
		k[0].Latest = k[0].Name + ".99"
		srv.Set("kubernetes", k)
		o := opts
		o.Now = now.Add(2 * time.Hour)
		res, err := supportdata.Refresh(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		day := func(t time.Time) string {
			if t.IsZero() {
				return "none"
			}
			return t.Format(time.DateOnly)
		}
		for _, p := range res.Products {
			switch p.Product {
			case "istio":
				want := last.Name + ": end of life " + day(was) + " -> " + day(last.EOL)
				if len(p.Changed) != 1 || p.Changed[0] != want || len(p.Latest) != 0 {
					t.Errorf("istio: changed %q, latest %q; want changed [%q]", p.Changed, p.Latest, want)
				}
			case "kubernetes":
				if len(p.Latest) != 1 || !strings.HasSuffix(p.Latest[0], " -> "+k[0].Name+".99") || len(p.Changed) != 0 {
					t.Errorf("kubernetes: latest %q, changed %q", p.Latest, p.Changed)
				}
			default:
				if len(p.Changed)+len(p.Latest)+len(p.Added) > 0 {
					t.Errorf("%s: %+v, want no change", p.Product, p)
				}
			}
		}
	})

	t.Run("a refreshed copy that does not parse", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "state")
		os.MkdirAll(filepath.Join(bad, "support"), 0o755)
		os.WriteFile(filepath.Join(bad, supportdata.File), []byte("# As of: 2026-11-24\nkubernetes: [\n"), 0o644)
		c, warnings, err := supportdata.Load(bad)
		if err != nil || c.Refreshed() || len(warnings) != 1 || !strings.Contains(warnings[0], "using the bundled copy") {
			t.Errorf("Load: %s, %v, %v", c.Name(), warnings, err)
		}
	})
	// A refreshed copy dated before the bundled one, or after today
	// (written with a clock years ahead, or edited: it would be "0 days
	// old", never stale, and newer than every bundled copy a later updeb
	// brings), is passed over.
	for asOf, warning := range map[string]string{
		"2026-01-01": "older than the bundled copy",
		"9999-12-31": "as of 9999-12-31, after today",
	} {
		t.Run("a refreshed copy as of "+asOf, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			os.MkdirAll(filepath.Join(state, "support"), 0o755)
			d, _ := supportdata.New("Source: test\nAs of: "+asOf, map[string][]supportdata.Cycle{"kubernetes": bundled(t).Cycles("kubernetes")})
			os.WriteFile(filepath.Join(state, supportdata.File), d.Encode(), 0o644)
			c, warnings, err := supportdata.Load(state)
			if err != nil || c.Refreshed() || len(warnings) != 1 || !strings.Contains(warnings[0], warning) {
				t.Errorf("Load: %s, %v, %v", c.Name(), warnings, err)
			}
		})
	}
	t.Run("offline never fetches", func(t *testing.T) {
		off, err := fetch.New(t.TempDir(), fetch.Options{Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		defer off.Close()
		before := len(srv.Requests())
		o := opts
		o.Client = off
		if _, err := supportdata.Refresh(context.Background(), o); !errors.As(err, new(*fetch.OfflineError)) {
			t.Errorf("err %v, want an OfflineError", err)
		}
		if len(srv.Requests()) != before {
			t.Error("an offline refresh reached the server")
		}
	})
}

// answers is a Getter that answers each product's URL ("PRODUCT") with its
// cycles in the v0 API's form.
type answers map[string][]supportdata.Cycle

func (a answers) Get(_ context.Context, url string, _ http.Header, _ int64) ([]byte, error) {
	return eoltest.V0(a[url]), nil
}

// TestFetchCycleSpelledOtherwise: an answer that names a cycle otherwise
// than the copy in use ("1.37" where the copy, fetched on the day of its
// first release, has "1.37.0": lookups read both as 1.37) has not lost it:
// the refresh was refused, "the new data lacks release cycles the copy in
// use has: kubernetes 1.37.0" (exit 1), every day until --allow-dropped.
func TestFetchCycleSpelledOtherwise(t *testing.T) {
	in := answers{}
	for _, p := range bundled(t).Products() {
		in[p] = bundled(t).Cycles(p)
	}
	k137 := eoltest.Cycle("kubernetes", "1.37.0", "2026-08-26", "2027-08-28", "2027-10-28", "1.37.0")
	current, err := supportdata.New("Source: t\nAs of: 2026-11-20", map[string][]supportdata.Cycle{"kubernetes": append([]supportdata.Cycle{k137}, in["kubernetes"]...)})
	if err != nil {
		t.Fatal(err)
	}
	k137.Name, k137.Latest = "1.37", "1.37.1"
	in["kubernetes"] = append([]supportdata.Cycle{k137}, in["kubernetes"]...)
	o := supportdata.RefreshOptions{Client: in, Now: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), ProductURL: func(p string) string { return p }}
	res, _, err := supportdata.Fetch(context.Background(), o, &supportdata.Copy{Data: current})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Products {
		if p.Product == "kubernetes" && (len(p.Added) > 0 || len(p.Dropped) > 0 || strings.Join(p.Latest, "; ") != "1.37.0: 1.37.0 -> 1.37.1") {
			t.Errorf("kubernetes: added %v, dropped %v, latest %v", p.Added, p.Dropped, p.Latest)
		}
	}
}

// TestLoadFillsProductsFromBundled: a refreshed copy written by an older
// updeb, before the bundled data gained a product (cilium came so), lacks
// that product though it is newer than the bundled copy: its cycles come
// from the bundled copy, with a warning, not "unknown" to outdated and plan
// until the next refresh.
func TestLoadFillsProductsFromBundled(t *testing.T) {
	state := t.TempDir()
	os.MkdirAll(filepath.Join(state, "support"), 0o755)
	k := bundled(t).Cycles("kubernetes")
	k[0].Latest = "1.36.9" // the refreshed copy's own, newer than the bundled one's
	d, err := supportdata.New("Source: test\nAs of: 2026-11-24T10:11:12Z", map[string][]supportdata.Cycle{"kubernetes": k})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(state, supportdata.File), d.Encode(), 0o644)
	c, warnings, err := supportdata.Load(state)
	if err != nil || !c.Refreshed() {
		t.Fatalf("Load: %s, %v", c.Name(), err)
	}
	if got := c.Data.Cycles("kubernetes")[0].Latest; got != "1.36.9" {
		t.Errorf("kubernetes latest %s, want the refreshed copy's 1.36.9", got)
	}
	for _, p := range bundled(t).Products() {
		if len(c.Data.Cycles(p)) == 0 {
			t.Errorf("product %s: no cycles, want the bundled copy's", p)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "cilium") || !strings.Contains(warnings[0], "run 'updeb data refresh'") {
		t.Errorf("warnings %q, want one naming the products taken from the bundled copy", warnings)
	}
	if !slices.Contains(c.Data.Products(), "cilium") {
		t.Errorf("products %v lack cilium", c.Data.Products())
	}
}

// TestLoadOlderKeepsOwnProducts: a refreshed copy older than the bundled
// one (updeb upgraded since the last refresh) is passed over, but the
// products only it has (data: products: in the config, nodejs here) keep
// its cycles: they were unknown to every command until the next refresh.
func TestLoadOlderKeepsOwnProducts(t *testing.T) {
	state := t.TempDir()
	os.MkdirAll(filepath.Join(state, "support"), 0o755)
	node := []supportdata.Cycle{eoltest.Cycle("nodejs", "24", "2025-05-06", "2026-10-20", "2028-04-30", "24.11.1")}
	k := bundled(t).Cycles("kubernetes")
	k[0].Latest = "1.36.1"
	d, err := supportdata.New("Source: test\nAs of: 2026-01-01", map[string][]supportdata.Cycle{"kubernetes": k, "nodejs": node})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(state, supportdata.File), d.Encode(), 0o644)
	c, warnings, err := supportdata.Load(state)
	if err != nil || c.Refreshed() {
		t.Fatalf("Load: %s, %v", c.Name(), err)
	}
	if got, want := c.Data.Cycles("kubernetes")[0].Latest, bundled(t).Cycles("kubernetes")[0].Latest; got != want {
		t.Errorf("kubernetes latest %s, want the bundled copy's %s", got, want)
	}
	if cs := c.Data.Cycles("nodejs"); len(cs) != 1 || cs[0].Latest != "24.11.1" {
		t.Errorf("nodejs: %+v, want the refreshed copy's cycle 24", cs)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "older than the bundled copy") || !strings.Contains(warnings[0], "release cycles of nodejs") {
		t.Errorf("warnings %q", warnings)
	}
}
