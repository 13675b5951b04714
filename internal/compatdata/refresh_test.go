package compatdata_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/compatsrc"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/lockfile"
)

var copiesDir = filepath.Join("..", "..", "testdata", "compat-sources")

// refreshNow is the day of these tests: Kubernetes 1.37 and Istio 1.31 are
// out (the fake endoflife.date has them), 1.33 and older are end-of-life.
var refreshNow = time.Date(2026, 11, 24, 10, 11, 12, 0, time.UTC)

// world is a fake endoflife.date and a fake upstream behind a real squid.
type world struct {
	eol   *eoltest.Server
	up    *compatsrc.Server
	sq    *squid.Squid
	opts  compatdata.RefreshOptions
	state string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	sq := squid.ForTest(t)
	proxy, _ := url.Parse(sq.URL)
	f, err := fetch.New(t.TempDir(), fetch.Options{Proxy: proxy, Retries: -1, HeaderTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	bundled, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	w := &world{eol: eoltest.New(bundled, t.Cleanup), up: compatsrc.New(t.Cleanup), sq: sq, state: t.TempDir()}
	w.eol.Set("kubernetes", append([]supportdata.Cycle{eoltest.Cycle("kubernetes", "1.37", "2026-08-26", "2027-08-28", "2027-10-28", "1.37.1")}, w.eol.Cycles("kubernetes")...))
	istio31 := eoltest.Cycle("istio", "1.31", "2026-08-31", "", "2027-02-28", "1.31.1")
	istio31.SupportedKubernetes = "1.32 - 1.37"
	w.eol.Set("istio", append([]supportdata.Cycle{istio31}, w.eol.Cycles("istio")...))
	if err := w.up.ServeCopies(copiesDir, "1.37", []string{"3.31", "3.32"}, []string{"1.18", "1.19", "1.20"}); err != nil {
		t.Fatal(err)
	}
	w.opts = compatdata.RefreshOptions{Client: f, Sources: w.up.Sources(), StateDir: w.state, Now: refreshNow,
		ProductURL: func(p string) string { return strings.ReplaceAll(w.eol.Template(), "{product}", p) }}
	return w
}

func result(res *compatdata.Result, table string) compatdata.TableResult {
	for _, r := range res.Tables {
		if r.Table == table {
			return r
		}
	}
	return compatdata.TableResult{}
}

// TestRefreshThroughSquid: updeb data refresh's library against the real
// upstream copies served behind squid: what a refresh adds, changes and
// retires, then every kind of hostile answer refused with both refreshed
// copies left byte for byte as they were, a row lost (refused, or accepted
// and recorded), and what Load makes of it.
func TestRefreshThroughSquid(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	res, err := compatdata.Refresh(ctx, w.opts)
	if err != nil {
		t.Fatal(err)
	}
	tables := filepath.Join(w.state, compatdata.File)
	eolFile := filepath.Join(w.state, supportdata.File)
	if strings.Join(res.Written, " ") != tables+" "+eolFile || res.EndOfLife == nil || len(res.Tables) != 7 {
		t.Fatalf("written %v, end-of-life %v, %d tables", res.Written, res.EndOfLife, len(res.Tables))
	}
	for table, want := range map[string]string{
		// kubeadm's map on release-1.37 (the real copy: 34..36 -> 3.6.7-0): 1.31-1.33 are end-of-life.
		compatdata.KubeadmEtcd: "changed [kubernetes 1.36: etcd 3.6.9 (external at least 3.5.24) -> kubernetes 1.36: etcd 3.6.7 (external at least 3.5.24) kubernetes 1.35: etcd 3.6.9 (external at least 3.5.24) -> kubernetes 1.35: etcd 3.6.7 (external at least 3.5.24) kubernetes 1.34: etcd 3.6.9 (external at least 3.5.24) -> kubernetes 1.34: etcd 3.6.7 (external at least 3.5.24)] retired [1.33 1.32 1.31] added [] rows 3",
		// Calico's supported cycles are 3.31 and 3.32; 3.29 and 3.30 are end-of-life.
		compatdata.Calico:     "changed [] retired [3.30 3.29] added [] rows 2",
		compatdata.Cilium:     "changed [] retired [] added [1.20 1.19 1.18] rows 3",
		compatdata.Helm:       "changed [] retired [] added [] rows 42",
		compatdata.Containerd: "changed [] retired [] added [] rows 5",
		compatdata.CRITools:   "changed [] retired [] added [] rows 11",
		compatdata.Istio:      "changed [] retired [] added [] rows 8",
	} {
		r := result(res, table)
		if got := fmtResult(r); got != want {
			t.Errorf("%s: %s\nwant %s", table, got, want)
		}
		if r.Replaced != "bundled" || len(r.URLs) == 0 || !strings.HasPrefix(r.URLs[0], w.up.URL+"/") {
			t.Errorf("%s: replaced %q, urls %v", table, r.Replaced, r.URLs)
		}
	}
	if r := result(res, compatdata.Calico); strings.Join(r.URLs, " ") != w.up.URL+compatsrc.Path(compatdata.Calico, "3.32", 0)+" "+w.up.URL+compatsrc.Path(compatdata.Calico, "3.31", 0) {
		t.Errorf("calico fetched %v", r.URLs)
	}
	set, warnings, err := compatdata.Load(w.state, "")
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	if c := set.Tables.Table(compatdata.Helm).Copy; c != "refreshed "+tables || set.EOL.Name() != "refreshed "+eolFile {
		t.Errorf("Load: tables %q, end-of-life %q", c, set.EOL.Name())
	}
	if m, ok := set.Tables.KubeadmEtcdFor("1.36.4"); !ok || m.Row.Etcd != "3.6.7" || !set.Tables.Table(compatdata.KubeadmEtcd).AsOf.Equal(refreshNow) {
		t.Errorf("kubeadm 1.36 after the refresh: %+v %v", m, ok)
	}
	if log := w.sq.Log(); !strings.Contains(log, "GET "+w.up.URL+"/kubernetes/kubernetes/release-1.37/cmd/kubeadm/app/constants/constants.go") {
		t.Errorf("squid's log lacks the upstream requests:\n%s", log)
	}
	goodTables, _ := os.ReadFile(tables)
	goodEOL, _ := os.ReadFile(eolFile)
	good, err := compatdata.Parse(tables, goodTables)
	if err != nil {
		t.Fatal(err)
	}
	// kept checks that the table refused (endoflife: the end-of-life data)
	// is the copy in use as it was, rows, sources and date, and that the
	// others were refreshed (as of later), then puts both files back.
	later := refreshNow.Add(time.Minute)
	kept := func(t *testing.T, table string) {
		t.Helper()
		defer func() {
			os.WriteFile(tables, goodTables, 0o644)
			os.WriteFile(eolFile, goodEOL, 0o644)
		}()
		if b, _ := os.ReadFile(eolFile); bytes.Equal(b, goodEOL) != (table == compatdata.EndOfLife) {
			t.Errorf("the end-of-life data replaced: %v, refused: %s", !bytes.Equal(b, goodEOL), table)
		}
		now, err := compatdata.Parse(tables, testenv.ReadFile(t, tables))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range compatdata.Names() {
			a, b := now.Table(name), good.Table(name)
			switch {
			case name != table && !a.AsOf.Equal(later):
				t.Errorf("%s was not refreshed (as of %s)", name, a.AsOf)
			case name == table && (!a.AsOf.Equal(b.AsOf) || fmt.Sprint(a.Rows) != fmt.Sprint(b.Rows) || !slices.Equal(a.Sources, b.Sources)):
				t.Errorf("%s, refused, changed: as of %s, %v", name, a.AsOf, a.Rows)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(w.state, "support", ".*")); len(left) > 0 {
			t.Errorf("temporary files left behind: %v", left)
		}
	}
	refresh := func(t *testing.T) error {
		t.Helper()
		o := w.opts
		o.Now = later
		res, err := compatdata.Refresh(ctx, o)
		if err != nil {
			t.Fatalf("the refresh failed as a whole: %v", err)
		}
		return res.KeptError()
	}
	tableOf := map[string]string{}

	ctrPath := compatsrc.Path(compatdata.Containerd, "", 0)
	ctr := w.up.Get(ctrPath)
	helmPath := compatsrc.Path(compatdata.Helm, "", 1)
	helm := w.up.Get(helmPath)
	kubeadmPath := compatsrc.Path(compatdata.KubeadmEtcd, "1.37", 0)
	kubeadm := w.up.Get(kubeadmPath)
	edit := func(b []byte, old, new string) []byte {
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("no %q", old)
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
	tableOf[ctrPath], tableOf[helmPath], tableOf[kubeadmPath] = compatdata.Containerd, compatdata.Helm, compatdata.KubeadmEtcd
	row135 := "| 1.35               | 2.2.0+, 2.1.5+, 1.7.28+          | v1              |\n"
	for _, tc := range []struct {
		name    string
		path    string
		answer  compatsrc.Answer
		is      error
		want    []string
		maxTime time.Duration
	}{
		{"HTML instead of the file", ctrPath, compatsrc.Answer{Body: []byte("<!DOCTYPE html><html><title>Access denied</title></html>")}, compatdata.ErrSource,
			[]string{"containerd: " + w.up.URL + ctrPath + ": the answer is an HTML page, not the file"}, 0},
		// An XHTML error page (an XML declaration first) or one that opens
		// with a comment is an HTML page too, not a page whose layout
		// changed ("no table with the columns ...: report it").
		{"XHTML instead of the file", ctrPath, compatsrc.Answer{Body: []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\">\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>403 Forbidden</title></head><body>| Kubernetes Version | containerd Version |</body></html>\n")}, compatdata.ErrSource,
			[]string{"containerd: " + w.up.URL + ctrPath + ": the answer is an HTML page, not the file"}, 0},
		{"HTML after a comment", ctrPath, compatsrc.Answer{Body: []byte("<!-- proxy: policy 12 -->\n<html><body>Blocked</body></html>\n")}, compatdata.ErrSource,
			[]string{"containerd: " + w.up.URL + ctrPath + ": the answer is an HTML page, not the file"}, 0},
		{"truncated", kubeadmPath, compatsrc.Answer{Body: kubeadm[:len(kubeadm)/2]}, compatdata.ErrSource,
			[]string{"kubeadm-etcd: " + w.up.URL + kubeadmPath + ": not Go source (truncated?)"}, 0},
		{"a row removed", ctrPath, compatsrc.Answer{Body: edit(ctr, row135, "")}, compatdata.ErrDropped,
			[]string{"the new data lacks rows the copy in use has (and whose minors are still supported): containerd 1.35"}, 0},
		{"a malformed table", ctrPath, compatsrc.Answer{Body: edit(ctr, "| 1.35    ", "| 1.35.x  ")}, compatdata.ErrSource,
			[]string{"containerd: " + w.up.URL + ctrPath + `: line 167: Kubernetes version "1.35.x" is not a MAJOR.MINOR`}, 0},
		{"a minor that does not exist", ctrPath, compatsrc.Answer{Body: edit(ctr, row135, row135+"| 1.99               | 2.3.0+                           | v1              |\n")}, compatdata.ErrSource,
			[]string{`"kubernetes 1.99: containerd 2.3.0+ (CRI v1)" names Kubernetes 1.99, which the end-of-life data does not know (newest: 1.37)`}, 0},
		{"a Kubernetes 2", ctrPath, compatsrc.Answer{Body: edit(ctr, row135, row135+"| 2.0                | 2.3.0+                           | v1              |\n")}, compatdata.ErrSource,
			[]string{`"kubernetes 2.0: containerd 2.3.0+ (CRI v1)" names Kubernetes 2.0: the tables hold Kubernetes 1.x minors only`}, 0},
		{"a containerd that does not exist", ctrPath, compatsrc.Answer{Body: edit(ctr, "| 2.3.0+, 2.2.0+ ", "| 9.1.0+, 2.2.0+ ")}, compatdata.ErrSource,
			[]string{"names containerd 9.1, which the end-of-life data does not know (newest: 2.3)"}, 0},
		{"bounds out of order", helmPath, compatsrc.Answer{Body: edit(helm, "| 3.21.x       | 1.36.x - 1.33.x ", "| 3.21.x       | 1.33.x - 1.36.x ")}, compatdata.ErrSource,
			[]string{"helm: " + w.up.URL + helmPath + ": line 49: the Kubernetes range 1.36-1.33: the bounds are out of order"}, 0},
		{"two sources disagree", helmPath, compatsrc.Answer{Body: edit(helm, "| 3.21.x       | 1.36.x - 1.33.x ", "| 3.21.x       | 1.36.x - 1.32.x |\n| 4.2.x        | 1.36.x - 1.32.x ")}, compatdata.ErrSource,
			[]string{`"helm 4.2: Kubernetes 1.32-1.36", but ` + w.up.URL + compatsrc.Path(compatdata.Helm, "", 0) + ` says "helm 4.2: Kubernetes 1.33-1.36"`}, 0},
		{"a row given twice, with other values", helmPath, compatsrc.Answer{Body: edit(helm, "| 3.21.x       | 1.36.x - 1.33.x               |\n", "| 3.21.x       | 1.36.x - 1.33.x               |\n| 3.21.x       | 1.37.x - 1.34.x               |\n")}, compatdata.ErrSource,
			[]string{"helm: " + w.up.URL + helmPath + `: helm 3.21 given twice: "helm 3.21: Kubernetes 1.33-1.36" and "helm 3.21: Kubernetes 1.34-1.37"`}, 0},
		{"100 MB", ctrPath, compatsrc.Answer{Size: 100 << 20}, compatdata.ErrSource,
			[]string{"containerd: " + w.up.URL + ctrPath + ": the answer is larger than 1048576 bytes: refused"}, 0},
		{"a slow drip", ctrPath, compatsrc.Answer{Body: ctr, Drip: 100 * time.Millisecond}, nil,
			[]string{"fetch " + w.up.URL + ctrPath, "containerd: "}, 15 * time.Second},
		{"not found", ctrPath, compatsrc.Answer{Status: 404, Body: []byte("404: Not Found")}, compatdata.ErrSource,
			[]string{"containerd: " + w.up.URL + ctrPath + `: answered "404 Not Found": upstream moved or removed the file`, "data: sources: containerd:"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := w.up.Get(tc.path)
			w.up.Put(tc.path, tc.answer)
			defer w.up.Put(tc.path, compatsrc.Answer{Body: old})
			start := time.Now()
			err := refresh(t)
			took := time.Since(start)
			fail := err == nil || tc.is != nil && !errors.Is(err, tc.is)
			for _, s := range tc.want {
				fail = fail || !strings.Contains(err.Error(), s)
			}
			if fail {
				t.Errorf("err %v\nwant %v containing %q", err, tc.is, tc.want)
			}
			if tc.maxTime > 0 && took > tc.maxTime {
				t.Errorf("took %s, more than %s", took, tc.maxTime)
			}
			kept(t, tableOf[tc.path])
		})
	}

	// endoflife.date's Istio range, which compat prefers to Istio's table,
	// is checked as a row of that table.
	for _, tc := range []struct{ value, want string }{
		{"1.32 - 1.99", `"istio 1.31: Kubernetes 1.32-1.99" names Kubernetes 1.99, which the end-of-life data does not know (newest: 1.37)`},
		{"1.37 - 1.32", "the Kubernetes range 1.37-1.32: the bounds are out of order"},
		{"1.32 to 1.37", "not a range MAJOR.MINOR - MAJOR.MINOR"},
	} {
		t.Run("an Istio range of "+tc.value, func(t *testing.T) {
			istio := w.eol.Cycles("istio")
			defer w.eol.Set("istio", istio)
			bad := append([]supportdata.Cycle(nil), istio...)
			bad[0].SupportedKubernetes = tc.value
			w.eol.Set("istio", bad)
			err := refresh(t)
			want := w.eol.URL + `/api/istio.json: cycle "1.31": supportedKubernetesVersions "` + tc.value + `": ` + tc.want
			if !errors.Is(err, supportdata.ErrAPI) || !strings.Contains(err.Error(), want) {
				t.Errorf("err %v\nwant one containing %q", err, want)
			}
			kept(t, compatdata.EndOfLife)
		})
	}

	t.Run("every unusable table is named", func(t *testing.T) {
		w.up.Put(ctrPath, compatsrc.Answer{Body: []byte("<html>")})
		w.up.Put(helmPath, compatsrc.Answer{Body: []byte("# nothing here\n")})
		defer w.up.Put(ctrPath, compatsrc.Answer{Body: ctr})
		defer w.up.Put(helmPath, compatsrc.Answer{Body: helm})
		o := w.opts
		o.Tables = []string{compatdata.Helm, compatdata.Containerd}
		_, err := compatdata.Refresh(ctx, o)
		if err == nil || !strings.Contains(err.Error(), "helm: "+w.up.URL+helmPath+": no table") || !strings.Contains(err.Error(), "containerd: "+w.up.URL+ctrPath+": the answer is an HTML page") ||
			!strings.Contains(err.Error(), "no table refreshed, nothing written") {
			t.Errorf("err %v", err)
		}
		if !bytes.Equal(testenv.ReadFile(t, tables), goodTables) || !bytes.Equal(testenv.ReadFile(t, eolFile), goodEOL) {
			t.Error("a refresh where no table refreshed wrote the copies")
		}
	})

	t.Run("the end-of-life file cannot be replaced", func(t *testing.T) {
		// A folder where eol.yaml should be: its rename would fail. The
		// tables must not be replaced either (they would claim a refresh
		// the end-of-life data did not get).
		if err := os.Rename(eolFile, eolFile+".keep"); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(eolFile, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		defer func() {
			os.RemoveAll(eolFile)
			os.Rename(eolFile+".keep", eolFile)
		}()
		o := w.opts
		o.Now = refreshNow.Add(30 * time.Minute)
		_, err := compatdata.Refresh(ctx, o)
		if err == nil || !strings.Contains(err.Error(), eolFile) || !strings.Contains(err.Error(), "nothing written") {
			t.Errorf("err %v, want one naming %s and saying nothing was written", err, eolFile)
		}
		if b, _ := os.ReadFile(tables); !bytes.Equal(b, goodTables) {
			t.Error("the tables were replaced though the end-of-life data could not be")
		}
		if left, _ := filepath.Glob(filepath.Join(w.state, "support", ".*")); len(left) > 0 {
			t.Errorf("temporary files left behind: %v", left)
		}
	})

	t.Run("a row lost, accepted with AllowDropped", func(t *testing.T) {
		w.up.Put(ctrPath, compatsrc.Answer{Body: edit(ctr, row135, "")})
		defer w.up.Put(ctrPath, compatsrc.Answer{Body: ctr})
		o := w.opts
		o.AllowDropped, o.Now = true, refreshNow.Add(time.Hour)
		res, err := compatdata.Refresh(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if r := result(res, compatdata.Containerd); strings.Join(r.Dropped, ",") != "1.35" || r.Replaced != "refreshed "+tables {
			t.Errorf("containerd: %+v", r)
		}
		b, _ := os.ReadFile(tables)
		if !strings.Contains(string(b), "# Dropped (accepted with --allow-dropped): containerd 1.35") {
			t.Errorf("the header does not record the dropped row:\n%s", b[:600])
		}
	})

	t.Run("one table only", func(t *testing.T) {
		before, _ := os.ReadFile(eolFile)
		n := len(w.up.Requests())
		o := w.opts
		o.Tables, o.Now = []string{compatdata.CRITools}, refreshNow.Add(2*time.Hour)
		res, err := compatdata.Refresh(ctx, o)
		if err != nil || len(res.Tables) != 1 || res.EndOfLife != nil {
			t.Fatalf("%v %+v", err, res)
		}
		if reqs := w.up.Requests()[n:]; len(reqs) != 1 || reqs[0] != compatsrc.Path(compatdata.CRITools, "", 0) {
			t.Errorf("requests %v", reqs)
		}
		if after, _ := os.ReadFile(eolFile); !bytes.Equal(after, before) {
			t.Error("the end-of-life data changed")
		}
		if _, err := compatdata.Refresh(ctx, compatdata.RefreshOptions{Tables: []string{"flannel"}, StateDir: w.state}); !errors.Is(err, compatdata.ErrUnknownTable) {
			t.Errorf("an unknown table: %v", err)
		}
	})

	t.Run("offline never fetches", func(t *testing.T) {
		off, err := fetch.New(t.TempDir(), fetch.Options{Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		defer off.Close()
		n := len(w.up.Requests())
		o := w.opts
		o.Client = off
		if _, err := compatdata.Refresh(ctx, o); !errors.As(err, new(*fetch.OfflineError)) {
			t.Errorf("err %v, want an OfflineError", err)
		}
		if len(w.up.Requests()) != n {
			t.Error("an offline refresh reached the server")
		}
	})
}

func fmtResult(r compatdata.TableResult) string {
	return "changed " + list(r.Changed) + " retired " + list(r.Retired) + " added " + list(r.Added) + " rows " + strconv.Itoa(r.Rows)
}

func list(s []string) string { return "[" + strings.Join(s, " ") + "]" }

// TestWriteRepositoryFile: data refresh --write into a recipes repository:
// one file with every table and the end-of-life data, which Load then uses
// (and nothing in the state folder), an override that survives the next
// refresh and is reported, and an override without a reason refused. The
// file's folder is made when missing (data: file: data/compat-data.yaml in
// a new repository): the refresh failed there, "not rewritten" (exit 1).
func TestWriteRepositoryFile(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	repo := filepath.Join(t.TempDir(), "data", compatdata.RepositoryFile)
	o := w.opts
	o.Write = repo
	res, err := compatdata.Refresh(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Written, " ") != repo || res.EndOfLife.Path != repo || res.EndOfLife.Replaced != "bundled" {
		t.Errorf("written %v, end-of-life %+v", res.Written, res.EndOfLife)
	}
	if left, _ := os.ReadDir(w.state); len(left) > 0 {
		t.Errorf("the state folder was written: %v", left)
	}
	set, warnings, err := compatdata.Load(w.state, repo)
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	if c := set.Tables.Table(compatdata.Cilium).Copy; c != "repository "+repo || set.EOL.Kind() != "repository" || set.Repository != repo {
		t.Errorf("Load: %q, %q, %q", c, set.EOL.Name(), set.Repository)
	}
	if _, ok := set.EOL.Data.Cycle("kubernetes", "1.37.1"); !ok {
		t.Error("the repository's end-of-life data lacks 1.37")
	}
	first, _ := os.ReadFile(repo)
	for _, want := range []string{"'updeb data refresh --write compat-data.yaml'", "\ntables:\n  helm:\n", "\nendoflife:\n  header:\n", `    "kubernetes":` + "\n"} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("the file lacks %q", want)
		}
	}

	// The operator corrects a row and adds one, each with a reason.
	withOverride := bytes.Replace(first, []byte("  containerd:\n"), []byte(`    override:
      - {helm: "4.3", kubernetes_min: "1.34", kubernetes_max: "1.37", reason: "Helm 4.3.0's notes: built against client-go 1.37; helm-www not updated yet"}
      - {helm: "4.2", kubernetes_min: "1.33", kubernetes_max: "1.36", reason: "checked by hand"}

  containerd:
`), 1)
	os.WriteFile(repo, withOverride, 0o644)
	set, _, err = compatdata.Load(w.state, repo)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := set.Tables.HelmFor("4.3.1"); !ok || m.Override == nil || !m.Row.Allows("1.37.1") || !strings.Contains(m.Override.Reason, "client-go 1.37") {
		t.Errorf("HelmFor 4.3: %+v %v", m, ok)
	}
	o.Now = refreshNow.Add(24 * time.Hour)
	res, err = compatdata.Refresh(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	r := result(res, compatdata.Helm)
	if len(r.Overrides) != 2 || r.Overrides[0].Key != "4.3" || r.Overrides[0].Upstream != "" || r.Overrides[0].Agrees ||
		r.Overrides[1].Key != "4.2" || !r.Overrides[1].Agrees || r.Replaced != "repository "+repo {
		t.Errorf("helm's overrides after the refresh: %+v", r)
	}
	second, _ := os.ReadFile(repo)
	if !bytes.Contains(second, []byte(`reason: "Helm 4.3.0's notes: built against client-go 1.37; helm-www not updated yet"}`)) {
		t.Errorf("the override did not survive the refresh:\n%s", second)
	}
	if !bytes.Contains(second, []byte(`as_of: "2026-11-25T10:11:12Z"`)) {
		t.Error("the tables' date did not move")
	}

	// An override without a reason: the file is refused (and left as it is).
	bad := bytes.Replace(second, []byte(`, reason: "checked by hand"`), nil, 1)
	os.WriteFile(repo, bad, 0o644)
	if _, err := compatdata.Refresh(ctx, o); !errors.Is(err, compatdata.ErrFile) || !strings.Contains(err.Error(), `helm override: missing required field "reason"`) {
		t.Errorf("err %v", err)
	}
	if _, _, err := compatdata.Load(w.state, repo); !errors.Is(err, compatdata.ErrFile) {
		t.Errorf("Load of a broken repository file: %v (it must not fall back)", err)
	}
	if after, _ := os.ReadFile(repo); !bytes.Equal(after, bad) {
		t.Error("the refused file changed")
	}
}

// editingClient is a Getter that runs edit once, at the first request: an
// operator editing the data file while a refresh runs.
type editingClient struct {
	supportdata.Getter
	once sync.Once
	edit func()
}

func (c *editingClient) Get(ctx context.Context, url string, header http.Header, limit int64) ([]byte, error) {
	c.once.Do(c.edit)
	return c.Getter.Get(ctx, url, header, limit)
}

// TestWriteRepositoryFileRewrite: --write replaces the repository's data
// file as every in-place rewrite does (yamlfile.Rewrite): an edit made while
// the refresh ran is kept, the refresh refused (the file changed meanwhile),
// and a data file that is a symlink is refused, link and file kept.
func TestWriteRepositoryFileRewrite(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	repo := filepath.Join(t.TempDir(), compatdata.RepositoryFile)
	o := w.opts
	o.Write = repo
	if _, err := compatdata.Refresh(ctx, o); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(repo)
	edited := append(bytes.Clone(first), "# an operator's note, written while the refresh ran\n"...)
	o.Client = &editingClient{Getter: o.Client, edit: func() { os.WriteFile(repo, edited, 0o644) }}
	o.Now = refreshNow.Add(24 * time.Hour)
	if _, err := compatdata.Refresh(ctx, o); !errors.Is(err, yamlfile.ErrNotRewritten) || !errors.Is(err, yamlfile.ErrChanged) || !strings.Contains(err.Error(), "another process changed it while it was being rewritten") {
		t.Fatalf("a file edited during the refresh: %v", err)
	}
	if b, _ := os.ReadFile(repo); !bytes.Equal(b, edited) {
		t.Error("the edit made during the refresh was lost")
	}

	link := filepath.Join(t.TempDir(), compatdata.RepositoryFile)
	os.Symlink(repo, link)
	o = w.opts
	o.Write = link
	if _, err := compatdata.Refresh(ctx, o); !errors.Is(err, yamlfile.ErrNotRewritten) || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("a data file that is a symlink: %v", err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if b, _ := os.ReadFile(repo); !bytes.Equal(b, edited) {
		t.Error("the file the link points to changed")
	}
}

// A refresh writes the state folder's copies under the folder's lock (two
// at once could pair one's tables with the other's end-of-life data), and
// removes the temporary copies a killed refresh left there.
func TestRefreshLockAndLeftovers(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := compatdata.Refresh(ctx, w.opts); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(filepath.Join(w.state, compatdata.File))
	var planted []string
	for _, name := range []string{compatdata.File, supportdata.File} {
		p := filepath.Join(filepath.Dir(filepath.Join(w.state, name)), "."+filepath.Base(name)+".tmp-4242")
		if err := os.WriteFile(p, []byte("cut short"), 0o644); err != nil {
			t.Fatal(err)
		}
		planted = append(planted, p)
	}
	l, err := lockfile.AcquireDir(ctx, dir, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := compatdata.Refresh(ctx, w.opts)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the refresh finished while another held the state folder's lock: %v", err)
	case <-time.After(2 * time.Second):
	}
	for _, p := range planted {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s went before the lock was free: %v", p, err)
		}
	}
	l.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, p := range planted {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is left: %v", p, err)
		}
	}
}

// TestRefreshKubeadmNewMinor: kubeadm's map on the newest minor's branch
// covers the newest minors only; in the weeks between a new minor's release
// and the end of life of the oldest still supported (1.36 out on
// 2026-04-22, 1.33 end-of-life on 2026-06-28), release-1.36 no longer lists
// 1.33. That row is kept from the copy in use, not refused as dropped (which
// stopped every refresh, and with it the unattended loop, for two months),
// until its minor is end-of-life; a minor the branch's map should cover is
// still refused when missing.
func TestRefreshKubeadmNewMinor(t *testing.T) {
	w := newWorld(t)
	if err := w.up.ServeCopies(copiesDir, "1.36", []string{"3.31", "3.32"}, []string{"1.18", "1.19", "1.20"}); err != nil {
		t.Fatal(err)
	}
	o := w.opts
	o.Tables = []string{compatdata.KubeadmEtcd}
	// The repository's data file: a refreshed copy in the state folder
	// dated before the bundled one would be passed over.
	o.Write = filepath.Join(t.TempDir(), "compat-data.yaml")
	refresh := func(day string) (compatdata.TableResult, error) {
		t.Helper()
		o.Now, _ = time.Parse(time.DateOnly, day)
		res, err := compatdata.Refresh(context.Background(), o)
		if err != nil {
			return compatdata.TableResult{}, err
		}
		return result(res, compatdata.KubeadmEtcd), nil
	}
	r, err := refresh("2026-05-01")
	if got := fmtResult(r); err != nil || !strings.HasSuffix(got, " retired [1.32 1.31] added [] rows 4") {
		t.Fatalf("a week after 1.36's release: %v\n%s", err, got)
	}
	set, _, err := compatdata.Load(w.state, o.Write)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := set.Tables.KubeadmEtcdFor("1.33.13"); !ok || m.Row.Etcd != "3.5.24" {
		t.Errorf("kubeadm 1.33 after the refresh: %+v %v", m, ok)
	}
	if r, err := refresh("2026-07-01"); fmtResult(r) != "changed [] retired [1.33] added [] rows 3" || err != nil {
		t.Errorf("after 1.33's end of life: %v\n%s", err, fmtResult(r))
	}
	path := compatsrc.Path(compatdata.KubeadmEtcd, "1.36", 0)
	w.up.Put(path, compatsrc.Answer{Body: bytes.Replace(w.up.Get(path), []byte("\t\t35: \"3.6.7-0\",\n"), nil, 1)})
	if _, err := refresh("2026-07-02"); !errors.As(err, new(*compatdata.DroppedError)) || !strings.Contains(err.Error(), "kubeadm-etcd 1.35") {
		t.Errorf("1.35 missing from release-1.36's map: %v", err)
	}
}

// TestRefreshTwoAtOnce: two refreshes of different tables at once (a timer's
// --table helm, an operator's --table containerd) both count: the second
// waits for the first and starts from the copies it wrote, instead of
// writing back the copy of helm it read before the first wrote its own.
func TestRefreshTwoAtOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := compatdata.Refresh(ctx, w.opts); err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return refreshNow.Add(time.Duration(d) * 24 * time.Hour) }
	second := w.opts
	second.Tables, second.Now = []string{"containerd"}, day(2)
	done := make(chan error, 1)
	first := w.opts
	first.Tables, first.Now = []string{"helm"}, day(1)
	first.Client = &editingClient{Getter: first.Client, edit: func() {
		go func() {
			_, err := compatdata.Refresh(ctx, second)
			done <- err
		}()
		select { // the second's whole run, unless it waits for the first
		case err := <-done:
			done <- err
		case <-time.After(2 * time.Second):
		}
	}}
	if _, err := compatdata.Refresh(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(w.state, compatdata.File))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Time{day(1), day(2)} {
		if s := d.Format("2006-01-02"); !strings.Contains(string(b), s) {
			t.Errorf("no table fetched on %s in:\n%s", s, b)
		}
	}
}

// TestRefreshCycleNamedOtherwise: endoflife.date naming Kubernetes' newest
// cycle "1.37.0" (lookups read it as 1.37) is the same refresh as "1.37":
// kubeadm's map from release-1.37 (not release-1.36, the newest named
// MAJOR.MINOR), and Helm's row of 1.37 a minor the data knows.
func TestRefreshCycleNamedOtherwise(t *testing.T) {
	w := newWorld(t)
	cycles := w.eol.Cycles("kubernetes")
	cycles[0].Name, cycles[0].Latest = "1.37.0", "1.37.0"
	w.eol.Set("kubernetes", cycles)
	helm4 := compatsrc.Path(compatdata.Helm, "", 0)
	w.up.Put(helm4, compatsrc.Answer{Body: bytes.Replace(w.up.Get(helm4), []byte("| 4.2.x "), []byte("| 4.3.x        | 1.37.x - 1.34.x               |\n| 4.2.x "), 1)})
	res, err := compatdata.Refresh(context.Background(), w.opts)
	if err != nil {
		t.Fatal(err)
	}
	if r := result(res, compatdata.KubeadmEtcd); len(r.URLs) != 1 || !strings.Contains(r.URLs[0], "/release-1.37/") {
		t.Errorf("kubeadm-etcd fetched %v, want release-1.37's", r.URLs)
	}
	if r := result(res, compatdata.Helm); !slices.Contains(r.Added, "4.3") {
		t.Errorf("helm: %s", fmtResult(r))
	}
}

// TestRefreshSomeTablesAfterUpgrade: the state folder's copy from before an
// upgrade of updeb holds helm fetched after the new bundled copy's snapshot
// and containerd from an older updeb's (a --table helm refresh carried it).
// A refresh of cri-tools writes cri-tools (dated now) and helm (its own
// date), not the bundled tables nor the older containerd, which would
// otherwise be redated with the file and outrank the newer bundled one; a
// refresh of the end-of-life data alone leaves the tables' file as it was.
// Two such refreshes of equal copies write the same bytes.
func TestRefreshSomeTablesAfterUpgrade(t *testing.T) {
	w := newWorld(t)
	bundled, err := os.ReadFile(filepath.Join("data", "compat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	old := bundled
	for _, edit := range [][2]string{{"# As of: 2026-08-06\n", "# As of: 2026-11-20T10:00:00Z\n"},
		{`    as_of: "2026-08-06"`, `    as_of: "2026-11-20T10:00:00Z"`}, {`    as_of: "2026-08-22"`, `    as_of: "2026-05-01"`}} {
		if !bytes.Contains(old, []byte(edit[0])) {
			t.Fatalf("the bundled copy lacks %q", edit[0])
		}
		old = bytes.Replace(old, []byte(edit[0]), []byte(edit[1]), 1)
	}
	var written [][]byte
	for range 2 {
		o := w.opts
		o.StateDir, o.Tables = t.TempDir(), []string{compatdata.CRITools}
		tables := filepath.Join(o.StateDir, compatdata.File)
		os.MkdirAll(filepath.Dir(tables), 0o755)
		os.WriteFile(tables, old, 0o644)
		res, err := compatdata.Refresh(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.Written, " ") != tables || len(res.Tables) != 1 || res.Tables[0].Replaced != "bundled" {
			t.Fatalf("written %v, tables %+v", res.Written, res.Tables)
		}
		set, warnings, err := compatdata.Load(o.StateDir, "")
		if err != nil || len(warnings) > 0 {
			t.Fatal(err, warnings)
		}
		var got []string
		for _, st := range set.Status(refreshNow, 30*24*time.Hour)[1:] {
			got = append(got, st.Table+" "+strings.Fields(st.Copy)[0]+" "+supportdata.FormatAsOf(st.AsOf))
		}
		if want := "helm refreshed 2026-11-20T10:00:00Z, containerd bundled 2026-08-22, istio bundled 2026-08-22, kubeadm-etcd bundled 2026-08-06, " +
			"calico bundled 2026-08-21, cilium bundled 2026-08-22, cri-tools refreshed 2026-11-24T10:11:12Z"; strings.Join(got, ", ") != want {
			t.Errorf("tables after the refresh:\n%s\nwant\n%s", strings.Join(got, ", "), want)
		}
		b, _ := os.ReadFile(tables)
		written = append(written, b)
		o.Tables = []string{compatdata.EndOfLife}
		if res, err := compatdata.Refresh(context.Background(), o); err != nil || strings.Join(res.Written, " ") != filepath.Join(o.StateDir, supportdata.File) {
			t.Fatalf("end-of-life data alone: %v, written %v", err, res)
		}
		if after, _ := os.ReadFile(tables); !bytes.Equal(after, b) {
			t.Errorf("a refresh of the end-of-life data alone rewrote the tables:\n%s", after)
		}
	}
	if !bytes.Equal(written[0], written[1]) {
		t.Errorf("two refreshes of equal copies wrote\n%s\nand\n%s", written[0], written[1])
	}
}

// TestRefreshLooseList: Calico's and Cilium's lists of Kubernetes minors
// written with a blank line between the items (a loose list: Markdown and
// reStructuredText show it as the same one list) are read whole. The first
// item alone was taken as the list, and the refresh reported the row as
// changed from 1.34-1.36 to 1.34, as if upstream had said so.
func TestRefreshLooseList(t *testing.T) {
	w := newWorld(t)
	loosen := func(path, list string) {
		t.Helper()
		body := w.up.Get(path)
		if !bytes.Contains(body, []byte(list)) {
			t.Fatalf("%s lacks %q", path, list)
		}
		w.up.Put(path, compatsrc.Answer{Body: bytes.Replace(body, []byte(list), []byte(strings.ReplaceAll(list, "\n", "\n\n")), 1)})
	}
	loosen(compatsrc.Path(compatdata.Calico, "3.32", 0), "* 1.34\n* 1.35\n* 1.36\n")
	for _, m := range []string{"1.18", "1.19", "1.20"} {
		loosen(compatsrc.Path(compatdata.Cilium, m, 0), "* 1.29\n* 1.30\n* 1.31\n* 1.32\n")
	}
	o := w.opts
	o.Tables = []string{compatdata.Calico, compatdata.Cilium}
	o.Write = filepath.Join(t.TempDir(), "compat-data.yaml")
	if _, err := compatdata.Refresh(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	set, _, err := compatdata.Load(w.state, o.Write)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range []string{compatdata.Calico, compatdata.Cilium} {
		for _, r := range set.Tables.Table(name).Effective() {
			got = append(got, r.String())
		}
	}
	want := "calico 3.32: Kubernetes 1.34, 1.35, 1.36|calico 3.31: Kubernetes 1.32, 1.33, 1.34, 1.35|" +
		"cilium 1.20: Kubernetes 1.29, 1.30, 1.31, 1.32|cilium 1.19: Kubernetes 1.29, 1.30, 1.31, 1.32|cilium 1.18: Kubernetes 1.29, 1.30, 1.31, 1.32"
	if strings.Join(got, "|") != want {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
}

// TestRefreshMovedFile: a table's file that is not where the URL says (404:
// upstream moved or renamed it, as helm-www did version_skew.md to .mdx, or
// has not published a new minor's page yet) is an unusable answer of that
// table, as an HTML page is: the refresh names the table, the URL and the
// minor, and says to point data: sources: at the file's new place; the copy
// in use is kept. It was a bare fetch error, whose hint sent the user to a
// recipe's url: or watch:, which no table has.
func TestRefreshMovedFile(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct{ table, minor string }{{compatdata.Helm, ""}, {compatdata.Calico, "3.32"}} {
		path := compatsrc.Path(tc.table, tc.minor, 0)
		good := w.up.Get(path)
		w.up.Put(path, compatsrc.Answer{Status: http.StatusNotFound, Body: []byte("404: Not Found")})
		res, err := compatdata.Refresh(context.Background(), w.opts)
		if err != nil {
			t.Fatalf("%s moved: the refresh failed as a whole: %v", tc.table, err)
		}
		err = res.KeptError()
		want := tc.table + ": " + w.up.URL + path + `: answered "404 Not Found": upstream moved or removed the file (or has not published it yet)`
		if tc.minor != "" {
			want += " (calico " + tc.minor + "; {minor} in the URL stands for each minor)"
		}
		if !errors.Is(err, compatdata.ErrSource) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "data: sources: "+tc.table+":") {
			t.Errorf("%s moved: %v\nwant ErrSource, %q and data: sources:", tc.table, err, want)
		}
		if len(res.Kept) != 1 || res.Kept[0].Table != tc.table || res.Kept[0].URL != w.up.URL+path || res.Kept[0].Copy != "bundled" || len(res.Tables) != 6 {
			t.Errorf("%s moved: kept %+v, %d tables refreshed", tc.table, res.Kept, len(res.Tables))
		}
		// The state folder's copy holds the tables refreshed; the one kept
		// is the bundled one, which stays in the binary.
		if set, _, err := compatdata.Load(w.state, ""); err != nil || set.Tables.Table(tc.table).Copy != "bundled" {
			t.Errorf("%s moved: after the refresh, its copy in use is %q (%v)", tc.table, set.Tables.Table(tc.table).Copy, err)
		}
		os.Remove(filepath.Join(w.state, compatdata.File))
		os.Remove(filepath.Join(w.state, supportdata.File))
		w.up.Put(path, compatsrc.Answer{Body: good})
	}
	// A mirror folder that lacks the file: the mirror's answer, not
	// upstream's move.
	mirror := t.TempDir()
	f, err := fetch.New(t.TempDir(), fetch.Options{Retries: -1, Mirrors: []fetch.Mirror{{Prefix: w.up.URL + "/", To: "file://" + mirror + "/"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := w.opts
	o.Client, o.Tables = f, []string{compatdata.Helm}
	_, err = compatdata.Refresh(context.Background(), o)
	path := compatsrc.Path(compatdata.Helm, "", 0)
	want := "helm: " + w.up.URL + path + ": file://" + filepath.Join(mirror, path) + ` answered "404 Not Found (no such file in the mirror)": the mirror (mirrors:) lacks the file`
	if !errors.Is(err, compatdata.ErrSource) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "upstream moved") {
		t.Errorf("helm missing from the mirror: %v\nwant %q", err, want)
	}
}

// TestRefreshLineInsideTable: a line that is no row between two rows of a
// table (a comment, a note; GitHub shows a note as a row of one cell, and
// ends the table at a comment) means upstream's table is broken, not
// shorter. The rows before the line were taken as the whole table, and the
// refresh reported the rest as retired (their minors are end-of-life), a
// table upstream never wrote.
func TestRefreshLineInsideTable(t *testing.T) {
	w := newWorld(t)
	path := compatsrc.Path(compatdata.CRITools, "", 0)
	body := w.up.Get(path)
	row := "| 1.15.X             | v1.15.0           | release-1.15     |\n"
	if !bytes.Contains(body, []byte(row)) {
		t.Fatalf("cri-tools' README.md lacks %q", row)
	}
	for _, line := range []string{"<!-- older releases: see the release-1.x branches -->", "{/* older releases */}", "Older releases:"} {
		w.up.Put(path, compatsrc.Answer{Body: bytes.Replace(body, []byte(row), []byte(line+"\n"+row), 1)})
		o := w.opts
		o.Tables = []string{compatdata.CRITools}
		res, err := compatdata.Refresh(context.Background(), o)
		want := "cri-tools: " + w.up.URL + path + ": line 28: " + strconv.Quote(line) + " inside the table, before the row at line 29"
		if !errors.Is(err, compatdata.ErrSource) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q inside the table: %v, %+v\nwant an error containing %q", line, err, res, want)
		}
	}
}

// TestRefreshHiddenMarkdown: what a Markdown page does not show is not
// upstream's word. A table kept in a comment (an MDX {/* */} or an HTML
// <!-- -->) beside one the page now writes as an HTML <table> was read as
// upstream's table, rows the page does not state (a draft's Helm 4.2 with
// Kubernetes 1.30-1.36, where the page says 1.33-1.36);
// and a code block's "# ..." comment lines (containerd's RELEASES.md has
// them, in its TOML examples) were read as headings, one in the "Kubernetes
// Support" section ending the section before its table.
func TestRefreshHiddenMarkdown(t *testing.T) {
	w := newWorld(t)
	helmPath := compatsrc.Path(compatdata.Helm, "", 0)
	helm := w.up.Get(helmPath)
	table := "| Helm Version | Supported Kubernetes Versions |\n|--------------|-------------------------------|\n| 4.2.x        | 1.36.x - 1.33.x               |\n" +
		"| 4.1.x        | 1.35.x - 1.32.x               |\n| 4.0.x        | 1.34.x - 1.31.x               |\n"
	htmlTable := "<table>\n<tr><th>Helm Version</th><th>Supported Kubernetes Versions</th></tr>\n<tr><td>4.2.x</td><td>1.36.x - 1.33.x</td></tr>\n" +
		"<tr><td>4.1.x</td><td>1.35.x - 1.32.x</td></tr>\n<tr><td>4.0.x</td><td>1.34.x - 1.31.x</td></tr>\n</table>\n"
	if !bytes.Contains(helm, []byte(table)) {
		t.Fatalf("helm's page lacks %q", table)
	}
	for _, comment := range [][2]string{{"{/*\n", "*/}\n"}, {"<!--\n", "-->\n"}, {"```markdown\n", "```\n"}} {
		draft := comment[0] + strings.Replace(table, "| 4.2.x        | 1.36.x - 1.33.x               |\n", "| 4.2.x        | 1.36.x - 1.30.x               |\n", 1) + comment[1]
		w.up.Put(helmPath, compatsrc.Answer{Body: bytes.Replace(helm, []byte(table), []byte(draft+"\n"+htmlTable), 1)})
		o := w.opts
		o.Tables = []string{compatdata.Helm}
		res, err := compatdata.Refresh(context.Background(), o)
		want := "helm: " + w.up.URL + helmPath + `: no table with the columns "helm version | supported kubernetes versions"`
		if !errors.Is(err, compatdata.ErrSource) || !strings.Contains(err.Error(), want) {
			t.Errorf("the table in %q, the page's in HTML: %v, %+v\nwant an error containing %q", strings.TrimSpace(comment[0]), err, res, want)
		}
		// Beside the page's own table, the hidden one is no second table.
		w.up.Put(helmPath, compatsrc.Answer{Body: bytes.Replace(helm, []byte(table), []byte(draft+"\n"+table), 1)})
		res, err = compatdata.Refresh(context.Background(), o)
		if err != nil {
			t.Errorf("the table in %q beside the page's: %v", strings.TrimSpace(comment[0]), err)
		} else if got := fmtResult(result(res, compatdata.Helm)); got != "changed [] retired [] added [] rows 42" {
			t.Errorf("the table in %q beside the page's: %s", strings.TrimSpace(comment[0]), got)
		}
	}
	w.up.Put(helmPath, compatsrc.Answer{Body: helm})

	ctrPath := compatsrc.Path(compatdata.Containerd, "", 0)
	ctr := w.up.Get(ctrPath)
	example := "```toml\n# OLD\n# [plugins.\"io.containerd.grpc.v1.cri\"]\n\n# NEW\n[plugins.\"io.containerd.cri.v1.runtime\"]\n```\n\n"
	if !bytes.Contains(ctr, []byte("### Kubernetes Support\n")) {
		t.Fatal(`containerd's RELEASES.md lacks "### Kubernetes Support"`)
	}
	w.up.Put(ctrPath, compatsrc.Answer{Body: bytes.Replace(ctr, []byte("### Kubernetes Support\n"), []byte("### Kubernetes Support\n\n"+example), 1)})
	o := w.opts
	o.Tables = []string{compatdata.Containerd}
	if res, err := compatdata.Refresh(context.Background(), o); err != nil || len(res.Tables) != 1 || res.Tables[0].Rows != 5 {
		t.Errorf("a TOML example in the Kubernetes Support section: %v, %+v", err, res)
	}
}

// TestRefreshBulletOfAnotherList: a bullet indented otherwise, or with the
// other marker, is not an item of the list of Kubernetes minors: it belongs
// to a nested list, or to a reStructuredText comment ("..", then indented
// text) that keeps a minor dropped from the list. It was read as one more
// minor, and Cilium's row claimed Kubernetes 1.28, which the page does not
// show.
func TestRefreshBulletOfAnotherList(t *testing.T) {
	w := newWorld(t)
	list := "* 1.29\n* 1.30\n"
	for _, tc := range []struct{ edit, want string }{
		{".. Dropped in 1.18:\n   * 1.28\n\n" + list, `line 24: "* 1.29" is not an item of the list at line 22`},
		{"* 1.29\n  * 1.30\n", `line 22: "  * 1.30" is not an item of the list at line 21`},
		{"* 1.29\n\n- 1.30\n", `line 23: "- 1.30" is not an item of the list at line 21`},
	} {
		for _, m := range []string{"1.18", "1.19", "1.20"} {
			path := compatsrc.Path(compatdata.Cilium, m, 0)
			body, err := os.ReadFile(filepath.Join(copiesDir, "cilium", "requirements.rst"))
			if err != nil || !bytes.Contains(body, []byte(list)) {
				t.Fatalf("cilium's requirements.rst lacks %q (%v)", list, err)
			}
			w.up.Put(path, compatsrc.Answer{Body: bytes.Replace(body, []byte(list), []byte(tc.edit), 1)})
		}
		o := w.opts
		o.Tables = []string{compatdata.Cilium}
		res, err := compatdata.Refresh(context.Background(), o)
		if !errors.Is(err, compatdata.ErrSource) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, %+v\nwant an error containing %q", tc.edit, err, res, tc.want)
		}
	}
}

// TestRefreshOneSourceFails: a month after a refresh, Calico's page of its
// newest minor answers 404 (not written yet upstream) and Cilium's page
// parses to nonsense: the other tables refresh and are written, Calico and
// Cilium keep the copy in use (rows, sources and as_of as they were, and
// stale past MaxAge), and each is named with its URL, why, its copy and its
// age. The whole refresh failed, and nothing moved, for one upstream's lag.
func TestRefreshOneSourceFails(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := compatdata.Refresh(ctx, w.opts); err != nil {
		t.Fatal(err)
	}
	tables := filepath.Join(w.state, compatdata.File)
	before, err := compatdata.Parse(tables, testenv.ReadFile(t, tables))
	if err != nil {
		t.Fatal(err)
	}
	calico := compatsrc.Path(compatdata.Calico, "3.32", 0)
	w.up.Put(calico, compatsrc.Answer{Status: 404, Body: []byte("404: Not Found")})
	cilium := compatsrc.Path(compatdata.Cilium, "1.20", 0)
	w.up.Put(cilium, compatsrc.Answer{Body: []byte("Kubernetes Compatibility\n========================\n\nThe page moved.\n")})
	o := w.opts
	o.Now, o.MaxAge = refreshNow.AddDate(0, 0, 40), 30*24*time.Hour
	res, err := compatdata.Refresh(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var refreshed []string
	for _, r := range res.Tables {
		refreshed = append(refreshed, r.Table)
	}
	if got := strings.Join(refreshed, " "); got != "helm containerd istio kubeadm-etcd cri-tools" || res.EndOfLife == nil {
		t.Errorf("refreshed %s, end-of-life %v", got, res.EndOfLife)
	}
	if len(res.Kept) != 2 {
		t.Fatalf("kept %+v", res.Kept)
	}
	for i, want := range []struct{ table, url, why string }{
		{compatdata.Calico, w.up.URL + calico, `answered "404 Not Found": upstream moved or removed the file (or has not published it yet) (calico 3.32`},
		{compatdata.Cilium, w.up.URL + cilium, "no "},
	} {
		k := res.Kept[i]
		if k.Table != want.table || k.URL != want.url || !strings.Contains(k.Error, want.why) || k.Copy != "refreshed "+tables ||
			!k.AsOf.Equal(refreshNow) || k.AgeDays != 40 || !k.Stale || !errors.Is(k.Err, compatdata.ErrSource) {
			t.Errorf("kept %d: %+v, want %s %s %q", i, k, want.table, want.url, want.why)
		}
	}
	kerr := res.KeptError()
	if !errors.Is(kerr, compatdata.ErrSource) || !strings.Contains(kerr.Error(), "2 tables not refreshed") ||
		!strings.Contains(kerr.Error(), "[kept the refreshed "+tables+" copy, as of 2026-11-24, 40 days old; older than data: max-age-days: allows") {
		t.Errorf("KeptError: %v", kerr)
	}
	after, err := compatdata.Parse(tables, testenv.ReadFile(t, tables))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range compatdata.Names() {
		b, a := before.Table(name), after.Table(name)
		keptTable := name == compatdata.Calico || name == compatdata.Cilium
		if keptTable != a.AsOf.Equal(refreshNow) || keptTable && (fmt.Sprint(a.Rows) != fmt.Sprint(b.Rows) || !slices.Equal(a.Sources, b.Sources)) {
			t.Errorf("%s after: as of %s, sources %v, %d rows (before: %s, %v, %d rows)", name, a.AsOf, a.Sources, len(a.Rows), b.AsOf, b.Sources, len(b.Rows))
		}
	}
	if !strings.Contains(string(testenv.ReadFile(t, tables)), "# Not refreshed (the refresh of each failed; each keeps its copy in use, sources and as_of): calico, cilium\n") {
		t.Errorf("the header does not say which tables were kept:\n%.900s", testenv.ReadFile(t, tables))
	}

	// Every table asked for failing is the refresh failing: nothing written.
	o.Tables, o.Now = []string{compatdata.Calico, compatdata.Cilium}, o.Now.Add(time.Hour)
	good := testenv.ReadFile(t, tables)
	res, err = compatdata.Refresh(ctx, o)
	e, ok := errors.AsType[*compatdata.RefreshError](err)
	if res != nil || !ok || strings.Join(e.Failed, " ") != "calico cilium" || !errors.Is(err, compatdata.ErrSource) ||
		!strings.Contains(err.Error(), "no table refreshed, nothing written:\n  calico: "+w.up.URL+calico) {
		t.Errorf("every table failing: %v %v", res, err)
	}
	if !bytes.Equal(testenv.ReadFile(t, tables), good) {
		t.Error("a refresh where every table failed rewrote the tables")
	}
}
