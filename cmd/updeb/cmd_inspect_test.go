package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/strictjson"
)

func TestInspectCmd(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "x.deb")
	_, err := deb.Write(context.Background(), good, &deb.Package{
		Control: deb.Control{Package: "xx", Version: "1.0-1", Architecture: "all", Maintainer: "m <m@x.invalid>", Summary: "s"},
		Entries: []deb.Entry{{Path: "/usr/bin/x", Type: deb.TypeFile, Mode: 0o755, Size: 2,
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("hi")), nil }}},
		SourceDateEpoch: time.Unix(1723636800, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.deb")
	if err := os.WriteFile(bad, []byte("!<arch>\nnope"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.deb")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A file this user cannot open is exit 2, as a missing one: a .deb
	// without read permission, or for root, whom modes do not stop, a
	// write-only sysctl (mode 0200: procfs refuses to read it to root too).
	unreadable := filepath.Join(dir, "unreadable.deb")
	if err := os.WriteFile(unreadable, nil, 0); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		unreadable = "/proc/sys/vm/drop_caches"
	}
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"inspect", unreadable}, 2, "", "open " + unreadable + ": permission denied\nupdeb: hint: name a .deb this user can read"},
		{[]string{"inspect", good}, 0, "  -rwxr-xr-x root/root 2 2024-08-14 12:00:00 ./usr/bin/x\n", ""},
		{[]string{"inspect", good}, 0, "  data.tar.xz     ", ""},
		{[]string{"inspect", "--json", good}, 0, `"path": "./usr/bin/x"`, ""},
		{[]string{"inspect", bad}, 2, "", "updeb: error: " + bad + ": deb: malformed package: ar: truncated member header at offset 8 (4 bytes left)\n"},
		{[]string{"inspect", filepath.Join(dir, "missing.deb")}, 2, "", "no such file or directory"},
		{[]string{"inspect", dir}, 2, "", "not a regular file"},
		{[]string{"inspect", fifo}, 2, "", "not a regular file"},
		{[]string{"inspect"}, 2, "", "inspect takes one FILE.deb, found 0 arguments"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%v: exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", tt.args, code, tt.code, stdout.String(), stderr.String())
		}
		if code == 0 && tt.args[1] == "--json" {
			var info deb.Info
			if err := json.Unmarshal(stdout.Bytes(), &info); err != nil || info.Control.Value("Package") != "xx" {
				t.Errorf("--json: %v %+v", err, info)
			}
		}
	}
}

// Special bits show as ls -l and dpkg-deb -c show them.
func TestModeString(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		mode fs.FileMode
		want string
	}{
		{"file", 0o755 | fs.ModeSetuid, "-rwsr-xr-x"},
		{"file", 0o755 | fs.ModeSetgid, "-rwxr-sr-x"},
		{"file", 0o660 | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky, "-rwSrwS--T"},
		{"dir", 0o777 | fs.ModeSticky, "drwxrwxrwt"},
		{"dir", 0o733 | fs.ModeSticky, "drwx-wx-wt"},
		{"file", 0o440, "-r--r-----"},
		{"symlink", 0o777, "lrwxrwxrwx"},
	} {
		if got := modeString(deb.FileInfo{Type: tc.typ, Mode: tc.mode}); got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.typ, tc.mode, got, tc.want)
		}
	}
}

