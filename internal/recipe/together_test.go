package recipe

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckTogether: two recipe files of one name, and two recipes that make
// one package file, passed lint one by one; built together, the later
// replaced the earlier's .deb in the output folder without a word.
func TestCheckTogether(t *testing.T) {
	dir, file := writeProject(t, baseRecipe)
	load := func(name, text string) *Recipe { return loadBeside(t, dir, name, text) }
	x, err := Load(file, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameName := load("y", strings.Replace(baseRecipe, "  - name: xx\n", "  - name: yy\n    conflicts: [xx]\n    replaces: [xx]\n", 1))
	samePackage := load("z", strings.Replace(baseRecipe, "name: xx\n", "name: zz\n", 1))
	otherVersion := load("w", strings.Replace(strings.Replace(baseRecipe, "name: xx\n", "name: ww\n", 1), "version: 1.0.0", "version: 1.0.1", 1))
	var got []string
	findings, warnings := CheckTogether([]*Recipe{x, sameName, samePackage, otherVersion})
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	for _, f := range findings {
		got = append(got, strings.TrimPrefix(f.String(), dir+"/"))
	}
	want := []string{
		`recipes/y.yaml:1:7: name: "xx" is also the name of ` + file + `: each recipe needs its own (the changelog's source, what release sets and updeb compat call it)`,
		"recipes/z.yaml:13:11: package name: xx makes xx_1.0.0-1_amd64.deb, which " + file + " makes too (package xx): one would replace the other in the output folder and the repository; give one of them another package name or version",
		"recipes/z.yaml:13:11: package name: xx makes xx_1.0.0-1_arm64.deb, which " + file + " makes too (package xx): one would replace the other in the output folder and the repository; give one of them another package name or version",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckTogetherPaths: packages of two recipes that install one path
// (merged-/usr's two names of it too) passed lint one by one, and dpkg
// refused to install the second ("trying to overwrite '/usr/bin/x', which
// is also in package aa"); one that conflicts with or replaces the other,
// by name or by what it provides, may.
func TestCheckTogetherPaths(t *testing.T) {
	dir, _ := writeProject(t, baseRecipe)
	load := func(name, pkg, extra string) *Recipe {
		return loadBeside(t, dir, name, strings.Replace(strings.Replace(baseRecipe, "name: xx\n", "name: "+name+"\n", 1), "  - name: xx\n", "  - name: "+pkg+"\n"+extra, 1))
	}
	a := load("ra", "aa", "    provides: [x-tool]\n")
	b := load("rb", "bb", "")
	c := load("rc", "cc", "    conflicts: [x-tool, bb]\n")
	d := load("rd", "dd", "    replaces: [aa, bb, cc]\n    breaks: [aa, bb, cc]\n")
	// merged-/usr: /bin/x is /usr/bin/x.
	e := load("re", "ee", "    conflicts: [aa, bb, cc, dd]\n")
	e.Packages[0].Files[0].Dest = "/bin/x"
	f := load("rf", "ff", "")
	f.Packages[0].Files[0].Dest = "/bin/x"
	var got []string
	findings, warnings := CheckTogether([]*Recipe{a, b, c, d, e, f})
	if len(findings) != 0 {
		t.Errorf("findings: %v", findings)
	}
	for _, f := range warnings {
		got = append(got, strings.TrimPrefix(f.String(), dir+"/"))
	}
	overwrite := func(pkg, path, other, otherPath, as string) string {
		return "package " + pkg + " installs " + path + ", which package " + other + " of " + dir + "/recipes/" + otherPath + " installs too" + as + ", and neither conflicts with nor replaces the other: dpkg refuses to install the second (trying to overwrite '" + path + "', which is also in package " + other + "); give one conflicts and replaces the other (Debian policy 7.6) or, for the packages of a versioned series at once (bump --new-minor moves the minor in such names), a name that each of them provides, conflicts with and replaces; or install the path once"
	}
	merged := " as /usr/bin/x (on a merged-/usr system, as every Debian since 12 is, /bin is a symlink to usr/bin)"
	want := []string{
		"recipes/rb.yaml:13:11: " + overwrite("bb", "/usr/bin/x", "aa", "ra.yaml", ""),
		"recipes/rf.yaml:13:11: " + overwrite("ff", "/bin/x", "aa", "ra.yaml", merged),
		"recipes/rf.yaml:13:11: " + overwrite("ff", "/bin/x", "bb", "rb.yaml", merged),
		"recipes/rf.yaml:13:11: " + overwrite("ff", "/bin/x", "cc", "rc.yaml", merged),
		"recipes/rf.yaml:13:11: " + overwrite("ff", "/bin/x", "dd", "rd.yaml", merged),
		"recipes/rf.yaml:13:11: " + overwrite("ff", "/bin/x", "ee", "re.yaml", ""),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// loadBeside writes text as recipes/NAME.yaml of the project in dir, with
// the recipe folder of recipes/x.yaml, and loads it.
func loadBeside(t *testing.T, dir, name, text string) *Recipe {
	t.Helper()
	p := filepath.Join(dir, "recipes", name+".yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("x", filepath.Join(dir, "recipes", name)); err != nil {
		t.Fatal(err)
	}
	r, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCheckTogetherSeries: the packages of two recipes of a versioned series
// (bump --new-minor's xx-1.31 and xx-1.32) that install one path passed
// lint, and apt then failed half-way from one to the other ("trying to
// overwrite '/usr/bin/x', which is also in package xx-1.31"): a finding in
// the later one, unless one conflicts with or replaces the other (by name,
// or a name the other provides, at its version). A package of the
// same name (the series' shared packages) is its upgrade, and paths that
// differ are no clash.
func TestCheckTogetherSeries(t *testing.T) {
	dir, _ := writeProject(t, baseRecipe)
	load := func(name, pkg, fields string, edits ...string) *Recipe {
		t.Helper()
		text := strings.Replace(baseRecipe, "name: xx\n", "name: "+name+"\n", 1)
		text = strings.Replace(text, "  - name: xx\n", "  - name: "+pkg+"\n"+fields, 1)
		text = strings.NewReplacer(edits...).Replace(text)
		p := filepath.Join(dir, "recipes", name+".yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("x", filepath.Join(dir, "recipes", name)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		r, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	const clash = "recipes/xx-1.32.yaml:13:11: package xx-1.32 installs /usr/bin/x, which package xx-1.31 of recipes/xx-1.31.yaml installs too, and neither conflicts with nor replaces the other: dpkg refuses to install the second (trying to overwrite '/usr/bin/x', which is also in package xx-1.31); give one conflicts and replaces the other (Debian policy 7.6) or, for the packages of a versioned series at once (bump --new-minor moves the minor in such names), a name that each of them provides, conflicts with and replaces; or install the path once"
	for _, tt := range []struct {
		name, old, fields string
		want              []string
	}{
		{"no relations", "", "", []string{clash}},
		{"breaks only", "", "    breaks: [xx-1.31]\n", []string{clash}},
		{"conflicts and replaces", "", "    conflicts: [xx-1.31]\n    replaces: [xx-1.31]\n", nil},
		{"replaces and breaks", "", "    replaces: [\"xx-1.31 (<< 1.32)\"]\n    breaks: [\"xx-1.31 (<< 1.32)\"]\n", nil},
		{"a conflict that misses the version", "", "    conflicts: [\"xx-1.31 (>= 2)\"]\n", []string{clash}},
		{"the earlier conflicts", "    conflicts: [xx-1.32]\n", "", nil},
		{"a name both provide and conflict with", "    provides: [xx-binary]\n    conflicts: [xx-binary]\n", "    provides: [xx-binary]\n    conflicts: [xx-binary]\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs := []*Recipe{load("xx-1.31", "xx-1.31", tt.old), load("xx-1.32", "xx-1.32", tt.fields)}
			var got []string
			_, warnings := CheckTogether(rs)
			for _, f := range warnings {
				got = append(got, strings.ReplaceAll(f.String(), dir+"/", ""))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	// One package name in both (the series' kubernetes-node), and paths of
	// its own in each (kubectl-1.31, kubectl-1.32): no finding (the same
	// package at the same version is another finding's; here at two).
	writeFile(t, dir, "recipes/x/x-1.32.service", "[Service]\nExecStart=/usr/bin/x-1.32\n\n[Install]\nWantedBy=multi-user.target\n")
	same := []*Recipe{load("xx-1.31", "xx", ""), load("xx-1.32", "xx", "", "version: 1.0.0", "version: 1.0.1")}
	other := []*Recipe{load("xx-1.31", "xx-1.31", ""), load("xx-1.32", "xx-1.32", "", "/usr/bin/x}", "/usr/bin/x-1.32}", "{file: x.service, dest: /lib/systemd/system/x.service}", "{file: x-1.32.service, dest: /lib/systemd/system/x-1.32.service}", "[x.service]", "[x-1.32.service]")}
	_, w1 := CheckTogether(same)
	_, w2 := CheckTogether(other)
	if got := append(w1, w2...); len(got) != 0 {
		t.Errorf("warnings for packages that do not clash: %v", got)
	}
}

// TestCheckTogetherInside: a package of one recipe that installs a path
// inside what a package of another installs as a symlink (or a file), in
// either order and under merged-/usr's other name, passed lint one by one;
// dpkg refused the second ("trying to overwrite '/opt/x', which is also in
// package aa") or, installed the other way round, kept the folder and left
// the symlink out. Packages that conflict are never installed together.
func TestCheckTogetherInside(t *testing.T) {
	dir, _ := writeProject(t, baseRecipe)
	// Each installs its symlink alone, but for ra's unit (no collision).
	load := func(name, pkg, link string) *Recipe {
		r := loadBeside(t, dir, name, strings.Replace(strings.Replace(baseRecipe, "name: xx\n", "name: "+name+"\n", 1), "  - name: xx\n", "  - name: "+pkg+"\n"+link, 1))
		r.Packages[0].Files, r.Packages[0].SystemdUnits = nil, nil
		return r
	}
	a := loadBeside(t, dir, "ra", strings.Replace(strings.Replace(baseRecipe, "name: xx\n", "name: ra\n", 1), "  - name: xx\n", "  - name: aa\n    symlinks: [{dest: /opt/x, target: /usr/lib/x}]\n", 1))
	a.Packages[0].Files = a.Packages[0].Files[1:]
	b := load("rb", "bb", "    symlinks: [{dest: /opt/x/y, target: /usr/bin/x}]\n")
	c := load("rc", "cc", "    conflicts: [aa]\n    symlinks: [{dest: /opt/x/z, target: /usr/bin/x}]\n")
	d := load("rd", "dd", "    symlinks: [{dest: /usr/lib/q/y, target: /usr/bin/x}]\n")
	e := load("re", "ee", "    symlinks: [{dest: /lib/q, target: /usr/lib/x}]\n")
	var got []string
	findings, warnings := CheckTogether([]*Recipe{a, b, c, d, e})
	if len(findings) != 0 {
		t.Errorf("findings: %v", findings)
	}
	for _, f := range warnings {
		got = append(got, strings.TrimPrefix(f.String(), dir+"/"))
	}
	want := []string{
		"recipes/rb.yaml:13:11: package bb installs /opt/x/y inside /opt/x, which package aa of " + dir + "/recipes/ra.yaml installs as a file or symlink: " + overFolder,
		"recipes/re.yaml:13:11: package ee installs /lib/q as a file or symlink, but package dd of " + dir + "/recipes/rd.yaml installs /usr/lib/q/y inside it: " + overFolder,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckTogetherCopiesBounded: each package was checked against every
// earlier installer of each of its paths, and lint of 10,000 copies of one
// recipe (a folder of copies, a generator's output) took 67 s. Copies are
// now checked once, against the first of them: n copies of a recipe and n
// of one whose package conflicts with and replaces the first's (each such
// check parses the relations) allocate in proportion to n. 1,000 and 1,000
// here allocated 667 MB; now 168 MB, mostly resolving the recipes.
func TestCheckTogetherCopiesBounded(t *testing.T) {
	const n = 1000
	dir, file := writeProject(t, baseRecipe)
	x, err := Load(file, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	y := loadBeside(t, dir, "y", strings.Replace(strings.Replace(baseRecipe, "name: xx\n", "name: yy\n", 1), "  - name: xx\n", "  - name: yy\n    conflicts: [xx]\n    replaces: [xx]\n", 1))
	var rs []*Recipe
	for _, r := range []*Recipe{x, y} {
		for range n {
			c := *r
			rs = append(rs, &c)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	findings, warnings := CheckTogether(rs)
	runtime.ReadMemStats(&after)
	if len(warnings) != 0 || len(findings) != 2*(n-1)*3 {
		t.Errorf("%d findings, want %d; warnings: %v", len(findings), 2*(n-1)*3, warnings)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 300<<20*allocFactor {
		t.Errorf("CheckTogether of %d recipes allocated %d MB", len(rs), alloc>>20)
	}
}
