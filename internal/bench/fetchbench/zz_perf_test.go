package fetchbench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/squid"
)

func TestZZCompare(t *testing.T) {
	bins := strings.Fields(os.Getenv("UPDEB_BINS"))
	if len(bins) == 0 {
		t.Skip()
	}
	sq, err := squid.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Stop()
	art := newArtifact(200e6)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		http.ServeContent(rw, r, "artifact", time.Unix(0, 0), art.reader())
	}))
	defer srv.Close()
	sha, sha5, _ := art.digests()
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "updeb.yaml")
	os.WriteFile(cfg, nil, 0o644)
	type res struct{ wall, cpu, all []float64 }
	results := map[string]*res{}
	var names []string
	add := func(name string, m Measure) {
		r := results[name]
		if r == nil {
			r = &res{}
			results[name] = r
			names = append(names, name)
		}
		r.wall = append(r.wall, m.Wall.Seconds())
		r.cpu = append(r.cpu, m.CPU.Seconds())
		r.all = append(r.all, m.All().Seconds())
	}
	run := func(name string, args ...string) {
		s0, _ := sq.CPU()
		p0 := selfCPU()
		m, err := measure(t.Context(), args[0], args[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		m.Server = selfCPU() - p0
		s1, _ := sq.CPU()
		m.Squid = s1 - s0
		add(name, m)
	}
	rounds := 9
	for i := range rounds {
		out := filepath.Join(tmp, "curl")
		run("curl", "curl", "-sS", "--fail", "-x", sq.URL, "-o", out, srv.URL+"/curl.tgz")
		os.Remove(out)
		for bi, bin := range bins {
			for _, pin := range []string{"sha256=" + sha, "sha512=" + sha5} {
				cache := filepath.Join(tmp, "cache")
				run(fmt.Sprintf("bin%d %s", bi, pin[:6]), bin, "-q", "--config", cfg, "--proxy", sq.URL, "--cache", cache, "fetch", fmt.Sprintf("%s/u-%d-%d.tgz#%s", srv.URL, i, bi, pin))
				os.RemoveAll(cache)
			}
		}
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	cw := med(results["curl"].wall)
	for _, n := range names {
		r := results[n]
		fmt.Printf("%-14s wall %.3f (%.2fx curl)  cpu %.3f  all %.3f   walls %.2f\n", n, med(r.wall), cw/med(r.wall), med(r.cpu), med(r.all), r.wall)
	}
	// ratio per round (same round)
	for _, n := range names[1:] {
		var ratios []float64
		for i := range rounds {
			ratios = append(ratios, results["curl"].wall[i]/results[n].wall[i])
		}
		fmt.Printf("%-14s per-round ratio median %.2f  %.2f\n", n, med(ratios), ratios)
	}
}
