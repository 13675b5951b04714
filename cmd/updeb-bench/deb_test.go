package main

import (
	"reflect"
	"testing"
	"time"
)

// medianRows keeps one row per name and mode, the whole row of the round
// with the median wall, in the first round's order.
func TestMedianRows(t *testing.T) {
	r := func(name, mode string, wall, cpu int) row {
		return row{name: name, mode: mode, wall: time.Duration(wall) * time.Second, cpu: time.Duration(cpu) * time.Second}
	}
	rounds := []row{
		r("dpkg", "", 3, 30), r("updeb", "a", 9, 90), r("updeb", "b", 1, 10),
		r("dpkg", "", 1, 10), r("updeb", "a", 5, 50), r("updeb", "b", 2, 20),
		r("dpkg", "", 2, 20), r("updeb", "a", 7, 70), r("updeb", "b", 3, 30),
	}
	want := []row{r("dpkg", "", 2, 20), r("updeb", "a", 7, 70), r("updeb", "b", 2, 20)}
	if got := medianRows(rounds); !reflect.DeepEqual(got, want) {
		t.Errorf("medianRows = %v, want %v", got, want)
	}
	// One round: the rows as they are; an even count: the upper median.
	if got := medianRows(rounds[:3]); !reflect.DeepEqual(got, rounds[:3]) {
		t.Errorf("one round: %v, want %v", got, rounds[:3])
	}
	if got := medianRows(rounds[:6]); !reflect.DeepEqual(got, []row{r("dpkg", "", 3, 30), r("updeb", "a", 9, 90), r("updeb", "b", 2, 20)}) {
		t.Errorf("two rounds: %v", got)
	}
}
