package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// accPackages are two packages of one recipe: acc, built from an archive
// made by GNU tar (a hardlink, systemd's \x2d, a space and UTF-8 in names)
// with every kind of mode, owner and special bit, maintainer-script
// fragments and an interest in a trigger; acc-plugin, whose installation
// activates that trigger.
const accPackages = `  - name: acc
    summary: modes, owners, scripts and triggers
    description: |
      A test package.
    section: admin
    files:
      - {source: acc, path: bin/acc, dest: /usr/sbin/acc, mode: "2750", group: shadow, special-bits: "reads /etc/shadow for its users"}
      - {source: acc, path: bin/acc-alias, dest: /usr/sbin/acc-alias, mode: "0755"}
      - {source: acc, path: 'units/acc\x2dworker.service', dest: '/lib/systemd/system/acc\x2dworker.service'}
      - {source: acc, path: "docs/read me ünï.txt", dest: "/usr/share/doc/acc/read me ünï.txt"}
      - {file: acc.conf, dest: /etc/acc/acc.conf, mode: "0640", group: adm}
      - {file: acc.conf, dest: /etc/acc/token, mode: "0600"}
    directories:
      - {path: /var/lib/acc, mode: "0700"}
      - {path: /var/lib/acc/shared, mode: "2775", group: staff, special-bits: "files made in it belong to staff"}
      - {path: /var/lib/acc/drop, mode: "1777", special-bits: "anyone drops files, only their owner removes them"}
    scripts: {postinst: acc.postinst, prerm: acc.prerm}
    triggers: [interest-noawait acc-reload]
  - name: acc-plugin
    summary: activates acc's trigger
    description: |
      A test package.
    section: admin
    files:
      - {file: acc.conf, dest: /usr/share/acc-plugin/plugin.conf}
    triggers: [activate-noawait acc-reload]
`

// TestModesScriptsTriggersEndToEnd builds acc and acc-plugin from a recipe,
// installs them with dpkg into a throwaway root (as root, or under fakeroot)
// and checks what dpkg made: every mode, owner and special bit; the
// hardlinked archive member; the names; the fragments run with their
// arguments in the documented order; the trigger fired when acc-plugin was
// installed; lintian accepts both packages.
func TestModesScriptsTriggersEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "lintian")
	root, mirror := project(t)
	src := t.TempDir()
	for name, content := range map[string]string{"bin/acc": "#!/bin/sh\necho acc\n", `units/acc\x2dworker.service`: "[Service]\nExecStart=/usr/sbin/acc\n", "docs/read me ünï.txt": "docs\n"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(src, "bin/acc"), filepath.Join(src, "bin/acc-alias")); err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "acc.tar.gz")
	testenv.Run(t, "tar", "-C", src, "--sort=name", "--owner=0", "--group=0", "-czf", tarball, "bin", "docs", "units")
	if !strings.Contains(string(testenv.Run(t, "tar", "-tvzf", tarball)), "bin/acc-alias link to bin/acc") {
		t.Fatal("GNU tar stored no hardlink")
	}
	data, err := os.ReadFile(tarball)
	if err != nil {
		t.Fatal(err)
	}
	tarballRecipe(t, root, mirror, "acc", data, accPackages)
	for name, content := range map[string]string{
		"acc.conf": "key = value\n",
		// The fragments write into $DPKG_ROOT: dpkg runs them chrootless here.
		"acc.postinst": "echo \"postinst $*\" >> \"$DPKG_ROOT/var/lib/acc/log\"\n",
		"acc.prerm":    "echo \"prerm $*\" >> \"$DPKG_ROOT/var/lib/acc/log\"\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, "recipes/acc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "recipes/acc", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "acc"), options(t, mirror, out)); err != nil {
		t.Fatal(err)
	}
	acc, plugin := filepath.Join(out, "acc_1.0.0-1_amd64.deb"), filepath.Join(out, "acc-plugin_1.0.0-1_amd64.deb")
	testenv.Lintian(t, map[string]string{
		"package-contains-no-arch-dependent-files":        "the stand-in binary is a shell script",
		"extended-description-is-probably-too-short":      "a test package",
		"systemd-service-file-missing-documentation-key":  "a test unit",
		"systemd-service-file-missing-install-key":        "a test unit",
		"systemd-service-file-missing-hardening-features": "a test unit",
	}, acc, plugin)
	if info := string(testenv.Run(t, "dpkg-deb", "-I", acc, "triggers")); info != "interest-noawait acc-reload\n" {
		t.Errorf("acc's triggers: %q", info)
	}

	dpkgRoot := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers"} {
		if err := os.MkdirAll(filepath.Join(dpkgRoot, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dpkgRoot, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --log=/dev/null "$@" >/dev/null; }
dpkg -i "$ACC"
dpkg -i "$PLUGIN"
cd "$ROOT"
find usr/sbin lib/systemd/system etc/acc var/lib/acc "usr/share/doc/acc/read me ünï.txt" -printf '%p %m %u:%g %n\n' | LC_ALL=C sort
cmp usr/sbin/acc usr/sbin/acc-alias && echo "acc-alias has acc's bytes"
echo ---
cat var/lib/acc/log
dpkg -r acc
echo ---
cat var/lib/acc/log`, "ROOT="+dpkgRoot, "ACC="+acc, "PLUGIN="+plugin, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	want := `etc/acc 755 root:root 2
etc/acc/acc.conf 640 root:adm 1
etc/acc/token 600 root:root 1
lib/systemd/system 755 root:root 2
lib/systemd/system/acc\x2dworker.service 644 root:root 1
usr/sbin 755 root:root 2
usr/sbin/acc 2750 root:shadow 1
usr/sbin/acc-alias 755 root:root 1
usr/share/doc/acc/read me ünï.txt 644 root:root 1
var/lib/acc 700 root:root 4
var/lib/acc/drop 1777 root:root 2
var/lib/acc/log 644 root:root 1
var/lib/acc/shared 2775 root:staff 2
acc-alias has acc's bytes
---
postinst configure 
postinst triggered acc-reload
---
postinst configure 
postinst triggered acc-reload
prerm remove
`
	if string(got) != want {
		t.Errorf("installed:\n%s\nwant:\n%s", got, want)
	}
}
