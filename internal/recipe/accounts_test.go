package recipe

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// The account tables are base-passwd's master files, name for name and id
// for id (base-passwd is essential: every Debian system has them).
func TestBaseAccountsMatchBasePasswd(t *testing.T) {
	for _, tc := range []struct {
		file  string
		table map[string]int
	}{
		{"/usr/share/base-passwd/passwd.master", baseUsers},
		{"/usr/share/base-passwd/group.master", baseGroups},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			if testenv.InCI() {
				t.Fatalf("%v (base-passwd is essential on Debian)", err)
			}
			t.Skipf("%v: not a Debian system", err)
		}
		got := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Split(line, ":")
			id, err := strconv.Atoi(f[2])
			if len(f) < 3 || err != nil {
				t.Fatalf("%s: %q", tc.file, line)
			}
			got[f[0]] = id
		}
		if len(got) != len(tc.table) {
			t.Errorf("%s has %d accounts, the table %d", tc.file, len(got), len(tc.table))
		}
		for name, id := range got {
			if have, ok := tc.table[name]; !ok || have != id {
				t.Errorf("%s: %s is %d, the table says %d (present: %v)", tc.file, name, id, have, ok)
			}
		}
	}
}

// TestBasePackagesHoldTheEssentialSet: every package this Debian system
// marks Essential: yes, Priority: required or Protected: yes is one of
// basePackages, and each of those the table says is essential is so here.
func TestBasePackagesHoldTheEssentialSet(t *testing.T) {
	testenv.RequireTool(t, "dpkg-query")
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Package} ${Essential} ${Priority} ${Protected}\n").Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line + " - - -")
		name, essential, priority, protected := f[0], f[1] == "yes", f[2] == "required", f[3] == "yes"
		if why, ok := basePackages[name]; ok {
			seen++
			if why == "Essential: yes" && !essential {
				t.Errorf("%s is not essential here (%q), the table says %q", name, line, why)
			}
		} else if essential || priority || protected {
			t.Errorf("%s is missing from basePackages (%q)", name, line)
		}
	}
	if seen < 30 {
		t.Errorf("only %d of basePackages are installed here: not a Debian system?", seen)
	}
}
