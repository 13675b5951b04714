package pipeline

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// helloC calls libc as a cgo binary does: printf, strlen, strcpy (which
// gcc -O2 without _FORTIFY_SOURCE leaves unfortified) and, through the
// start files, __libc_start_main.
const helloC = `#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) { char b[256]; strcpy(b, argc > 1 ? argv[1] : "hi"); printf("%s %zu\n", b, strlen(b)); return 0; }
`

// cc compiles helloC with compiler (gcc, musl-gcc) and args into a binary
// and returns its bytes.
func cc(t *testing.T, compiler string, args ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "hello.c"), filepath.Join(dir, "hello")
	if err := os.WriteFile(src, []byte(helloC), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, compiler, append(append([]string{"-O2", "-o", bin}, args...), src)...)
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// shlibdeps is dpkg-shlibdeps' Depends for a binary (the shlibs:Depends
// it prints), the referee of what updeb writes.
func shlibdeps(t *testing.T, binary []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "debian"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "debian/control"), []byte("Source: x\n\nPackage: x\nArchitecture: any\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello"), binary, 0o755); err != nil {
		t.Fatal(err)
	}
	out := string(testenv.Run(t, "sh", "-c", `cd "$1" && dpkg-shlibdeps -O hello 2>/dev/null`, "sh", dir))
	v, ok := strings.CutPrefix(strings.TrimSpace(out), "shlibs:Depends=")
	if !ok {
		t.Fatalf("dpkg-shlibdeps: %q", out)
	}
	return v
}

// buildBinary builds a recipe whose package name (fields: its fields, files
// and the binary at /usr/bin/name) ships binary, logging to log (nil:
// nowhere), and returns the .deb.
func buildBinary(t *testing.T, name string, binary []byte, fields string, log *slog.Logger) string {
	t.Helper()
	root, mirror := project(t)
	binRecipe(t, root, mirror, name, binary, `  - name: `+name+`
    summary: shared library test
    description: |
      A test package of one upstream binary, built by gcc as upstream
      builds it: the binary is shipped as it is, and its dependencies on
      shared libraries are what the binary says it needs.
    section: admin
`+fields+`    files:
      - {source: `+name+`, path: bin/`+name+`, dest: /usr/bin/`+name+`}
`, nil)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	if log != nil {
		opts.Source.Logger = log
	}
	if _, err := Run(context.Background(), jobs(t, root, "amd64", name), opts); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(out, name+"_1.0.0-1_amd64.deb")
}

// withoutDF1Now is bin (64-bit, little-endian) with DF_1_NOW cleared
// from its DT_FLAGS_1, leaving DF_BIND_NOW in DT_FLAGS to say the same, as
// linkers that write only the older flag do.
func withoutDF1Now(t *testing.T, bin []byte) []byte {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	dyn := f.Section(".dynamic")
	out, cleared, both := bytes.Clone(bin), false, false
	for off := dyn.Offset; off+16 <= dyn.Offset+dyn.Size; off += 16 {
		switch binary.LittleEndian.Uint64(out[off:]) {
		case uint64(elf.DT_FLAGS_1):
			v := binary.LittleEndian.Uint64(out[off+8:])
			binary.LittleEndian.PutUint64(out[off+8:], v&^uint64(elf.DF_1_NOW))
			cleared = v&uint64(elf.DF_1_NOW) != 0
		case uint64(elf.DT_FLAGS):
			both = binary.LittleEndian.Uint64(out[off+8:])&uint64(elf.DF_BIND_NOW) != 0
		}
	}
	if !cleared || !both {
		t.Fatalf("not a binary with DF_1_NOW and DF_BIND_NOW (%v, %v)", cleared, both)
	}
	return out
}

