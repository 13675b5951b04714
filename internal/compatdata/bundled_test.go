package compatdata

import "testing"

func TestBundledParses(t *testing.T) {
	tb, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if tb.Table(n) == nil {
			t.Errorf("no %s table", n)
		}
	}
}
