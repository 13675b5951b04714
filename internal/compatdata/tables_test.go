package compatdata

import (
	"sync"
	"testing"
)

// TestLookupsDoNotSort: a lookup reads the rows the table sorted (and
// applied its overrides to) once, when it was read: it copied and re-sorted
// them on every call, about 1 s of plan's evaluation of 6,000 release sets.
// Past the version it parses, a lookup allocates nothing; Effective gives a
// copy, so that a caller that changes it changes no later lookup; and
// concurrent readers share the table safely (go test -race).
func TestLookupsDoNotSort(t *testing.T) {
	b, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	// The matches are made once: what remains is the lookup's own work.
	helm, ctr := func(r HelmRow) bool { return r.Helm == "3.19" }, func(r ContainerdRow) bool { return r.Kubernetes == "1.33" }
	cri := func(r CRIToolsRow) bool { return r.KubernetesMin == "1.30" }
	lookups := func() {
		lookup(b.Table(Helm), helm)
		lookup(b.Table(Containerd), ctr)
		lookup(b.Table(CRITools), cri)
	}
	if n := testing.AllocsPerRun(100, lookups); n != 0 {
		t.Errorf("the lookups allocate %v times a run, want 0 (the rows copied and sorted anew)", n)
	}
	rows := b.Table(Helm).Effective()
	want, ok := b.HelmFor(rows[0].Key())
	rows[0], rows[len(rows)-1] = rows[len(rows)-1], rows[0]
	if got, _ := b.HelmFor(want.Row.Key()); !ok || got.Row != want.Row || b.Table(Helm).Effective()[0] != want.Row {
		t.Errorf("a change to what Effective gave changed the table: %v, want %v", got.Row, want.Row)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				lookups()
				b.CRIToolsFor("1.34.0")
			}
		})
	}
	wg.Wait()
}
