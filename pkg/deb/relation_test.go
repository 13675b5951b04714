package deb

import "testing"

func TestRelationSatisfiedBy(t *testing.T) {
	for _, tt := range []struct {
		rel, version string
		want         bool
	}{
		{"ab", "1:0", true},
		{"ab (<< 2.0-1)", "1.9-3", true},
		{"ab (<< 2.0-1)", "2.0-1", false},
		{"ab (<< 2.0-1)", "2.0~rc1-1", true},
		{"ab (<= 2.0-1)", "2.0-1", true},
		{"ab (= 2.0-1)", "2.0-1", true},
		{"ab (= 2.0-1)", "2.0-2", false},
		{"ab (>= 2.0-1)", "1:1.0", true},
		{"ab (>> 2.0-1)", "2.0-1", false},
	} {
		gs, err := ParseRelations("Replaces", tt.rel)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := gs[0][0].SatisfiedBy(tt.version); err != nil || got != tt.want {
			t.Errorf("%s satisfied by %s: %v, %v; want %v", tt.rel, tt.version, got, err, tt.want)
		}
	}
}
