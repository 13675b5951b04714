package main

import (
	"bytes"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
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

// The tree staged for dpkg-deb carries the md5sums updeb writes, byte for
// byte, so that the two packages compared have the same members.
func TestStageTreeMD5sums(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	payload, work := t.TempDir(), t.TempDir()
	files := map[string]string{"a/b": "one\n", "a-c": "two\n", "x/y/z": strings.Repeat("three", 1000), "empty": ""}
	testenv.WriteFiles(t, payload, files)
	rels := slices.Collect(maps.Keys(files))
	tree := filepath.Join(work, "tree")
	size, err := stageTree(tree, payload, rels)
	if err != nil {
		t.Fatal(err)
	}
	if size != 5008 {
		t.Errorf("staged size %d, want 5008", size)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	peer, ours := filepath.Join(work, "peer.deb"), filepath.Join(work, "ours.deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zzstd", "--build", tree, peer)
	if err := childDebWrite([]string{tree, ours, "zstd"}); err != nil {
		t.Fatal(err)
	}
	want := testenv.Run(t, "dpkg-deb", "--info", ours, "md5sums")
	if got := testenv.Run(t, "dpkg-deb", "--info", peer, "md5sums"); !bytes.Equal(got, want) {
		t.Errorf("dpkg-deb's md5sums:\n%s\nupdeb's:\n%s", got, want)
	}
	if n := bytes.Count(want, []byte("  usr/lib/go-bench/")); n != len(files) {
		t.Errorf("updeb's md5sums has %d lines, want %d:\n%s", n, len(files), want)
	}
}
