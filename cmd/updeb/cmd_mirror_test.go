package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/mirror"
	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/lockfile"
)

// TestMirrorExportAirGapped: the demo's downloads exported into a folder,
// verified, and built from that folder alone on "the far side" (a fresh
// cache, a proxy nothing answers at: any request out would fail). Then a
// missing and a corrupt file are each reported as what they are, by verify,
// by the build, and by an offline build from a damaged cache.
func TestMirrorExportAirGapped(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "usb", "updeb-mirror")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "--json")...)
	var exp struct {
		Files []struct {
			Path, SHA256 string
		}
		Mirrors []struct{ Prefix, To string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &exp) != nil || len(exp.Files) != 11 || len(exp.Mirrors) != 1 {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, out, stderr := runCLI(t, "mirror", "verify", dir); code != 0 || !strings.Contains(out, "11 file(s): 11 ok, 0 missing, 0 corrupt") {
		t.Fatalf("mirror verify: exit %d\n%s%s", code, out, stderr)
	}

	// The far side: only the folder.
	far := t.TempDir()
	cfg := filepath.Join(far, "updeb.yaml")
	root := filepath.Join(filepath.Dir(args[3]), "sigstore", "trusted_root.json") // the demo's release workflow's test CA
	os.WriteFile(cfg, []byte("mirrors:\n  - {prefix: "+exp.Mirrors[0].Prefix+", to: "+exp.Mirrors[0].To+"}\nsigstore: {trusted-root: "+root+"}\nbuild: {maintainer: t <t@example.org>}\nfetch: {retries: 0}\n"), 0o644)
	dead, _ := squid.DeadURL()
	farArgs := []string{"--config", cfg, "--recipes", args[3], "--proxy", dead, "-q"}
	build := func(cache string, extra ...string) (int, string) {
		code, out, stderr := runCLI(t, append(append(farArgs, "--cache", cache, "--out", filepath.Join(far, "out")), append([]string{"build", "--force"}, extra...)...)...)
		return code, out + stderr
	}
	cache := filepath.Join(far, "cache")
	if code, out := build(cache); code != 0 || !strings.Contains(out, "4 built, 0 up to date, 0 failed") {
		t.Fatalf("build from the exported folder: exit %d\n%s", code, out)
	}

	// Damage the folder: one file gone, one changed.
	pingd := filepath.Join(dir, "releases.example.org", "pingd", "v0.9.1")
	os.Remove(filepath.Join(pingd, "pingd.arm64"))
	os.WriteFile(filepath.Join(pingd, "pingd.amd64"), []byte("not pingd"), 0o644)
	code, out, _ := runCLI(t, "mirror", "verify", dir)
	if code != exitCheck || !strings.Contains(out, "MISSING  releases.example.org/pingd/v0.9.1/pingd.arm64 (https://releases.example.org/pingd/v0.9.1/pingd.arm64)") ||
		!strings.Contains(out, "CORRUPT  releases.example.org/pingd/v0.9.1/pingd.amd64: 9 bytes") || !strings.Contains(out, "9 ok, 1 missing, 1 corrupt") {
		t.Errorf("verify of a damaged folder: exit %d\n%s", code, out)
	}
	code, out = build(filepath.Join(far, "cache2"), "pingd")
	if code == 0 || !strings.Contains(out, "fetch https://releases.example.org/pingd/v0.9.1/pingd.arm64: missing from the mirror file://") ||
		!strings.Contains(out, "the copy in the mirror file://") || !strings.Contains(out, "pingd.amd64 is corrupt: sha256 digest mismatch") ||
		strings.Contains(out, "not in the cache") || strings.Contains(out, "check the proxy") || strings.Contains(out, "no proxy was used") {
		t.Errorf("build from a damaged folder: exit %d\n%s", code, out)
	}

	// Offline, from the first cache: a corrupt cached copy is reported as
	// such, a file never cached as missing.
	for _, f := range exp.Files {
		if strings.HasSuffix(f.Path, "pingd.amd64") {
			blob := filepath.Join(cache, "sha256", f.SHA256[:2], f.SHA256)
			os.Chmod(blob, 0o644)
			if err := os.WriteFile(blob, []byte("bit rot"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, out = build(cache, "--offline", "pingd")
	if code != exitNetwork || !strings.Contains(out, "1 file(s) in the cache failed their digest and were removed:\n  https://releases.example.org/pingd/v0.9.1/pingd.amd64") ||
		strings.Contains(out, "not in the cache") {
		t.Errorf("offline build from a damaged cache: exit %d\n%s", code, out)
	}
	code, out = build(filepath.Join(far, "empty-cache"), "--offline", "hello", "--arch", "amd64")
	if code != exitNetwork || !strings.Contains(out, "3 file(s) not in the cache") || strings.Contains(out, "failed their digest") {
		t.Errorf("offline build from an empty cache: exit %d\n%s", code, out)
	}

	// A folder without a manifest is not a mirror folder.
	if code, _, stderr := runCLI(t, "mirror", "verify", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "updeb-mirror.json") {
		t.Errorf("verify of an empty folder: exit %d: %s", code, stderr)
	}
}

// TestMirrorExportRefusesBeforeFetching: a DIR that cannot be a mirror
// folder (a regular file, a FIFO, a folder whose manifest updeb did not
// write) is refused (exit 2) before anything is downloaded: not after
// every artifact of every recipe (gigabytes for Kubernetes) was fetched,
// nor as a network failure (exit 3) when the network is not there.
func TestMirrorExportRefusesBeforeFetching(t *testing.T) {
	args, _ := demoProject(t)
	cache := args[5]
	file := filepath.Join(t.TempDir(), "not-a-folder")
	fifo := filepath.Join(t.TempDir(), "fifo")
	foreign := t.TempDir()
	os.WriteFile(file, []byte("x"), 0o644)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(foreign, mirror.ManifestName), []byte(`{"schema": "somebody else's"}`), 0o644)
	for dir, want := range map[string]string{file: "not a folder (a regular file)", fifo: "not a folder (a FIFO)", foreign: "updeb-mirror.json"} {
		for _, offline := range []bool{false, true} {
			a := args
			if offline {
				a = append(append([]string{}, args...), "--offline")
			}
			code, stdout, stderr := runCLI(t, append(a, "mirror", "export", dir)...)
			// The hint names what export takes: it spoke of a folder
			// export wrote only, as to mirror verify.
			if code != exitUsage || !strings.Contains(stderr, want) || !strings.Contains(stderr, "or, to export, a new one") {
				t.Errorf("mirror export %s (offline %v): exit %d, want %d and %q\n%s%s", dir, offline, code, exitUsage, want, stdout, stderr)
			}
			if blobs, _ := filepath.Glob(filepath.Join(cache, "sha256", "*", "*")); len(blobs) > 0 {
				t.Fatalf("mirror export %s fetched %d file(s) before refusing it", dir, len(blobs))
			}
		}
	}
}

// TestMirrorExportOneAtATime: an export into a folder another export holds
// waits for it (two at once would each write the manifest they read, and
// the first one's entries would be lost), and removes what a killed export
// left (a temporary copy) but no other file, and leaves no lock file.
func TestMirrorExportOneAtATime(t *testing.T) {
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	if code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64")...); code != 0 {
		t.Fatalf("mirror export hello: exit %d\n%s%s", code, stdout, stderr)
	}
	hello := filepath.Join(dir, "releases.example.org", "hello", "v1.2.0")
	killed := filepath.Join(hello, ".hello-v1.2.0-linux-amd64.tar.gz.tmp-99999-0")
	notes := filepath.Join(hello, "notes.txt")
	for _, f := range []string{killed, notes} {
		if err := os.WriteFile(f, []byte("half a copy"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	held, err := lockfile.AcquireDir(t.Context(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "pingd", "--arch", "amd64")...)
		done <- result{code, stdout, stderr}
	}()
	select {
	case r := <-done:
		t.Fatalf("export ran while another held the folder: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	case <-time.After(500 * time.Millisecond):
	}
	held.Unlock()
	select {
	case r := <-done:
		if r.code != 0 {
			t.Fatalf("mirror export pingd: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("export still waiting 60 s after the lock was released")
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed export's temporary copy is still there: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, mirror.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	m, err := mirror.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if all := strings.Join(paths, " "); !strings.Contains(all, "hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz ") || !strings.Contains(all, "pingd/v0.9.1/pingd.amd64") {
		t.Errorf("the manifest lists %v, want both exports' files", paths)
	}
	code, out, stderr := runCLI(t, "mirror", "verify", dir)
	if code != 0 || strings.Count(out, "unlisted ") != 1 || !strings.Contains(out, "unlisted releases.example.org/hello/v1.2.0/notes.txt") {
		t.Errorf("mirror verify: exit %d, want notes.txt alone unlisted\n%s%s", code, out, stderr)
	}
}

// TestMirrorExportStoppedKeepsTheFolder: an export that stops after it
// replaced a listed file whose bytes upstream changed (a checksum file a
// line was added to) leaves the folder one verify passes: that file is
// unlisted until an export lists it again. It stayed listed with the old
// bytes' digests (exit 1, CORRUPT), though nothing in it was damaged. The
// export is stopped by what a later file meets (a folder where it goes),
// as a full disk or kill -9 would stop it.
func TestMirrorExportStoppedKeepsTheFolder(t *testing.T) {
	args, upstream := demoProject(t)
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	if code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64")...); code != 0 {
		t.Fatalf("mirror export hello: exit %d\n%s%s", code, stdout, stderr)
	}
	const sums = "hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz.sha256sum"
	f, err := os.OpenFile(filepath.Join(upstream, sums), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("0", 64) + "  hello-v1.2.0-linux-amd64.sbom.json\n")
	f.Close()
	inTheWay := filepath.Join(dir, "releases.example.org", "pingd", "v0.9.1", "pingd.amd64", "x")
	if err := os.MkdirAll(inTheWay, 0o755); err != nil {
		t.Fatal(err)
	}
	again := append(args, "--cache", filepath.Join(t.TempDir(), "cache"), "mirror", "export", dir, "hello", "pingd", "--arch", "amd64")
	if code, stdout, stderr := runCLI(t, again...); code == 0 {
		t.Fatalf("mirror export with a folder in the way: exit 0\n%s%s", stdout, stderr)
	}
	code, out, stderr := runCLI(t, "mirror", "verify", dir)
	if code != 0 || !strings.Contains(out, "unlisted releases.example.org/"+sums) || strings.Contains(out, "CORRUPT") {
		t.Errorf("mirror verify after a stopped export: exit %d, want 0 and the changed file unlisted\n%s%s", code, out, stderr)
	}
	os.RemoveAll(filepath.Dir(inTheWay))
	if code, stdout, stderr := runCLI(t, again...); code != 0 {
		t.Fatalf("mirror export again: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, out, stderr := runCLI(t, "mirror", "verify", dir); code != 0 || strings.Contains(out, "unlisted") || !strings.Contains(out, "6 file(s): 6 ok") {
		t.Errorf("mirror verify after the export finished: exit %d\n%s%s", code, out, stderr)
	}
}

// TestMirrorVerifyEscapes: what mirror verify prints of a folder carried in
// from elsewhere (the names of files in it, its manifest's paths and URLs)
// reaches the terminal escaped (pkg/termtext): a name holding an OSC or CSI
// sequence must not retitle the window or clear the screen of whoever
// checks the stick. A manifest listing such a URL is refused (exit 2): no
// download URL holds one.
func TestMirrorVerifyEscapes(t *testing.T) {
	const evil = "a\x1b]0;owned\x07\x1b[2J\u202eb"
	sum := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name  string
		files []map[string]any
		code  int
		want  []string
	}{
		{"unlisted", []map[string]any{
			{"url": "https://h/corrupt", "path": "h/corrupt", "size": 1, "sha256": sum},
			{"url": "https://h/missing", "path": "h/missing", "size": 1, "sha256": sum},
		}, exitCheck, []string{"CORRUPT  h/corrupt: 18 bytes", "MISSING  h/missing (https://h/missing)", `unlisted h/unlisteda\x1b]0;owned\a\x1b[2J\u202eb`}},
		{"listed", []map[string]any{
			{"url": "https://h/corrupt" + evil, "path": "h/corrupt" + evil, "size": 1, "sha256": sum},
		}, exitUsage, []string{`url "https://h/corrupta\x1b]0;owned\a\x1b[2J\u202eb"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "h"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range map[string]string{"h/corrupt": "not what is listed", "h/corrupt" + evil: "x", "h/unlisted" + evil: "x"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, err := json.Marshal(map[string]any{"schema": "updeb/mirror/v1", "files": tc.files})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, mirror.ManifestName), m, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := runCLI(t, "mirror", "verify", dir)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			for i, r := range out + stderr {
				if (r < 0x20 && r != '\n') || r == 0x7f || r == '\u202e' {
					t.Fatalf("mirror verify printed %q at byte %d:\n%q\n%q", r, i, out, stderr)
				}
			}
			for _, want := range tc.want {
				if !strings.Contains(out+stderr, want) {
					t.Errorf("the output lacks %q:\n%s%s", want, out, stderr)
				}
			}
		})
	}
}

// TestMirrorVerifySaysWhyUnreadable: a listed file that is there but cannot
// be read (permission denied on a stick copied with its owner's modes) or
// read to its end (an I/O error) is printed with the reason Verify found,
// not as a bare MISSING, nor as a corrupt file of 0 bytes with no digest.
func TestMirrorVerifySaysWhyUnreadable(t *testing.T) {
	sum := strings.Repeat("0", 64)
	rep := &mirror.Report{Files: []mirror.Check{
		{Entry: mirror.Entry{URL: "https://h/a", Path: "h/a", Size: 1, SHA256: sum}, Status: mirror.Missing, Detail: "openat h/a: permission denied"},
		{Entry: mirror.Entry{URL: "https://h/b", Path: "h/b", Size: 1, SHA256: sum}, Status: mirror.Corrupt, Detail: "read h/b: input/output error"},
		{Entry: mirror.Entry{URL: "https://h/c", Path: "h/c", Size: 1, SHA256: sum}, Status: mirror.Missing},
	}}
	var b strings.Builder
	printMirrorReport(&b, rep)
	for _, want := range []string{
		"MISSING  h/a (https://h/a): openat h/a: permission denied\n",
		"CORRUPT  h/b: read h/b: input/output error\n",
		"MISSING  h/c (https://h/c)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestMirrorVerifyUnlistedNotUnused: a file the manifest does not list is
// reported as not checked, never as unused: a build whose recipe maps a URL
// to it reads it (two exports copied over each other leave one manifest,
// and the other's files unlisted but read), and the report says how
// exports merge.
func TestMirrorVerifyUnlistedNotUnused(t *testing.T) {
	var b strings.Builder
	printMirrorReport(&b, &mirror.Report{Unlisted: []string{"h/a"}})
	out := b.String()
	if !strings.Contains(out, "unlisted h/a (not in the manifest: not checked)\n") || strings.Contains(out, "not use") ||
		!strings.Contains(out, "Exports merge when made into one folder") || strings.Count(out, "unlisted ") != 1 {
		t.Errorf("report:\n%s", out)
	}
}

// An export made under umask 077 is readable by another user on the far
// side (a service account that builds from it, a web server that serves it
// as an HTTP mirror): folders 0755 like the files' 0644, as a copy with cp
// -a or rsync -a keeps them.
func TestMirrorExportReadableWhateverTheUmask(t *testing.T) {
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "usb", "updeb-mirror")
	old := syscall.Umask(0o077)
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64")...)
	syscall.Umask(old)
	if code != 0 {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	testenv.WorldReadable(t, filepath.Dir(dir))
}

// TestMirrorExportNamesTheFolder: an export onto a full disk or into a
// read-only folder says which folder, by the path the user gave: the
// export writes through a root opened as /proc/self/fd/N, and its errors
// named "/proc/self/fd/5/releases.example.org/..." (the hint sent the
// operator to free the disk holding that) or "mkdirat
// releases.example.org", relative to nothing the user knows.
func TestMirrorExportNamesTheFolder(t *testing.T) {
	args, _ := demoProject(t)
	// The first tarball fits, the second does not.
	dir := filepath.Join(testenv.TinyDisk(t, "1m"), "updeb-mirror")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello")...)
	want := "hint: the disk holding " + filepath.Join(dir, "releases.example.org", "hello", "v1.2.0") + " is full"
	if code != exitNetwork || !strings.Contains(stderr, want) || strings.Contains(stderr, "/proc/self/fd") {
		t.Errorf("mirror export onto a full disk: exit %d, want %d and %q\n%s%s", code, exitNetwork, want, stdout, stderr)
	}

	src, ro := t.TempDir(), filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.ReadOnlyBindMount(t, src, ro)
	code, stdout, stderr = runCLI(t, append(args, "mirror", "export", ro, "hello")...)
	want = "hint: " + filepath.Join(ro, "releases.example.org") + " is on a read-only file system"
	if code != exitNetwork || !strings.Contains(stderr, want) {
		t.Errorf("mirror export into a read-only folder: exit %d, want %d and %q\n%s%s", code, exitNetwork, want, stdout, stderr)
	}
}

// TestMirrorExportOneFolderPerOrigin: recipes that spell one origin two
// ways (https://Releases.Example.org:443/ and https://releases.example.org/,
// which fetch takes for one origin) are exported into one folder, with one
// mirrors: entry, and the far side builds both from it. Export filed each
// spelling under a folder of its own with a mirrors: entry of its own; the
// far side's fetch took one of them for every URL of the origin, and the
// other recipe's files were missing from the mirror.
func TestMirrorExportOneFolderPerOrigin(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	hello := filepath.Join(args[3], "hello.yaml")
	data, err := os.ReadFile(hello)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(hello, []byte(strings.ReplaceAll(string(data), "https://releases.example.org/", "https://Releases.Example.org:443/")), 0o644)
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "pingd", "--arch", "amd64", "--json")...)
	var exp struct {
		Files   []struct{ Path string }
		Mirrors []struct{ Prefix, To string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &exp) != nil {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	if len(exp.Mirrors) != 1 || exp.Mirrors[0].Prefix != "https://releases.example.org/" || exp.Mirrors[0].To != "file://"+filepath.Join(dir, "releases.example.org")+"/" {
		t.Fatalf("mirrors: %+v, want one for https://releases.example.org/", exp.Mirrors)
	}
	for _, f := range exp.Files {
		if !strings.HasPrefix(f.Path, "releases.example.org/") {
			t.Errorf("%s: not in the origin's folder releases.example.org/", f.Path)
		}
	}
	if code, out, stderr := runCLI(t, "mirror", "verify", dir); code != 0 {
		t.Fatalf("mirror verify: exit %d\n%s%s", code, out, stderr)
	}

	if code, out := buildFromMirror(t, args, "  - {prefix: "+exp.Mirrors[0].Prefix+", to: "+exp.Mirrors[0].To+"}\n", "hello", "pingd"); code != 0 || !strings.Contains(out, "2 built, 0 up to date, 0 failed") {
		t.Errorf("build from the exported folder: exit %d\n%s", code, out)
	}
}

// buildFromMirror builds the demo project's recipes for amd64 on "the far
// side": the config's mirrors: list (entries, YAML), a fresh cache, a
// proxy nothing answers at. It returns the exit code and the output.
func buildFromMirror(t *testing.T, args []string, entries string, recipes ...string) (int, string) {
	t.Helper()
	far := t.TempDir()
	cfg := filepath.Join(far, "updeb.yaml")
	root := filepath.Join(filepath.Dir(args[3]), "sigstore", "trusted_root.json")
	os.WriteFile(cfg, []byte("mirrors:\n"+entries+"sigstore: {trusted-root: "+root+"}\nbuild: {maintainer: t <t@example.org>}\nfetch: {retries: 0}\n"), 0o644)
	dead, _ := squid.DeadURL()
	code, stdout, stderr := runCLI(t, append([]string{"--config", cfg, "--recipes", args[3], "--proxy", dead, "-q", "--cache", filepath.Join(far, "cache"),
		"--out", filepath.Join(far, "out"), "build", "--arch", "amd64"}, recipes...)...)
	return code, stdout + stderr
}

// TestMirrorExportFolderNameInTheURL: the mirrors: entry export prints for
// a folder whose name holds what a URL's path cannot hold as it is (a
// space, "%", "#") is one the far side's config takes, and it reads that
// folder. Export wrote the path into the file:// URL unescaped: the
// config refused it ("%" not followed by hex digits, "#" read as a
// fragment), or read another folder.
func TestMirrorExportFolderNameInTheURL(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "usb 100%#1", "updeb-mirror")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64", "--json")...)
	var exp struct{ Mirrors []struct{ Prefix, To string } }
	if code != 0 || json.Unmarshal([]byte(stdout), &exp) != nil || len(exp.Mirrors) != 1 {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, out := buildFromMirror(t, args, "  - {prefix: "+exp.Mirrors[0].Prefix+", to: "+exp.Mirrors[0].To+"}\n", "hello"); code != 0 || !strings.Contains(out, "1 built, 0 up to date, 0 failed") {
		t.Errorf("build from the exported folder (to: %s): exit %d\n%s", exp.Mirrors[0].To, code, out)
	}
}

// TestMirrorVerifySaysWhichDigest: a listed file whose size and sha256 are
// the manifest's but whose sha512 is not (a manifest that lists another
// sha512) is reported with the sha512 that differs: the report gave the
// size and sha256 twice, equal, and left the reader to guess why the file
// was corrupt.
func TestMirrorVerifySaysWhichDigest(t *testing.T) {
	dir := t.TempDir()
	body := []byte("hello\n")
	s256, s512 := sha256.Sum256(body), sha512.Sum512(body)
	other := strings.Repeat("0", 128)
	os.MkdirAll(filepath.Join(dir, "h"), 0o755)
	os.WriteFile(filepath.Join(dir, "h", "a"), body, 0o644)
	m, _ := json.Marshal(map[string]any{"schema": "updeb/mirror/v1", "files": []map[string]any{
		{"url": "https://h/a", "path": "h/a", "size": len(body), "sha256": hex.EncodeToString(s256[:]), "sha512": other},
	}})
	os.WriteFile(filepath.Join(dir, mirror.ManifestName), m, 0o644)
	code, out, stderr := runCLI(t, "mirror", "verify", dir)
	want := "CORRUPT  h/a: sha512 " + hex.EncodeToString(s512[:]) + "; the manifest says sha512 " + other
	if code != exitCheck || !strings.Contains(out, want) {
		t.Errorf("exit %d, want %d and %q\n%s%s", code, exitCheck, want, out, stderr)
	}
	code, out, _ = runCLI(t, "mirror", "verify", dir, "--json")
	if code != exitCheck || !strings.Contains(out, `"got_sha512": "`+hex.EncodeToString(s512[:])+`"`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}

// helloFrom adds to the demo project (args, from demoProject) the recipe
// name: the demo's hello, its package renamed name, its files downloaded
// from prefix instead of https://releases.example.org/.
func helloFrom(t *testing.T, args []string, name, prefix string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(args[3], "hello.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	again := strings.NewReplacer("https://releases.example.org/", prefix, "\nname: hello\n", "\nname: "+name+"\n",
		"packages:\n  - name: hello\n", "packages:\n  - name: "+name+"\n").Replace(string(data))
	if err := os.WriteFile(filepath.Join(args[3], name+".yaml"), []byte(again), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMirrorExportOneFileTwoSpellings: two recipes that download one file
// by URLs that spell its origin two ways export it once, into the origin's
// folder: export took the two URLs filed at one path for a conflict ("...
// both map to releases.example.org/...") though their bytes are the same.
func TestMirrorExportOneFileTwoSpellings(t *testing.T) {
	args, _ := demoProject(t)
	helloFrom(t, args, "hello-again", "https://Releases.Example.org:443/")
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "hello-again", "--arch", "amd64", "--json")...)
	var exp struct {
		Files   []struct{ Path string }
		Mirrors []struct{ Prefix string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &exp) != nil || len(exp.Files) != 3 || len(exp.Mirrors) != 1 {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, out, stderr := runCLI(t, "mirror", "verify", dir); code != 0 || !strings.Contains(out, "3 file(s): 3 ok") {
		t.Errorf("mirror verify: exit %d\n%s%s", code, out, stderr)
	}
}

// TestMirrorExportPrintsConfig: the mirrors: entries export prints go into
// the far side's config as they are, whatever the folder's name: one with
// a "," (/media/usb/mirror,2026) ended the YAML flow mapping's value there,
// and the config was refused.
func TestMirrorExportPrintsConfig(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "mirror,2026 #1: {x}")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64")...)
	_, entries, ok := strings.Cut(stdout, "mirrors:\n")
	if code != 0 || !ok {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, out := buildFromMirror(t, args, entries, "hello"); code != 0 || !strings.Contains(out, "1 built, 0 up to date, 0 failed") {
		t.Errorf("build with the printed entries:\n%s\nexit %d\n%s", entries, code, out)
	}
}

// TestMirrorExportDanglingSymlink: a DIR that is a symlink to nothing (the
// stick or share it points at not mounted) is refused before anything is
// downloaded, as a file or a FIFO is: it was refused when export made the
// folder, after every artifact of the recipes was fetched.
func TestMirrorExportDanglingSymlink(t *testing.T) {
	args, _ := demoProject(t)
	link := filepath.Join(t.TempDir(), "updeb-mirror")
	if err := os.Symlink(filepath.Join(t.TempDir(), "usb", "updeb-mirror"), link); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", link, "hello", "--arch", "amd64")...)
	if code == 0 || !strings.Contains(stderr, "which does not exist (a share not mounted?)") {
		t.Errorf("mirror export into a dangling symlink: exit %d\n%s%s", code, stdout, stderr)
	}
	if blobs, _ := filepath.Glob(filepath.Join(args[5], "sha256", "*", "*")); len(blobs) > 0 {
		t.Errorf("mirror export into a dangling symlink fetched %d file(s) before refusing it", len(blobs))
	}
}

// TestMirrorVerifyStickRoot: a folder at the root of an ext4 stick holds
// lost+found (root's, mode 0700); verify, run by a user who may not read
// it, checks every listed file all the same and says the folder was not
// checked. The walk for unlisted files stopped at it: exit 3, "permission
// denied", and no word of the files, all of them as listed.
func TestMirrorVerifyStickRoot(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "usb")
	body := []byte("hello\n")
	sum := sha256.Sum256(body)
	if err := os.MkdirAll(filepath.Join(dir, "h"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "h", "a"), body, 0o644)
	m, _ := json.Marshal(map[string]any{"schema": "updeb/mirror/v1", "files": []map[string]any{
		{"url": "https://h/a", "path": "h/a", "size": len(body), "sha256": hex.EncodeToString(sum[:])},
	}})
	os.WriteFile(filepath.Join(dir, mirror.ManifestName), m, 0o644)
	if err := os.Mkdir(filepath.Join(dir, "lost+found"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lost+found", "#1234"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		// Its owner's own folder: readable unless its mode says not.
		os.Chmod(filepath.Join(dir, "lost+found"), 0)
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, "lost+found"), 0o700) })
	}
	run := runCLIUnprivileged(t, top)
	code, out, stderr := run("mirror", "verify", dir)
	if code != 0 || !strings.Contains(out, "1 file(s): 1 ok, 0 missing") || !strings.Contains(out, "unlisted lost+found/ (a folder updeb may not read: not checked)") ||
		strings.Contains(out, "file(s) not in the manifest") {
		t.Errorf("mirror verify: exit %d, want 0, the file ok and lost+found not checked\n%s%s", code, out, stderr)
	}
	code, out, stderr = run("mirror", "verify", dir, "--json")
	if code != 0 || !strings.Contains(out, `"unlisted": [`+"\n"+`    "lost+found/"`) {
		t.Errorf("mirror verify --json: exit %d\n%s%s", code, out, stderr)
	}
}

// TestMirrorServesABadSignature: a signature the mirror serves that does
// not verify (a copy upstream has since replaced, an HTML page an HTTP
// mirror answers with 200) is named with the mirror it came from, and the
// hint says that the mirror serves the same copy again and to bring it up
// to date. The error named the upstream URL alone, blamed upstream or the
// proxy (neither of which the build asked), and said to build again, which
// read the same copy.
func TestMirrorServesABadSignature(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64", "--json")...)
	var exp struct{ Mirrors []struct{ Prefix, To string } }
	if code != 0 || json.Unmarshal([]byte(stdout), &exp) != nil || len(exp.Mirrors) != 1 {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	const sig = "hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz.asc"
	page := []byte("<!DOCTYPE html>\n<html><body><h1>Index of /hello/</h1></body></html>\n")
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".asc") {
			w.Write(page) // 200, text/html
			return
		}
		http.FileServer(http.Dir(filepath.Join(dir, "releases.example.org"))).ServeHTTP(w, r)
	}))
	t.Cleanup(web.Close)
	for _, tc := range []struct{ name, entries, from string }{
		{"folder", "  - {prefix: " + exp.Mirrors[0].Prefix + ", to: " + exp.Mirrors[0].To + "}\n", "(mirror " + exp.Mirrors[0].To + sig + ")"},
		{"http", "  - {prefix: " + exp.Mirrors[0].Prefix + ", to: " + web.URL + "/}\nno-proxy: [127.0.0.1]\n", "(mirror " + web.URL + "/" + sig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "folder" {
				// Upstream re-signed the release since the export.
				if err := os.WriteFile(filepath.Join(dir, "releases.example.org", sig), page, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out := buildFromMirror(t, args, tc.entries, "hello")
			if code != exitCheck || !strings.Contains(out, "fetched from https://releases.example.org/"+sig+" "+tc.from) ||
				!strings.Contains(out, "the mirror serves a copy that is not upstream's") || !strings.Contains(out, "bring the mirror up to date (for a mirror folder, updeb mirror export") {
				t.Errorf("build: exit %d, want %d, the mirror named and the hint to bring it up to date\n%s", code, exitCheck, out)
			}
		})
	}
}

// TestMirrorExportLeavesARunningExportsCopies: an export removes the
// temporary copies a killed export left in its folder, not those of an
// export still running into another mirror folder, nested in this one or
// this one in it (which another lock guards): it removed every temporary
// copy its walk met, and the running export's rename found its copy gone,
// after all its downloads. The running exports are stood for by their
// folders' locks, held.
func TestMirrorExportLeavesARunningExportsCopies(t *testing.T) {
	args, _ := demoProject(t)
	outer := filepath.Join(t.TempDir(), "updeb-mirror")
	dir := filepath.Join(outer, "releases.example.org") // an export into another's host folder
	nested := filepath.Join(dir, "other-mirror")
	copy := func(folder, name string) string {
		f := filepath.Join(folder, "releases.example.org", "pingd", "v0.9.1", name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("half a copy"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	running := func(folder string) {
		l, err := lockfile.AcquireDir(t.Context(), folder, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Unlock() })
	}
	export := func() {
		t.Helper()
		if code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64")...); code != 0 {
			t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
		}
	}
	kept := func(f string) {
		t.Helper()
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a running export's copy was removed: %v", err)
		}
	}
	intoNested := copy(nested, ".pingd.amd64.tmp-4242-0")
	left := copy(dir, ".pingd.arm64.tmp-4243-0")
	running(nested)
	export()
	kept(intoNested)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the killed export's copy is still there: %v", err)
	}
	// An export running into the folder this one is in, writing a copy
	// into this one.
	intoOuter := copy(outer, ".pingd.arm64.tmp-4244-0")
	running(outer)
	export()
	kept(intoOuter)
}

// TestMirrorVerifyHalfExported: verify of a folder whose first export
// stopped half way (a full disk here; kill -9 leaves the same), which holds
// files and no manifest yet, names the manifest it looked for by its path
// and says that an export that stopped writes none (exit 2): it said
// "openat updeb-mirror.json: no such file or directory", naming no folder,
// and to name a folder export wrote, which this one is.
func TestMirrorVerifyHalfExported(t *testing.T) {
	args, _ := demoProject(t)
	dir := filepath.Join(testenv.TinyDisk(t, "1m"), "updeb-mirror")
	if code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello")...); code != exitNetwork {
		t.Fatalf("mirror export onto a full disk: exit %d, want %d\n%s%s", code, exitNetwork, stdout, stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "releases.example.org", "hello", "v1.2.0", "*")); len(files) == 0 {
		t.Fatal("the stopped export wrote no file: nothing half exported")
	}
	code, stdout, stderr := runCLI(t, "mirror", "verify", dir)
	want := filepath.Join(dir, mirror.ManifestName) + ": no such file: not a mirror folder, or one whose first export stopped before its end (killed, a full disk), which writes none; export into " + dir + " again"
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("mirror verify of a half-exported folder: exit %d, want %d and %q\n%s%s", code, exitUsage, want, stdout, stderr)
	}
}

// TestMirrorExportStoppedSaysWhatItLeft: an export stopped by a signal
// (SIGTERM, Ctrl-C) after it placed a file in a folder an earlier export
// made says that it placed files the manifest does not list yet, and that
// the same export again finishes it: it said "nothing half-done was left
// behind", beside a file updeb-mirror.json did not list. Verify of the
// half-exported folder names that file unlisted, not corrupt, and passes,
// with nothing unlisted, once the export ran again. The export is stopped
// right after its first file (mirror.Placed), as a signal would.
func TestMirrorExportStoppedSaysWhatItLeft(t *testing.T) {
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	export := append(args, "mirror", "export", dir, "hello", "--arch", "amd64")
	if code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "pingd", "--arch", "amd64")...); code != 0 {
		t.Fatalf("mirror export pingd: exit %d\n%s%s", code, stdout, stderr)
	}
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	mirror.Placed = func(n int) { stop(errors.New("signal: terminated")) }
	var stdout, stderr bytes.Buffer
	code := run(ctx, export, &stdout, &stderr)
	mirror.Placed = func(int) {}
	want := "the export placed 1 new file(s) of its "
	if code != exitInterrupted || strings.Contains(stderr.String(), "nothing half-done") || !strings.Contains(stderr.String(), want) ||
		!strings.Contains(stderr.String(), mirror.ManifestName+" does not list them yet") || !strings.Contains(stderr.String(), "run the same export again to finish it") {
		t.Fatalf("mirror export stopped after a file: exit %d, want %d and %q, the manifest and how to finish in:\n%s", code, exitInterrupted, want, stderr.String())
	}
	code, out, errOut := runCLI(t, "mirror", "verify", dir)
	if code != 0 || !strings.Contains(out, "unlisted releases.example.org/hello/") || !strings.Contains(out, " 0 corrupt") || !strings.Contains(out, "the same export again lists them") {
		t.Errorf("mirror verify of the half-exported folder: exit %d, want 0 and the placed file unlisted, not corrupt:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, export...); code != 0 {
		t.Fatalf("the same export again: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "mirror", "verify", dir)
	if code != 0 || strings.Contains(out, "unlisted") || !strings.Contains(out, "6 file(s): 6 ok") {
		t.Errorf("mirror verify after the export ran again: exit %d, want 0, hello's files and pingd's ok and nothing unlisted:\n%s%s", code, out, errOut)
	}
}

// TestMirrorVerifyUnreadableManifest: a manifest its user may not read (a
// stick copied with its owner's modes, 0600) is a file to make readable
// (exit 3, the hint says to whom), not a folder export did not write: it
// was exit 2, "name a folder 'updeb mirror export' wrote", for the one it
// wrote, and the path the error gave was "updeb-mirror.json" alone.
func TestMirrorVerifyUnreadableManifest(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "usb")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, mirror.ManifestName)
	if err := os.WriteFile(manifest, []byte(`{"schema": "updeb/mirror/v1", "files": []}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		os.Chmod(manifest, 0)
	}
	code, stdout, stderr := runCLIUnprivileged(t, top)("mirror", "verify", dir)
	if code != exitNetwork || !strings.Contains(stderr, "which may not openat "+manifest) || strings.Contains(stderr, "name a folder") {
		t.Errorf("mirror verify with an unreadable manifest: exit %d, want %d and a hint naming %s\n%s%s", code, exitNetwork, manifest, stdout, stderr)
	}
}

// TestMirrorExportAgainMakesReadable: a file export finds already there,
// with the bytes it would write, but readable by its owner alone (a copy
// made under umask 077, a stick's owner-only modes) is made 0644 as a file
// export writes is: it was left as it was, and another user on the far
// side (a service account that builds, a web server) could not read it.
func TestMirrorExportAgainMakesReadable(t *testing.T) {
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	export := append(args, "mirror", "export", dir, "hello", "--arch", "amd64")
	if code, stdout, stderr := runCLI(t, export...); code != 0 {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	tarball := filepath.Join(dir, "releases.example.org", "hello", "v1.2.0", "hello-v1.2.0-linux-amd64.tar.gz")
	if err := os.Chmod(tarball, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, export...); code != 0 {
		t.Fatalf("mirror export again: exit %d\n%s%s", code, stdout, stderr)
	}
	testenv.WorldReadable(t, dir)
}

// TestHTTPMirrorServesAPage: an HTTP mirror that answers a pinned file with
// 200 and an HTML page (its error page, a folder listing) is named as the
// one whose copy is not the pinned file, and the hint says to bring the
// copy over again, not to check the pin: the error named the upstream URL
// alone, guessed at a proxy (none was used), and sent the operator to the
// pin and the upstream release, which are right.
func TestHTTPMirrorServesAPage(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<!DOCTYPE html>\n<html><body><h1>Index of " + r.URL.Path + "</h1></body></html>\n"))
	}))
	t.Cleanup(web.Close)
	code, out := buildFromMirror(t, args, "  - {prefix: https://releases.example.org/, to: "+web.URL+"/}\nno-proxy: [127.0.0.1]\n", "hello")
	const tarball = "hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz"
	if code != exitCheck || !strings.Contains(out, "the copy in the mirror "+web.URL+"/"+tarball+" (direct) is corrupt: sha256 digest mismatch for https://releases.example.org/"+tarball) ||
		!strings.Contains(out, "an HTML page, not the file: an error page or folder listing of the mirror") || !strings.Contains(out, "Bring it over again") || strings.Contains(out, "Check the pin") {
		t.Errorf("build: exit %d, want %d, the mirror's copy named and the hint to bring it over again\n%s", code, exitCheck, out)
	}
}

// TestMirrorExportPrintsEveryHost: an export into a folder an earlier
// export filled prints the mirrors: entries of every host the folder
// holds, the config the far side needs for it: it printed those of its
// own recipes' hosts alone, and a far side configured with them built the
// earlier export's recipes from upstream, which it cannot reach.
func TestMirrorExportPrintsEveryHost(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	helloFrom(t, args, "hello-elsewhere", "https://downloads.example.org/")
	cfg, err := os.ReadFile(args[1])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(args[1], []byte(strings.Replace(string(cfg), "mirrors:\n", "mirrors:\n  - {prefix: https://downloads.example.org/, to: mirror/releases.example.org/}\n", 1)), 0o644)
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	if code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64")...); code != 0 {
		t.Fatalf("mirror export hello: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello-elsewhere", "--arch", "amd64")...)
	_, entries, ok := strings.Cut(stdout, "mirrors:\n")
	if code != 0 || !ok {
		t.Fatalf("mirror export hello-elsewhere: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, out := buildFromMirror(t, args, entries, "hello", "hello-elsewhere"); code != 0 || !strings.Contains(out, "2 built, 0 up to date, 0 failed") {
		t.Errorf("build with the entries the second export printed:\n%s\nexit %d\n%s", entries, code, out)
	}
}

// TestMirrorFolderNotThere: a mirrors: entry whose folder is not there at
// all (the stick or share not mounted, a mistyped to:) is named as such,
// once per file, with the hint to mount it or fix the entry (exit 3):
// every file was "missing from the mirror", and the hint sent the
// operator to export them all again and carry them over.
func TestMirrorFolderNotThere(t *testing.T) {
	args, _ := demoProject(t)
	gone := filepath.Join(t.TempDir(), "usb", "updeb-mirror", "releases.example.org")
	code, out := buildFromMirror(t, args, "  - {prefix: https://releases.example.org/, to: file://"+gone+"/}\n", "hello")
	if code != exitNetwork || !strings.Contains(out, "the mirror folder "+gone+" does not exist (a stick or share not mounted? a mistyped to: in mirrors:?)") ||
		!strings.Contains(out, "hint: mount the stick or share that holds the mirror folder") || strings.Contains(out, "bring it over again") {
		t.Errorf("build: exit %d, want %d and the folder named as not there\n%s", code, exitNetwork, out)
	}
}

// exportedWithACopy exports the demo's hello into a new folder, puts
// there a temporary copy of pingd as an export writes one, and returns the
// folder and the copy (slash-separated, below the folder).
func exportedWithACopy(t *testing.T) (dir, copy string) {
	t.Helper()
	args, _ := demoProject(t)
	dir = filepath.Join(t.TempDir(), "updeb-mirror")
	if code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "--arch", "amd64")...); code != 0 {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	copy = "releases.example.org/pingd/v0.9.1/.pingd.amd64.tmp-4242-0"
	if err := os.MkdirAll(filepath.Join(dir, path.Dir(copy)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, copy), []byte("half a copy"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, copy
}

// TestMirrorVerifyNamesALeftover: verify of a folder an export was killed
// in while copying names the temporary copy it left as that, which the
// next export removes: it was an unlisted file "not checked", with the
// advice on how exports merge, as if it were a file to carry.
func TestMirrorVerifyNamesALeftover(t *testing.T) {
	dir, left := exportedWithACopy(t) // kill -9 while it copied
	code, out, stderr := runCLI(t, "mirror", "verify", dir)
	if code != 0 || !strings.Contains(out, "leftover "+left+" (a temporary copy of an export that was stopped: the next export into the folder removes it)\n") ||
		strings.Contains(out, "unlisted") || strings.Contains(out, "not in the manifest") {
		t.Errorf("mirror verify: exit %d\n%s%s", code, out, stderr)
	}
}

// TestMirrorExportFileAndFolder: recipes whose URLs need one path of the
// folder as a file and as a folder (https://h/x.tar.gz and
// https://h/x.tar.gz/y, which a web server serves both) are refused before
// anything is written, naming both, as two URLs at one path are: a folder
// mirror cannot serve both. The export wrote the files of one, then
// stopped at the other with "refusing to write through a symlink" and the
// advice to remove the file (a listed one) and export again, which met the
// same.
func TestMirrorExportFileAndFolder(t *testing.T) {
	args, upstream := demoProject(t)
	const tarball = "https://releases.example.org/hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz"
	helloFrom(t, args, "hello-below", tarball+"/")
	// The files below the tarball's URL come from a copy of the demo's
	// upstream (the longest mirrors: prefix wins).
	below := filepath.Join(t.TempDir(), "below")
	testenv.Run(t, "cp", "-a", upstream, below)
	cfg, err := os.ReadFile(args[1])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(args[1], []byte(strings.Replace(string(cfg), "mirrors:\n", "mirrors:\n  - {prefix: "+tarball+"/, to: file://"+below+"/}\n", 1)), 0o644)
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "hello", "hello-below", "--arch", "amd64")...)
	want := tarball + " and " + tarball + "/hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz"
	if code != exitCheck || !strings.Contains(stderr, want) || !strings.Contains(stderr, "as a file and as a folder") {
		t.Errorf("mirror export: exit %d, want %d and %q\n%s%s", code, exitCheck, want, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "releases.example.org")); !os.IsNotExist(err) {
		t.Errorf("the refused export wrote into the folder: %v", err)
	}
}

// TestMirrorVerifyWhileExporting: verify of a folder an export is writing
// into says so, and names its copy in progress as that, not as the
// leftover of an export that was stopped (which it called it, for the
// next export to remove); --json says "exporting": true.
func TestMirrorVerifyWhileExporting(t *testing.T) {
	dir, copying := exportedWithACopy(t)
	l, err := lockfile.AcquireDir(t.Context(), dir, 0) // the running export's
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	code, out, stderr := runCLI(t, "mirror", "verify", dir)
	if code != 0 || !strings.Contains(out, "an export into "+dir+" is running: what it has not written and listed yet is not checked; verify again once it ends\n") ||
		!strings.Contains(out, "copying  "+copying+" (a temporary copy the running export writes)\n") || strings.Contains(out, "leftover") {
		t.Errorf("mirror verify: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, _ := runCLI(t, "mirror", "verify", dir, "--json"); code != 0 || !strings.Contains(out, `"exporting": true`) {
		t.Errorf("mirror verify --json: exit %d\n%s", code, out)
	}
}

// TestMirrorEmptyDir: an empty DIR (a script's unset variable: updeb
// mirror export "$MIRROR") is refused, exit 2, before anything is fetched
// or written: export wrote the mirror into the working folder (a recipes
// checkout, a home folder), and verify said "open : no such file".
func TestMirrorEmptyDir(t *testing.T) {
	args, _ := demoProject(t)
	wd := t.TempDir()
	t.Chdir(wd)
	for _, cmd := range [][]string{append(args, "mirror", "export", "", "hello", "--arch", "amd64"), {"mirror", "verify", ""}} {
		code, stdout, stderr := runCLI(t, cmd...)
		if code != exitUsage || !strings.Contains(stderr, "DIR is empty") || !strings.Contains(stderr, "an unset variable?") {
			t.Errorf("updeb %q: exit %d, want %d and DIR is empty\n%s%s", cmd, code, exitUsage, stdout, stderr)
		}
	}
	if left, _ := os.ReadDir(wd); len(left) != 0 {
		t.Errorf("the working folder holds %d file(s) after the refused export", len(left))
	}
	if blobs, _ := filepath.Glob(filepath.Join(args[5], "sha256", "*", "*")); len(blobs) > 0 {
		t.Errorf("mirror export \"\" fetched %d file(s) before refusing it", len(blobs))
	}
}
