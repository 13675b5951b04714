package track

import (
	"strings"
	"testing"
	"time"
)

func TestMarkEndOfLife(t *testing.T) {
	_, file := scenario(t)
	before := readString(t, file)
	day := time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC)
	changed, err := MarkEndOfLife(t.Context(), load(t, file), day)
	if err != nil || !changed {
		t.Fatalf("%v %v", changed, err)
	}
	after := readString(t, file)
	if after != strings.Replace(before, "release-date: 2026-03-14\n", "release-date: 2026-03-14\nend-of-life: 2026-10-27\n", 1) {
		t.Errorf("marked:\n%s", after)
	}
	if r := load(t, file); !r.EndOfLife.Equal(day) {
		t.Errorf("end-of-life %v", r.EndOfLife)
	}
	if changed, err := MarkEndOfLife(t.Context(), load(t, file), day); changed || err != nil {
		t.Errorf("again: %v %v", changed, err)
	}
	if _, err := MarkEndOfLife(t.Context(), load(t, file), day.AddDate(0, 0, 3)); err != nil || !strings.Contains(readString(t, file), "end-of-life: 2026-10-30\n") {
		t.Errorf("another day: %v\n%s", err, readString(t, file))
	}
}