// TestInspectEscapesNames: a hostile .deb's file names, symlink targets
// and owner names reach the terminal escaped (pkg/termtext), as dpkg-deb -c
// escapes them: an OSC or CSI sequence in a name must not retitle the
// window, write the clipboard or clear the screen of whoever inspects the
// package. A backslash is printed \\, as dpkg-deb -c prints it: a file
// named with the text of the escaped name must not print as that name.
// --json keeps the bytes (JSON escapes them).
func TestInspectEscapesNames(t *testing.T) {
	const evil = "a\x1b]0;owned\x07\x1b[2J\u202e\u009b2Jb"
	const evilText = `a\x1b]0;owned\a\x1b[2J\u202e\u009b2Jb` // how evil is printed
	file := filepath.Join(t.TempDir(), "evil.deb")
	_, err := deb.Write(context.Background(), file, &deb.Package{
		Control: deb.Control{Package: "evil", Version: "1.0-1", Architecture: "all", Maintainer: "m <m@x.invalid>", Summary: "s"},
		Entries: []deb.Entry{
			{Path: "/usr/share/evil/" + evil, Type: deb.TypeFile, Mode: 0o644, Size: 2, Owner: deb.Owner{User: "uxxxxxxxxxx", UID: 1},
				Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("hi")), nil }},
			{Path: "/usr/share/evil/link", Type: deb.TypeSymlink, Mode: 0o777, Linkname: evil},
			{Path: "/usr/share/evil/" + evilText, Type: deb.TypeFile, Mode: 0o644, Size: 2,
				Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("hi")), nil }},
		},
		SourceDateEpoch: time.Unix(1723636800, 0),
		Compression:     deb.CompressionNone,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The owner's name: what deb.Write refuses to write, a hand-made
	// archive carries (its tar header's checksum made again).
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte("uxxxxxxxxxx\x00"))
	if at < 265 {
		t.Fatal("no owner name in the archive")
	}
	copy(b[at:], "u\x1b[2Jxxxxx")
	h := b[at-265 : at-265+512]
	copy(h[148:156], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:], fmt.Sprintf("%06o\x00 ", sum))
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"inspect", file}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	out := stdout.String()
	raw := func(out string) {
		t.Helper()
		for i, r := range out {
			if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || r == '\u202e' {
				t.Fatalf("inspect printed %q at byte %d of its output:\n%q", r, i, out)
			}
		}
	}
	raw(out)
	for _, want := range []string{"./usr/share/evil/" + evilText + "\n", `-> a\x1b]0;owned`, `u\x1b[2Jxxxxxx/root`,
		"./usr/share/evil/" + strings.ReplaceAll(evilText, `\`, `\\`) + "\n"} {
		if strings.Count(out, want) != 1 {
			t.Errorf("the output has %d times %q, want once:\n%s", strings.Count(out, want), want, out)
		}
	}
	stdout.Reset()
	// --json too: encoding/json writes the bidi override and the C1 CSI
	// as they are.
	if code := run(context.Background(), []string{"inspect", "--json", file}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), `a\u001b]0;owned\u0007\u001b[2J\u202e\u009b2Jb`) {
		t.Errorf("--json: exit %d, want the name's bytes JSON-escaped:\n%s", code, stdout.String())
	}
	raw(stdout.String())
}

// TestInspectJSONNonUTF8Names: names that are not UTF-8 (which dpkg and
// updeb's builder take) keep their bytes in --json, escaped as in the text
// form (\xff): encoding/json would turn every such byte into U+FFFD, so
// a\xff and a\xfe came out as one name, twice a key of "md5sums", and two
// builds differing in that byte diffed equal.
func TestInspectJSONNonUTF8Names(t *testing.T) {
	file := filepath.Join(t.TempDir(), "latin1.deb")
	hi := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("hi")), nil }
	_, err := deb.Write(context.Background(), file, &deb.Package{
		Control: deb.Control{Package: "latin1", Version: "1.0-1", Architecture: "all", Maintainer: "m <m@x.invalid>", Summary: "s"},
		Entries: []deb.Entry{
			{Path: "/usr/share/latin1/a\xff", Type: deb.TypeFile, Mode: 0o644, Size: 2, Open: hi},
			{Path: "/usr/share/latin1/a\xfe", Type: deb.TypeFile, Mode: 0o644, Size: 2, Open: hi},
			{Path: "/usr/share/latin1/link", Type: deb.TypeSymlink, Mode: 0o777, Linkname: "a\xfe"},
		},
		SourceDateEpoch: time.Unix(1723636800, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"inspect", "--json", file}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	out := stdout.String()
	if err := strictjson.Check(stdout.Bytes()); err != nil {
		t.Errorf("--json is not one reading for every reader: %v\n%s", err, out)
	}
	for _, want := range []string{`"./usr/share/latin1/a\\xff"`, `"./usr/share/latin1/a\\xfe"`, `"usr/share/latin1/a\\xff": "`, `"usr/share/latin1/a\\xfe": "`, `"linkname": "a\\xfe"`} {
		if !strings.Contains(out, want) {
			t.Errorf("--json lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\ufffd") {
		t.Errorf("--json turned bytes into U+FFFD:\n%s", out)
	}
}