// TestSharedLibraryDepends: the Depends a dynamically linked upstream
// binary gets is dpkg-shlibdeps' (libc6 (>= 2.34) for a binary that needs
// GLIBC_2.34, which apt would otherwise install on a system with an older
// libc6, where it fails to start), whether or not the recipe says dynamic;
// a recipe's own libc6 relation is kept unless it is older; a static binary
// marked dynamic gets none; lintian raises nothing about the dependencies.
func TestSharedLibraryDepends(t *testing.T) {
	testenv.RequireTool(t, "gcc", "dpkg-shlibdeps", "dpkg-deb", "lintian")
	dynamic := cc(t, "gcc")
	want := shlibdeps(t, dynamic)
	if !strings.HasPrefix(want, "libc6 (>= ") {
		t.Fatalf("dpkg-shlibdeps says %q of a binary that calls libc", want)
	}
	static := cc(t, "gcc", "-static")
	hardened := cc(t, "gcc", "-D_FORTIFY_SOURCE=2", "-fPIE", "-pie", "-Wl,-z,relro,-z,now")
	cgo, err := os.ReadFile(testenv.CgoBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	var debs []string
	for i, c := range []struct {
		name, fields string
		binary       []byte
		want         string
	}{
		{"dynamic", "    dynamic: true\n    depends: [adduser]\n", dynamic, "adduser, " + want},
		{"not marked dynamic", "", dynamic, want},
		{"own older libc6", "    dynamic: true\n    depends: [\"libc6 (>= 2.17)\", adduser]\n", dynamic, want + ", adduser"},
		{"own newer libc6", "    depends: [\"libc6 (>= 2.99)\"]\n", dynamic, "libc6 (>= 2.99)"},
		{"static marked dynamic", "    dynamic: true\n", static, ""},
		{"Go's linker", "    dynamic: true\n", cgo, shlibdeps(t, cgo)},
		// Built with Debian's hardening flags: no hardening tag to override.
		{"hardened", "    dynamic: true\n", hardened, shlibdeps(t, hardened)},
		// BIND_NOW in DT_FLAGS alone, which lintian reads as NOW too.
		{"DF_BIND_NOW only", "    dynamic: true\n", withoutDF1Now(t, hardened), shlibdeps(t, hardened)},
	} {
		// Each its own package: lintian reads one package of a name.
		deb := buildBinary(t, fmt.Sprintf("shl%d", i), c.binary, c.fields, nil)
		if got := strings.TrimSpace(string(testenv.Run(t, "dpkg-deb", "-f", deb, "Depends"))); got != c.want {
			t.Errorf("%s: Depends: %q, want %q", c.name, got, c.want)
		}
		debs = append(debs, deb)
	}
	testenv.Lintian(t, nil, debs...)
}

// libsC calls a function of each library outside glibc whose Debian
// package updeb knows, linked by soname (their runtime packages are
// installed with apt, systemd and openssl; no -dev package is needed).
const libsC = `#include <stdio.h>
const char *zlibVersion(void);
unsigned long OpenSSL_version_num(void);
unsigned long SSL_get_options(const void *);
const void *seccomp_version(void);
int sd_booted(void);
void *_Znwm(unsigned long);
unsigned long _Unwind_GetCFA(void *);
int main(int argc, char **argv) {
	printf("%s %lu %d\n", zlibVersion(), OpenSSL_version_num(), sd_booted());
	if (argc > 100) { seccomp_version(); _Znwm(1); _Unwind_GetCFA(argv); SSL_get_options(argv); }
	return 0;
}
`

// TestSharedLibraryPackages: a binary that needs libstdc++.so.6,
// libgcc_s.so.1, libz.so.1, libssl.so.3, libcrypto.so.3, libseccomp.so.2
// and libsystemd.so.0 depends on the packages dpkg-shlibdeps names for
// them (lintian's missing-dependency-on-libstdc++ is an error), without
// a warning about them.
func TestSharedLibraryPackages(t *testing.T) {
	testenv.RequireTool(t, "gcc", "dpkg-shlibdeps", "dpkg-deb", "lintian")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "libs.c"), filepath.Join(dir, "libs")
	if err := os.WriteFile(src, []byte(libsC), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "gcc", "-O2", "-o", bin, src, "-l:libz.so.1", "-l:libssl.so.3", "-l:libcrypto.so.3",
		"-l:libseccomp.so.2", "-l:libsystemd.so.0", "-l:libstdc++.so.6", "-l:libgcc_s.so.1")
	binary, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	// dpkg-shlibdeps: "libc6 (>= 2.34), libgcc-s1 (>= 3.3), ...": updeb
	// names the same packages, in the same order (zlib1g, which the
	// recipe names, first: its own relation is kept).
	want := []string{"zlib1g (>= 1:1.2.13)"}
	for _, r := range strings.Split(shlibdeps(t, binary), ", ") {
		if n, _, _ := strings.Cut(r, " "); n == "libc6" {
			want = append(want, r)
		} else if n != "zlib1g" {
			want = append(want, n)
		}
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	deb := buildBinary(t, "shlpk", binary, "    depends: [\"zlib1g (>= 1:1.2.13)\"]\n", log)
	if got := strings.TrimSpace(string(testenv.Run(t, "dpkg-deb", "-f", deb, "Depends"))); got != strings.Join(want, ", ") {
		t.Errorf("Depends: %q, want %q", got, strings.Join(want, ", "))
	}
	if buf.Len() > 0 {
		t.Errorf("warnings:\n%s", buf.String())
	}
	testenv.Lintian(t, nil, deb)
}

// gcc13 is a binary that needs GLIBCXX_3.4.32 of libstdc++.so.6, as one
// built with GCC 13 may: linked with a stand-in of that soname whose
// version script defines it.
func gcc13(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"v.map": "GLIBCXX_3.4.32 { global: new_in_13; local: *; };\n",
		"lib.c": "int new_in_13(void) { return 1; }\n",
		"use.c": "int new_in_13(void);\nint main(void) { return new_in_13(); }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Run(t, "sh", "-c", `cd "$1" && gcc -shared -fPIC -o libstdc++.so.6 -Wl,-soname,libstdc++.so.6 -Wl,--version-script,v.map lib.c && gcc -o use use.c -L. -l:libstdc++.so.6`, "sh", dir)
	data, err := os.ReadFile(filepath.Join(dir, "use"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSharedLibraryWarnings: what updeb cannot tell from a binary is a
// warning of the build that names it and says what to add: the sonames of
// other libraries (useradd(8) needs libaudit.so.1, libselinux.so.1 and
// libsemanage.so.2 besides glibc), musl's libc.so (whose package dpkg -S
// does not tell: libc6-dev's linker script has that name), dynamic: true
// on a static binary, and a symbol version newer than Debian 12's
// libstdc++6 has (GLIBCXX_3.4.32, of GCC 13).
func TestSharedLibraryWarnings(t *testing.T) {
	tools := testenv.RequireTool(t, "useradd", "gcc", "musl-gcc")
	useradd, err := os.ReadFile(tools[0])
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	buildBinary(t, "shlua", useradd, "    dynamic: true\n", log)
	buildBinary(t, "shlst", cc(t, "gcc", "-static"), "    dynamic: true\n", log)
	buildBinary(t, "shlmu", cc(t, "musl-gcc"), "", log)
	buildBinary(t, "shlgc", gcc13(t), "", log)
	got := buf.String()
	for _, w := range []string{
		`package=shlua sonames="libaudit.so.1 libselinux.so.1 libsemanage.so.2"`,
		`add the packages that ship them to the package's depends`,
		`no binary of the package needs glibc: no Depends on libc6 (drop dynamic: true)" recipe=shlst`,
		`linked with musl (libc.so): add musl to the package's depends" recipe=shlmu`,
		`newer than Debian 12's packages have (they will not start there)`,
		`package=shlgc versions="libstdc++.so.6 GLIBCXX_3.4.32"`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("warnings lack %q:\n%s", w, got)
		}
	}
}

// TestSearchPathWarning: a binary whose RPATH or RUNPATH names folders
// outside the package's private ones gets a build warning that names
// them, the folders lintian flags (custom-library-search-path,
// relative-library-search-path: errors), and no other: not one relative
// to $ORIGIN, not /usr/lib/PACKAGE.
func TestSearchPathWarning(t *testing.T) {
	testenv.RequireTool(t, "gcc", "dpkg-deb", "lintian")
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	deb := buildBinary(t, "shlrp", cc(t, "gcc", "-Wl,-rpath,/opt/x/lib:$ORIGIN/../lib:/usr/lib/shlrp/private:/usr/lib/x86_64-linux-gnu:lib"), "", log)
	out := testenv.Lintian(t, map[string]string{
		"custom-library-search-path":   "the binary's RUNPATH, what the test is about",
		"relative-library-search-path": "the binary's RUNPATH, what the test is about",
	}, deb)
	var flagged []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 5 && strings.HasSuffix(f[2], "library-search-path") {
			flagged = append(flagged, f[4])
		}
	}
	want := `file=/usr/bin/shlrp folders="/opt/x/lib /usr/lib/x86_64-linux-gnu lib"`
	if slices.Sort(flagged); !strings.Contains(buf.String(), want) || !slices.Equal(flagged, []string{"/opt/x/lib", "/usr/lib/x86_64-linux-gnu", "lib"}) {
		t.Errorf("warnings lack %q (lintian flags %q):\n%s", want, flagged, buf.String())
	}
}

// TestMuslOverride: a binary linked with musl, a PIE
// (library-not-linked-against-libc, an error) or not
// (program-not-linked-against-libc), gets lintian's tag overridden with a
// justification, for that file only: the package, depending on musl as
// the build's warning says, is lintian-clean.
func TestMuslOverride(t *testing.T) {
	testenv.RequireTool(t, "musl-gcc", "dpkg-deb", "lintian")
	var debs []string
	for i, args := range [][]string{{"-pie", "-fPIE"}, {"-no-pie"}} {
		deb := buildBinary(t, fmt.Sprintf("shlm%d", i), cc(t, "musl-gcc", args...), "    depends: [musl]\n", nil)
		debs = append(debs, deb)
	}
	testenv.Lintian(t, nil, debs...)
	for i, w := range []string{"shlm0: library-not-linked-against-libc [usr/bin/shlm0]", "shlm1: program-not-linked-against-libc [usr/bin/shlm1]"} {
		name := fmt.Sprintf("shlm%d", i)
		ovs := string(testenv.Run(t, "sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -xO ./usr/share/lintian/overrides/"$2"`, "sh", debs[i], name))
		if !strings.Contains(ovs, "# Linked with musl's C library") || !strings.Contains(ovs, w) {
			t.Errorf("%s's overrides lack %q:\n%s", name, w, ovs)
		}
	}
}

// TestStaticPIEOverride: a position-independent executable that needs no
// shared library, Go's -buildmode=pie without cgo (with a loader all the
// same) or gcc -static-pie, gets lintian's shared-library-lacks-prerequisites
// overridden with a justification: lintian reads any PIE as a shared
// library.
func TestStaticPIEOverride(t *testing.T) {
	testenv.RequireTool(t, "go", "gcc", "dpkg-deb", "lintian")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\"hi\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "sh", "-c", `cd "$1" && CGO_ENABLED=0 go build -buildmode=pie -o gopie main.go`, "sh", dir)
	gopie, err := os.ReadFile(filepath.Join(dir, "gopie"))
	if err != nil {
		t.Fatal(err)
	}
	var debs []string
	for i, b := range [][]byte{gopie, cc(t, "gcc", "-static-pie")} {
		name := fmt.Sprintf("shlsp%d", i)
		deb := buildBinary(t, name, b, "", nil)
		ovs := string(testenv.Run(t, "sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -xO ./usr/share/lintian/overrides/"$2"`, "sh", deb, name))
		if w := name + ": shared-library-lacks-prerequisites [usr/bin/" + name + "]"; !strings.Contains(ovs, w) {
			t.Errorf("%s's overrides lack %q:\n%s", name, w, ovs)
		}
		debs = append(debs, deb)
	}
	testenv.Lintian(t, nil, debs...)
}
