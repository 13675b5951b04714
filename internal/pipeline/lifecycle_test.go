package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// lcClient is one of the co-installable clients of the lc recipe (the
// kubernetes-client135/136 pattern): minor 1.N, registering its command as
// an alternative for /usr/bin/lcctl.
func lcClient(minor string, priority int) string {
	return fmt.Sprintf(`  - name: lcctl1%[1]s
    summary: lc client 1.%[1]s
    description: |
      A test package.
    section: admin
    files:
      - {source: lc, path: bin/lc, dest: /usr/bin/lcctl-1.%[1]s}
    alternatives: [{name: lcctl, link: /usr/bin/lcctl, path: /usr/bin/lcctl-1.%[1]s, priority: %[2]d}]
`, minor, priority)
}

// lcPackages are two clients, 1.0 and 1.1 (which takes the link).
var lcPackages = lcClient("0", 100) + lcClient("1", 110)

// buildLC builds the lc recipe (packages) at upstream version v and returns
// its output folder.
func buildLC(t *testing.T, v, packages string) string {
	t.Helper()
	root, mirror := project(t)
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "bin/lc"), []byte("#!/bin/sh\necho lc "+v+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "lc.tar.gz")
	testenv.Run(t, "tar", "-C", src, "--sort=name", "--owner=0", "--group=0", "-czf", tarball, "bin")
	data, err := os.ReadFile(tarball)
	if err != nil {
		t.Fatal(err)
	}
	tarballRecipe(t, root, mirror, "lc", data, packages)
	rp := filepath.Join(root, "recipes", "lc.yaml")
	text, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rp, []byte(strings.Replace(string(text), "version: 1.0.0\n", "version: "+v+"\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "lc"), options(t, mirror, out)); err != nil {
		t.Fatal(err)
	}
	return out
}

// failingPackage builds a package whose preinst fails, with the given
// relation lines, as dpkg-deb builds it.
func failingPackage(t *testing.T, name, relations string) string {
	t.Helper()
	tree := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: " + name + "\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\n" + relations + "Description: fails to install\n A test package.\n"
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/preinst"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(t.TempDir(), name+".deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "--build", tree, deb)
	return deb
}

// TestAlternativesLifecycleEndToEnd installs two co-installable packages
// with alternatives for one link into a throwaway root with real dpkg (its
// update-alternatives works in $DPKG_ROOT) and takes them through their
// life: both installed, upgrade, downgrade, remove one (the other takes the
// link), a conflicting package whose installation fails (dpkg removed the
// conflictor, then calls its postinst abort-remove: the alternative must come
// back), a package that breaks it whose installation fails (prerm
// deconfigure, then postinst abort-deconfigure), purge.
func TestAlternativesLifecycleEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "update-alternatives")
	v1, v2 := buildLC(t, "1.0.0", lcPackages), buildLC(t, "2.0.0", lcPackages)
	conflicts := failingPackage(t, "lc-conflicts", "Conflicts: lcctl10\nReplaces: lcctl10\n")
	breaks := failingPackage(t, "lc-breaks", "Breaks: lcctl10\n")
	root := testenv.DpkgRoot(t)
	got := testenv.AsRoot(t, `mkdir -p "$ROOT/etc/alternatives" "$ROOT/var/lib/dpkg/alternatives"
dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --log=/dev/null "$@" >/dev/null 2>&1; }
state() {
	printf '%s: ' "$1"
	if [ -L "$ROOT/usr/bin/lcctl" ]; then
		to=$(readlink "$ROOT$(readlink "$ROOT/usr/bin/lcctl")")
		[ -f "$ROOT$to" ] && echo "$to" || echo "$to, missing"
	else
		echo "no link"
	fi
	for p in lcctl10 lcctl11; do dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f '${Package} ${Version} ${db:Status-Abbrev}|' $p 2>/dev/null || true; done
	echo
}
dpkg -i "$V1/lcctl10_1.0.0-1_amd64.deb" "$V1/lcctl11_1.0.0-1_amd64.deb"; state "both installed"
dpkg -i "$V2/lcctl11_2.0.0-1_amd64.deb"; state "lcctl11 upgraded"
dpkg -i "$V1/lcctl11_1.0.0-1_amd64.deb"; state "lcctl11 downgraded"
dpkg -r lcctl11; state "lcctl11 removed"
dpkg -i "$V2/lcctl11_2.0.0-1_amd64.deb"; dpkg -r lcctl11; state "lcctl11 back and removed"
dpkg -i "$CONFLICTS" && echo "lc-conflicts installed"; state "a conflicting package failed"
dpkg --auto-deconfigure -i "$BREAKS" && echo "lc-breaks installed"; state "a breaking package failed"
dpkg -P lcctl10; state "purged"
ls "$ROOT/var/lib/dpkg/alternatives" "$ROOT/etc/alternatives"
`, "ROOT="+root, "V1="+v1, "V2="+v2, "CONFLICTS="+conflicts, "BREAKS="+breaks, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	want := `both installed: /usr/bin/lcctl-1.1
lcctl10 1.0.0-1 ii |lcctl11 1.0.0-1 ii |
lcctl11 upgraded: /usr/bin/lcctl-1.1
lcctl10 1.0.0-1 ii |lcctl11 2.0.0-1 ii |
lcctl11 downgraded: /usr/bin/lcctl-1.1
lcctl10 1.0.0-1 ii |lcctl11 1.0.0-1 ii |
lcctl11 removed: /usr/bin/lcctl-1.0
lcctl10 1.0.0-1 ii |
lcctl11 back and removed: /usr/bin/lcctl-1.0
lcctl10 1.0.0-1 ii |
a conflicting package failed: /usr/bin/lcctl-1.0
lcctl10 1.0.0-1 ii |
a breaking package failed: /usr/bin/lcctl-1.0
lcctl10 1.0.0-1 ii |
purged: no link

` + "/ROOT/etc/alternatives:\n\n/ROOT/var/lib/dpkg/alternatives:\n"
	if got := strings.ReplaceAll(string(got), root, "/ROOT"); got != want {
		t.Errorf("alternatives through the packages' life:\n%s\nwant:\n%s", got, want)
	}
}
