package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 generations"}, {1, "1 generation"}, {-1, "-1 generation"}, {2, "2 generations"}, {11, "11 generations"}} {
		if got := Count(c.n, "generation", "generations"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if Of(1, "counts", "count") != "counts" || Of(0, "counts", "count") != "count" || Of(3, "counts", "count") != "count" {
		t.Error("Of")
	}
	if Days(1) != "1 day" || Days(30) != "30 days" {
		t.Errorf("Days: %q, %q", Days(1), Days(30))
	}
}
