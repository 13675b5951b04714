package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestPackageTakeover: a recipe that ships a package name a recipe of
// another series shipped at the base (hello-ng shipping hello), or adds a
// Provides, Replaces, Conflicts or Breaks on one, is a REVIEW line naming
// both recipes and the package; a recipe of the same series
// (tool-1.2 after tool-1.1) shipping the same name, a recipe shipping its
// own packages, and a relation the base already had, are none.
func TestPackageTakeover(t *testing.T) {
	const key = "key\n"
	named := func(name string) string { return edit(t, helloRecipe, "name: hello\n", "name: "+name+"\n") }
	other := edit(t, named("other"), "packages:\n  - name: hello\n", "packages:\n  - name: other\n", "/usr/bin/hello", "/usr/bin/other", "/usr/share/doc/hello/", "/usr/share/doc/other/")
	withRel := func(text, rel string) string {
		return edit(t, text, "    section: utils\n", "    section: utils\n    "+rel+"\n")
	}
	takeovers := func(rep *Report) []string {
		t.Helper()
		var out []string
		for _, it := range rep.Review {
			if it.Kind == KindPackageTakeover || it.Kind == KindPathConflict || it.Kind == KindSystemPackage {
				out = append(out, it.Subject+" "+strings.Join(it.Old, ",")+" -> "+strings.Join(it.New, ",")+": "+it.Message)
			}
		}
		for _, r := range rep.Recipes {
			for _, x := range r.Results {
				if x.Check == "base" {
					t.Fatalf("base check: %s", x.Detail)
				}
			}
		}
		return out
	}
	// A new minor keeps its predecessor's Conflicts on a package no recipe
	// ships: no line; one it adds is.
	minor := gateBaseOf(t, "recipes/tool-1.2.yaml",
		map[string]string{"recipes/tool-1.1.yaml": withRel(named("tool-1.1"), "conflicts: [openssh-server]"), "keys/upstream.asc": key},
		map[string]string{"recipes/tool-1.2.yaml": withRel(named("tool-1.2"), "conflicts: [openssh-server, nginx]")})
	if got, want := takeovers(minor), []string{"nginx  -> tool-1.2 (recipes/tool-1.2.yaml): package hello: Conflicts: nginx, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt acts on it whatever repository it comes from (apt removes it to install this package), on every node that has it; review that recipe tool-1.2 may act on nginx before merging"}; !slices.Equal(got, want) {
		t.Errorf("new minor:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for _, tt := range []struct {
		name       string
		base, head map[string]string
		want       []string
	}{
		{"a new recipe of another series ships hello",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": named("hello-ng")},
			[]string{"hello hello (recipes/old.yaml) -> hello-ng (recipes/hello.yaml): package hello: shipped by recipe hello (recipes/old.yaml) at HEAD, now by recipe hello-ng (recipes/hello.yaml): apt installs the highest version of a package name whatever recipe built it, so on every node that has hello this recipe's package, from its own sources and trust, takes its place where its version is higher; review that recipe hello-ng may take hello over before merging"}},
		{"a recipe of the same series ships its names",
			map[string]string{"recipes/tool-1.1.yaml": named("tool-1.1"), "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": named("tool-1.2")},
			nil},
		{"a recipe named as a series of an unversioned one is not of its series",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": named("hello-9.9")},
			[]string{"hello hello (recipes/old.yaml) -> hello-9.9 (recipes/hello.yaml): package hello: shipped by recipe hello (recipes/old.yaml) at HEAD, now by recipe hello-9.9 (recipes/hello.yaml): apt installs the highest version of a package name whatever recipe built it, so on every node that has hello this recipe's package, from its own sources and trust, takes its place where its version is higher; review that recipe hello-9.9 may take hello over before merging"}},
		{"another file that takes the name of recipe hello",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": helloRecipe},
			[]string{"hello hello (recipes/old.yaml) -> hello (recipes/hello.yaml): package hello: shipped by recipe hello (recipes/old.yaml) at HEAD, now by recipe hello (recipes/hello.yaml): apt installs the highest version of a package name whatever recipe built it, so on every node that has hello this recipe's package, from its own sources and trust, takes its place where its version is higher; review that recipe hello may take hello over before merging"}},
		{"recipe hello moved to another file",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": helloRecipe, "recipes/old.yaml": ""},
			nil},
		{"a changed recipe that takes over another's package",
			map[string]string{"recipes/hello.yaml": helloRecipe, "recipes/other.yaml": other, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": edit(t, helloRecipe, `revision: "1"`, `revision: "2"`) + strings.SplitN(other, "packages:\n", 2)[1]},
			[]string{"other other (recipes/other.yaml) -> hello (recipes/hello.yaml): package other: shipped by recipe other (recipes/other.yaml) at HEAD, now by recipe hello (recipes/hello.yaml): apt installs the highest version of a package name whatever recipe built it, so on every node that has other this recipe's package, from its own sources and trust, takes its place where its version is higher; review that recipe hello may take other over before merging"}},
		{"a Replaces and a Provides added on another recipe's package",
			map[string]string{"recipes/hello.yaml": withRel(helloRecipe, `conflicts: ["other (<< 1)"]`), "recipes/other.yaml": other, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(withRel(edit(t, helloRecipe, `revision: "1"`, `revision: "2"`), `conflicts: ["other (<< 1)"]`), `replaces: [other]`+"\n    provides: [other, hello-api]")},
			[]string{
				"other other (recipes/other.yaml) -> hello (recipes/hello.yaml): package hello: Provides: other, a package of recipe other (recipes/other.yaml) at HEAD: apt acts on it whatever recipe declares it (it satisfies what depends on that name); review that recipe hello may act on other before merging",
				"hello-api  -> hello (recipes/hello.yaml): package hello: Provides: hello-api, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt acts on it whatever repository it comes from (it satisfies what depends on that name), on every node that has it; review that recipe hello may act on hello-api before merging",
				"other other (recipes/other.yaml) -> hello (recipes/hello.yaml): package hello: Replaces: other, a package of recipe other (recipes/other.yaml) at HEAD: apt acts on it whatever recipe declares it (dpkg lets this package overwrite its files); review that recipe hello may act on other before merging",
			}},
		{"a new recipe's package installs the paths of another recipe's package",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": edit(t, named("hello-ng"), "packages:\n  - name: hello\n", "packages:\n  - name: hello-ng\n")},
			[]string{"hello hello (recipes/old.yaml) -> /usr/bin/hello,/usr/share/doc/hello/LICENSE: package hello-ng: /usr/bin/hello, /usr/share/doc/hello/LICENSE: also in package hello of recipe hello (recipes/old.yaml) at HEAD: dpkg refuses to install one beside the other (\"trying to overwrite '/usr/bin/hello', which is also in package hello\") unless hello-ng replaces it and conflicts with or breaks it; add replaces: [hello] and conflicts: [hello] to package hello-ng, or install elsewhere"}},
		{"a new recipe's package installs a directory where another's installs a file, and a file where it has a directory",
			map[string]string{"recipes/old.yaml": edit(t, helloRecipe, "dest: /usr/share/doc/hello/LICENSE", "dest: /usr/lib/hello/LICENSE"), "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": edit(t, named("hello-ng"), "packages:\n  - name: hello\n", "packages:\n  - name: hello-ng\n", "dest: /usr/bin/hello}", "dest: /usr/bin/hello/ng}", "dest: /usr/share/doc/hello/LICENSE", "dest: /usr/lib/hello")},
			[]string{"hello hello (recipes/old.yaml) -> /usr/bin/hello (a directory of hello-ng),/usr/lib/hello (a directory of hello): package hello-ng: /usr/bin/hello (a directory of hello-ng), /usr/lib/hello (a directory of hello): also in package hello of recipe hello (recipes/old.yaml) at HEAD: dpkg refuses to install one beside the other (\"trying to overwrite '/usr/bin/hello', which is also in package hello\") unless hello-ng replaces it and conflicts with or breaks it; add replaces: [hello] and conflicts: [hello] to package hello-ng, or install elsewhere"}},
		{"a new recipe's package installs another's paths under merged-/usr's other name",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": edit(t, named("hello-ng"), "packages:\n  - name: hello\n", "packages:\n  - name: hello-ng\n", "dest: /usr/bin/hello}", "dest: /bin/hello}", "dest: /usr/share/doc/hello/LICENSE", "dest: /usr/share/doc/hello-ng/LICENSE")},
			[]string{"hello hello (recipes/old.yaml) -> /bin/hello (/usr/bin/hello there, one path on a merged-/usr system, as every Debian since 12 is: dpkg refuses nothing): package hello-ng: /bin/hello (/usr/bin/hello there, one path on a merged-/usr system, as every Debian since 12 is: dpkg refuses nothing): also in package hello of recipe hello (recipes/old.yaml) at HEAD: on a merged-/usr system dpkg lets the package unpacked second overwrite the other's file, and removing it deletes that file, unless hello-ng replaces it and conflicts with or breaks it; add replaces: [hello] and conflicts: [hello] to package hello-ng, or install elsewhere"}},
		{"one that replaces and breaks it",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(edit(t, named("hello-ng"), "packages:\n  - name: hello\n", "packages:\n  - name: hello-ng\n"), "replaces: [hello]\n    breaks: [hello]")},
			[]string{
				"hello hello (recipes/old.yaml) -> hello-ng (recipes/hello.yaml): package hello-ng: Replaces: hello, a package of recipe hello (recipes/old.yaml) at HEAD: apt acts on it whatever recipe declares it (dpkg lets this package overwrite its files); review that recipe hello-ng may act on hello before merging",
				"hello hello (recipes/old.yaml) -> hello-ng (recipes/hello.yaml): package hello-ng: Breaks: hello, a package of recipe hello (recipes/old.yaml) at HEAD: apt acts on it whatever recipe declares it (apt removes or upgrades it to install this package); review that recipe hello-ng may act on hello before merging",
			}},
		// hello is at 1.2.0 at the base: relations on its versions before
		// 1.0 do not let dpkg overwrite its files; ones up to 2.0 do.
		{"one that replaces and conflicts with versions of it the base does not have",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(edit(t, named("hello-ng"), "packages:\n  - name: hello\n", "packages:\n  - name: hello-ng\n", "dest: /usr/share/doc/hello/LICENSE", "dest: /usr/share/doc/hello-ng/LICENSE"), `replaces: ["hello (<< 1.0)"]`+"\n    conflicts: [\"hello (<< 1.0)\"]")},
			[]string{
				"hello hello (recipes/old.yaml) -> /usr/bin/hello: package hello-ng: /usr/bin/hello: also in package hello of recipe hello (recipes/old.yaml) at HEAD: dpkg refuses to install one beside the other (\"trying to overwrite '/usr/bin/hello', which is also in package hello\") unless hello-ng replaces it and conflicts with or breaks it; add replaces: [hello] and conflicts: [hello] to package hello-ng, or install elsewhere",
				"hello hello (recipes/old.yaml) -> hello-ng (recipes/hello.yaml): package hello-ng: Replaces: hello, a package of recipe hello (recipes/old.yaml) at HEAD: apt acts on it whatever recipe declares it (dpkg lets this package overwrite its files); review that recipe hello-ng may act on hello before merging",
				"hello hello (recipes/old.yaml) -> hello-ng (recipes/hello.yaml): package hello-ng: Conflicts: hello, a package of recipe hello (recipes/old.yaml) at HEAD: apt acts on it whatever recipe declares it (apt removes it to install this package); review that recipe hello-ng may act on hello before merging",
			}},
		{"one that replaces and conflicts with the versions of it the base has",
			map[string]string{"recipes/old.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(edit(t, named("hello-ng"), "packages:\n  - name: hello\n", "packages:\n  - name: hello-ng\n", "dest: /usr/share/doc/hello/LICENSE", "dest: /usr/share/doc/hello-ng/LICENSE"), `replaces: ["hello (<< 2.0)"]`+"\n    conflicts: [\"hello (<< 2.0)\"]")},
			[]string{
				"hello hello (recipes/old.yaml) -> hello-ng (recipes/hello.yaml): package hello-ng: Replaces: hello, a package of recipe hello (recipes/old.yaml) at HEAD: apt acts on it whatever recipe declares it (dpkg lets this package overwrite its files); review that recipe hello-ng may act on hello before merging",
				"hello hello (recipes/old.yaml) -> hello-ng (recipes/hello.yaml): package hello-ng: Conflicts: hello, a package of recipe hello (recipes/old.yaml) at HEAD: apt acts on it whatever recipe declares it (apt removes it to install this package); review that recipe hello-ng may act on hello before merging",
			}},
		{"a Conflicts and a Breaks added on packages no recipe ships",
			map[string]string{"recipes/hello.yaml": withRel(helloRecipe, `replaces: [docker.io]`), "recipes/other.yaml": other, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(withRel(edit(t, helloRecipe, `revision: "1"`, `revision: "2"`), `replaces: [docker.io]`), "conflicts: [openssh-server, docker.io]\n    breaks: [\"nginx (<< 999)\"]")},
			[]string{
				"openssh-server  -> hello (recipes/hello.yaml): package hello: Conflicts: openssh-server, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt acts on it whatever repository it comes from (apt removes it to install this package), on every node that has it; review that recipe hello may act on openssh-server before merging",
				"docker.io  -> hello (recipes/hello.yaml): package hello: Conflicts: docker.io, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt acts on it whatever repository it comes from (apt removes it to install this package), on every node that has it; review that recipe hello may act on docker.io before merging",
				"nginx  -> hello (recipes/hello.yaml): package hello: Breaks: nginx, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt acts on it whatever repository it comes from (apt removes or upgrades it to install this package), on every node that has it; review that recipe hello may act on nginx before merging",
			}},
		// apt installs what a package depends on, pre-depends on or
		// recommends, from any repository, on every node that installs
		// it: libc6 is on every node already, other is another recipe's
		// package, suggests installs nothing, and jq pre-depended on now
		// was depended on already.
		{"a Pre-Depends, Depends and Recommends added on packages no recipe ships",
			map[string]string{"recipes/hello.yaml": withRel(helloRecipe, "depends: [jq]\n    recommends: [curl]"), "recipes/other.yaml": other, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(edit(t, helloRecipe, `revision: "1"`, `revision: "2"`), "pre-depends: [nginx, jq]\n    depends: [\"openssh-server (>= 1:9)\", libc6, other, \"default-mta | mail-transport-agent\"]\n    recommends: [curl, wget]\n    suggests: [vim]")},
			[]string{
				"nginx  -> hello (recipes/hello.yaml): package hello: Pre-Depends: nginx, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt installs it, configured before this package is unpacked, on every node that installs this package, from whatever repository offers it (its files, the services it starts, its maintainer scripts run as root); review that recipe hello may pull nginx in before merging",
				"openssh-server  -> hello (recipes/hello.yaml): package hello: Depends: openssh-server, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt installs it on every node that installs this package, from whatever repository offers it (its files, the services it starts, its maintainer scripts run as root); review that recipe hello may pull openssh-server in before merging",
				"default-mta  -> hello (recipes/hello.yaml): package hello: Depends: default-mta, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt installs it on every node that installs this package, from whatever repository offers it (its files, the services it starts, its maintainer scripts run as root); review that recipe hello may pull default-mta in before merging",
				"mail-transport-agent  -> hello (recipes/hello.yaml): package hello: Depends: mail-transport-agent, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt installs it on every node that installs this package, from whatever repository offers it (its files, the services it starts, its maintainer scripts run as root); review that recipe hello may pull mail-transport-agent in before merging",
				"wget  -> hello (recipes/hello.yaml): package hello: Recommends: wget, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt installs it on every node that installs this package (apt installs recommends unless told not to), from whatever repository offers it (its files, the services it starts, its maintainer scripts run as root); review that recipe hello may pull wget in before merging",
			}},
		{"a Depends added on a name a package of the recipe provides",
			map[string]string{"recipes/hello.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(edit(t, helloRecipe, `revision: "1"`, `revision: "2"`), "provides: [hello-api]") +
				"  - name: hello-extra\n    summary: more greetings\n    description: Says more.\n    section: utils\n    depends: [hello-api]\n    files:\n      - {source: hello, path: LICENSE, dest: /usr/share/doc/hello-extra/LICENSE}\n"},
			[]string{
				"hello-api  -> hello (recipes/hello.yaml): package hello: Provides: hello-api, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt acts on it whatever repository it comes from (it satisfies what depends on that name), on every node that has it; review that recipe hello may act on hello-api before merging",
				"hello-extra  -> hello (recipes/hello.yaml): package hello-extra: new, a name no recipe of recipes/ ships at HEAD: on every node that has a package hello-extra from elsewhere (the system's, or another repository's), apt upgrades it to this recipe's package where its version is higher; review that recipe hello may ship hello-extra before merging",
			}},
		// A package of a name no recipe shipped, added to a recipe, takes
		// the place of Debian's package of that name (sudo at 99) on every
		// node that has it; a package named after the version is another
		// name at every bump, as the recipe said.
		{"a package named as Debian's added",
			map[string]string{"recipes/hello.yaml": helloRecipe, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": edit(t, helloRecipe, `revision: "1"`, `revision: "2"`) +
				"  - name: sudo\n    summary: more greetings\n    description: Says more.\n    section: utils\n    files:\n      - {source: hello, path: LICENSE, dest: /usr/share/doc/sudo/LICENSE}\n"},
			[]string{"sudo  -> hello (recipes/hello.yaml): package sudo: new, a name no recipe of recipes/ ships at HEAD: on every node that has a package sudo from elsewhere (the system's, or another repository's), apt upgrades it to this recipe's package where its version is higher; review that recipe hello may ship sudo before merging"}},
		{"a package named after the version, bumped",
			map[string]string{"recipes/hello.yaml": edit(t, helloRecipe, "packages:\n  - name: hello\n", "packages:\n  - name: \"hello-{{.Version}}\"\n", "/usr/bin/hello}", "\"/usr/bin/hello-{{.Version}}\"}", "dest: /usr/share/doc/hello/LICENSE}", "dest: \"/usr/share/doc/hello-{{.Version}}/LICENSE\"}"), "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": bumped(t, edit(t, helloRecipe, "packages:\n  - name: hello\n", "packages:\n  - name: \"hello-{{.Version}}\"\n", "/usr/bin/hello}", "\"/usr/bin/hello-{{.Version}}\"}", "dest: /usr/share/doc/hello/LICENSE}", "dest: \"/usr/share/doc/hello-{{.Version}}/LICENSE\"}"))},
			nil},
		// Its relations are compared with the base package's of the same
		// name template: those it keeps are none at a bump, one added is.
		{"a package named after the version with relations on the system's packages, bumped",
			map[string]string{"recipes/hello.yaml": withRel(edit(t, helloRecipe, "packages:\n  - name: hello\n", "packages:\n  - name: \"hello-{{.Version}}\"\n", "/usr/bin/hello}", "\"/usr/bin/hello-{{.Version}}\"}", "dest: /usr/share/doc/hello/LICENSE}", "dest: \"/usr/share/doc/hello-{{.Version}}/LICENSE\"}"), "depends: [iptables]\n    conflicts: [hello-legacy]"), "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": bumped(t, withRel(edit(t, helloRecipe, "packages:\n  - name: hello\n", "packages:\n  - name: \"hello-{{.Version}}\"\n", "/usr/bin/hello}", "\"/usr/bin/hello-{{.Version}}\"}", "dest: /usr/share/doc/hello/LICENSE}", "dest: \"/usr/share/doc/hello-{{.Version}}/LICENSE\"}"), "depends: [iptables]\n    recommends: [nginx]\n    conflicts: [hello-legacy]"))},
			[]string{"nginx  -> hello (recipes/hello.yaml): package hello-1.2.1: Recommends: nginx, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt installs it on every node that installs this package (apt installs recommends unless told not to), from whatever repository offers it (its files, the services it starts, its maintainer scripts run as root); review that recipe hello may pull nginx in before merging"}},
		{"a new recipe's relation on a package no recipe ships",
			map[string]string{"recipes/other.yaml": other, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(helloRecipe, "provides: [containerd]")},
			[]string{"containerd  -> hello (recipes/hello.yaml): package hello: Provides: containerd, a package no recipe of recipes/ ships at HEAD (the system's, or another repository's): apt acts on it whatever repository it comes from (it satisfies what depends on that name), on every node that has it; review that recipe hello may act on containerd before merging"}},
		{"a new minor of a series provides, conflicts with and replaces the series' one name",
			map[string]string{"recipes/tool-1.1.yaml": withRel(named("tool-1.1"), "provides: [tool-any]\n    conflicts: [tool-any]\n    replaces: [tool-any]"), "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(named("tool-1.2"), "provides: [tool-any]\n    conflicts: [tool-any]\n    replaces: [tool-any]")},
			nil},
		{"a Conflicts added on the one name another recipe's series provides",
			map[string]string{"recipes/hello.yaml": helloRecipe, "recipes/tool-1.1.yaml": withRel(other, "provides: [tool-any]"), "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": withRel(edit(t, helloRecipe, `revision: "1"`, `revision: "2"`), "conflicts: [tool-any]")},
			[]string{"tool-any other (recipes/tool-1.1.yaml) -> hello (recipes/hello.yaml): package hello: Conflicts: tool-any, a name provided by packages of recipe other (recipes/tool-1.1.yaml) at HEAD: apt acts on it whatever recipe declares it (apt removes it to install this package); review that recipe hello may act on tool-any before merging"}},
		{"its own package, bumped",
			map[string]string{"recipes/hello.yaml": helloRecipe, "recipes/other.yaml": other, "keys/upstream.asc": key},
			map[string]string{"recipes/hello.yaml": edit(t, helloRecipe, `revision: "1"`, `revision: "2"`)},
			nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := takeovers(gateBase(t, tt.base, tt.head)); !slices.Equal(got, tt.want) {
				t.Errorf("takeovers:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestShippersThroughLink: a recipe of the base that is a link to a file
// elsewhere in the repository (shared/hello.yaml) ships what that file
// says: a new recipe taking its package over is not let through. So does a
// recipe of a recipes folder that is a link (recipes -> shared/recipes, at
// the base as now): git ls-tree of recipes/ listed nothing there (the base
// has a link, not a folder), so no recipe shipped anything, and a path
// another recipe's package installs, which dpkg refuses to install twice,
// was no path-conflict line (a relation on another recipe's package a
// system-package line: "a package no recipe of recipes/ ships").
func TestShippersThroughLink(t *testing.T) {
	other := edit(t, helloRecipe, "name: hello\n", "name: other\n", "packages:\n  - name: hello\n", "packages:\n  - name: other\n", "/usr/bin/hello", "/usr/bin/other", "/usr/share/doc/hello/", "/usr/share/doc/other/")
	for _, tt := range []struct {
		name, shared, target, link, file, text, line string
	}{
		{"a recipe a link", "shared/hello.yaml", "../shared/hello.yaml", "recipes/hello.yaml",
			"hello-ng", edit(t, helloRecipe, "name: hello\n", "name: hello-ng\n"), ""},
		{"the recipes folder a link", "shared/recipes/hello.yaml", "shared/recipes", "recipes",
			"other", edit(t, other, "/usr/bin/other", "/usr/bin/hello"),
			"warn package other: /usr/bin/hello: also in package hello of recipe hello (recipes/hello.yaml) at HEAD: dpkg refuses to install one beside the other"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, write, b := committed(t, map[string]string{tt.shared: helloRecipe, "shared/recipes/other.yaml": other, "keys/upstream.asc": "key\n"})
			_, git := testRepo(t, b.Git, dir)
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, tt.link)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tt.target, filepath.Join(dir, tt.link)); err != nil {
				t.Fatal(err)
			}
			git("add", "-A")
			git("commit", "-q", "-m", "a link")
			write("recipes/"+tt.file+".yaml", tt.text)
			r, err := recipe.Load(filepath.Join(dir, "recipes", tt.file+".yaml"), recipe.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			owners, self, err := b.shippers(context.Background(), r, recipe.ResolveOptions{})
			if want := []shipper{{"hello", "recipes/hello.yaml", false, "", "", nil}}; err != nil || self != "recipes/"+tt.file+".yaml" || !slices.Equal(owners["hello"], want) {
				t.Errorf("shippers: %+v, %q, %v; want hello shipped by %+v", owners["hello"], self, err, want)
			}
			if tt.line == "" {
				return
			}
			if got := trustLines(t, b, r.Path); !slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, tt.line) }) {
				t.Errorf("trust lines:\n  %s\nwant one starting %q", strings.Join(got, "\n  "), tt.line)
			}
		})
	}
}

// BenchmarkShippers reads the base's recipes of a folder of 2,000 (what a
// verify --base of one recipe of such a repository does once).
func BenchmarkShippers(b *testing.B) {
	tools := testenv.RequireTool(b, "git")
	dir := b.TempDir()
	write, git := testRepo(b, tools[0], dir)
	write("keys/upstream.asc", "key\n")
	for i := range 2000 {
		name := fmt.Sprintf("r%d", i)
		write("recipes/"+name+".yaml", strings.NewReplacer("\nname: hello\n", "\nname: "+name+"\n", "packages:\n  - name: hello\n", "packages:\n  - name: "+name+"\n").Replace("\n" + helloRecipe)[1:])
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	r, err := recipe.Load(filepath.Join(dir, "recipes", "r0.yaml"), recipe.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := (&Base{Git: tools[0], Rev: "HEAD"}).shippers(context.Background(), r, recipe.ResolveOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
