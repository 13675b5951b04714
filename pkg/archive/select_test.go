package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// tree writes files (path -> body, mode) under a new directory and returns it.
func tree(t *testing.T, files map[string]string, modes map[string]fs.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := modes[name]
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // the umask must not decide
			t.Fatal(err)
		}
	}
	return dir
}

// TestGNUTar reads archives made by the real GNU tar and zip in the layouts of
// real upstreams (see /work/shared/upstream/ARTIFACTS.md).
func TestGNUTar(t *testing.T) {
	testenv.RequireTool(t, "tar", "xz")
	long := "kubernetes/" + strings.Repeat("very-long-directory-name/", 6) + "kubelet"
	tests := []struct {
		name   string
		files  map[string]string
		modes  map[string]fs.FileMode
		args   []string // tar flags after -C DIR; the archive is OUT
		kind   Kind
		want   []string
		expect []got
	}{
		{
			name:  "CNI plugins: flat ./ names, tgz",
			files: map[string]string{"bridge": "bridge-bin", "host-local": "host-local-bin", "loopback": "loopback-bin", "LICENSE": "Apache-2.0"},
			modes: map[string]fs.FileMode{"bridge": 0o755, "host-local": 0o755, "loopback": 0o755},
			args:  []string{"--sort=name", "-czf", "OUT", "."},
			kind:  Tgz,
			want:  []string{"loopback", "./bridge"},
			expect: []got{
				{Member{Name: "bridge", Size: 10, Mode: 0o755}, "bridge-bin"},
				{Member{Name: "loopback", Size: 12, Mode: 0o755}, "loopback-bin"},
			},
		},
		{
			name:   "helm: linux-amd64/helm, tar.gz",
			files:  map[string]string{"linux-amd64/helm": "helm-binary", "linux-amd64/LICENSE": "Apache", "linux-amd64/README.md": "# Helm"},
			modes:  map[string]fs.FileMode{"linux-amd64/helm": 0o755},
			args:   []string{"--sort=name", "-czf", "OUT", "linux-amd64"},
			kind:   TarGz,
			want:   []string{"linux-amd64/helm"},
			expect: []got{{Member{Name: "linux-amd64/helm", Size: 11, Mode: 0o755}, "helm-binary"}},
		},
		{
			name: "kubernetes server: kubernetes/server/bin/*, tar.gz with unwanted image tars",
			files: map[string]string{
				"kubernetes/server/bin/kubelet": "kubelet", "kubernetes/server/bin/kube-apiserver": "apiserver",
				"kubernetes/server/bin/kube-apiserver.tar": strings.Repeat("image layer ", 10000), "kubernetes/LICENSES": "licenses",
			},
			modes: map[string]fs.FileMode{"kubernetes/server/bin/kubelet": 0o755, "kubernetes/server/bin/kube-apiserver": 0o755},
			args:  []string{"--sort=name", "-czf", "OUT", "kubernetes"},
			kind:  TarGz,
			want:  []string{"kubernetes/server/bin/kubelet", "kubernetes/server/bin/kube-apiserver"},
			expect: []got{
				{Member{Name: "kubernetes/server/bin/kube-apiserver", Size: 9, Mode: 0o755}, "apiserver"},
				{Member{Name: "kubernetes/server/bin/kubelet", Size: 7, Mode: 0o755}, "kubelet"},
			},
		},
		{
			name:   "etcd: tar.xz made by tar -cJf",
			files:  map[string]string{"etcd-v3.5.0-linux-amd64/etcd": "etcd", "etcd-v3.5.0-linux-amd64/etcdctl": "etcdctl"},
			modes:  map[string]fs.FileMode{"etcd-v3.5.0-linux-amd64/etcdctl": 0o755},
			args:   []string{"--sort=name", "-cJf", "OUT", "etcd-v3.5.0-linux-amd64"},
			kind:   TarXz,
			want:   []string{"etcd-v3.5.0-linux-amd64/etcdctl"},
			expect: []got{{Member{Name: "etcd-v3.5.0-linux-amd64/etcdctl", Size: 7, Mode: 0o755}, "etcdctl"}},
		},
		{
			name:   "GNU long name (--format=gnu), plain tar",
			files:  map[string]string{long: "long"},
			args:   []string{"--format=gnu", "-cf", "OUT", "kubernetes"},
			kind:   Tar,
			want:   []string{long},
			expect: []got{{Member{Name: long, Size: 4, Mode: 0o644}, "long"}},
		},
		{
			name:   "PAX long name (--format=posix), tar.gz",
			files:  map[string]string{long: "long"},
			args:   []string{"--format=posix", "-czf", "OUT", "kubernetes"},
			kind:   TarGz,
			want:   []string{"./" + long},
			expect: []got{{Member{Name: long, Size: 4, Mode: 0o644}, "long"}},
		},
		{
			name:   "setuid bit kept in Mode",
			files:  map[string]string{"bin/tool": "t"},
			modes:  map[string]fs.FileMode{"bin/tool": 0o755 | fs.ModeSetuid},
			args:   []string{"-cf", "OUT", "bin"},
			kind:   Tar,
			want:   []string{"bin/tool"},
			expect: []got{{Member{Name: "bin/tool", Size: 1, Mode: 0o755 | fs.ModeSetuid}, "t"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, tc.files, tc.modes)
			out := filepath.Join(t.TempDir(), "artifact")
			args := []string{"-C", dir}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "OUT", out))
			}
			testenv.Run(t, "tar", args...)
			res, err := collect(t, out, tc.kind, tc.want, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res, tc.expect) {
				t.Errorf("got  %+v\nwant %+v", res, tc.expect)
			}
		})
	}
}

// TestTarWriters: the tar.gz and tar.xz that GNU tar, bsdtar (macOS's tar)
// and Python's tarfile write, to a file or to a pipe, are read. bsdtar pads
// what it writes to a pipe with zeros to a whole 10 KiB block, after the
// gzip member or the xz stream: gzip -d, xz -d, GNU tar and bsdtar read both.
func TestTarWriters(t *testing.T) {
	testenv.RequireTool(t, "tar", "bsdtar", "python3", "xz")
	dir := tree(t, map[string]string{"bin/tool": strings.Repeat("tool binary ", 5000), "README": "readme"}, map[string]fs.FileMode{"bin/tool": 0o755})
	const py = `import sys, tarfile
with tarfile.open(fileobj=sys.stdout.buffer, mode=sys.argv[1]) as t:
    t.add("bin"); t.add("README")`
	for _, tc := range []struct {
		name string
		kind Kind
		cmd  string
	}{
		{"GNU tar -czf", TarGz, `tar -czf "$OUT" bin README`},
		{"GNU tar -cJf", TarXz, `tar -cJf "$OUT" bin README`},
		{"bsdtar -czf", TarGz, `bsdtar -czf "$OUT" bin README`},
		{"bsdtar -czf to a pipe: zeros after the gzip member", TarGz, `bsdtar -czf - bin README | cat > "$OUT"`},
		{"bsdtar -cJf to a pipe: zeros after the xz stream", TarXz, `bsdtar -cJf - bin README | cat > "$OUT"`},
		{"Python tarfile w|gz", TarGz, `python3 -c "$PY" 'w|gz' > "$OUT"`},
		{"Python tarfile w|xz", TarXz, `python3 -c "$PY" 'w|xz' > "$OUT"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "a")
			testenv.Run(t, "sh", "-c", `cd "$1" && OUT=$2 PY=$3 && eval "$4"`, "sh", dir, out, py, tc.cmd)
			res, err := collect(t, out, tc.kind, []string{"bin/tool", "README"}, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 2 || res[0].body != strings.Repeat("tool binary ", 5000) || res[1].body != "readme" {
				t.Errorf("got %d members, the first %+v of %d bytes", len(res), res[0].m, len(res[0].body))
			}
		})
	}
}

// TestGNUTarSparse: GNU tar's sparse files (old GNU and PAX formats) are
// refused when wanted and skipped when not.
func TestGNUTarSparse(t *testing.T) {
	testenv.RequireTool(t, "tar")
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("data"), 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("plain"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"gnu", "posix"} {
		out := filepath.Join(t.TempDir(), "s.tar")
		testenv.Run(t, "tar", "-C", dir, "--format="+format, "-S", "-cf", out, "sparse", "plain")
		_, err := collect(t, out, Tar, []string{"sparse"}, Limits{})
		if !errors.Is(err, ErrSparse) || !errors.Is(err, ErrNotRegular) || !errors.Is(err, ErrUnsafe) {
			t.Fatalf("%s: error %v, want ErrSparse (an ErrNotRegular, an ErrUnsafe)", format, err)
		}
		if want := `archive ` + out + `: entry "sparse": wanted as a regular file, but it is a sparse file`; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: message\n got %s\nwant %s", format, err, want)
		}
		res, err := collect(t, out, Tar, []string{"plain"}, Limits{})
		if err != nil || len(res) != 1 || res[0].body != "plain" {
			t.Errorf("%s: unwanted sparse entry: got %+v, %v", format, res, err)
		}
	}
}

// TestInfoZip reads a zip made by Info-ZIP's zip, with a stored symlink.
func TestInfoZip(t *testing.T) {
	testenv.RequireTool(t, "zip")
	dir := tree(t, map[string]string{"tool/bin/tool": "tool-binary", "tool/README": "readme"}, map[string]fs.FileMode{"tool/bin/tool": 0o755})
	if err := os.Symlink("tool", filepath.Join(dir, "tool/bin/tool-latest")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tool.zip")
	cmd := []string{"-r", "-y", "-X", out, "tool"}
	testenv.Run(t, "sh", "-c", `cd "$1" && shift && exec zip -q "$@"`, "sh", dir, cmd[0], cmd[1], cmd[2], cmd[3], cmd[4])
	res, err := collect(t, out, Zip, []string{"tool/bin/tool", "tool/README"}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]got{}
	for _, g := range res {
		names[g.m.Name] = g
	}
	if g := names["tool/bin/tool"]; g.body != "tool-binary" || g.m.Mode != 0o755 || g.m.Size != 11 {
		t.Errorf("tool/bin/tool: got %+v", g)
	}
	if g := names["tool/README"]; g.body != "readme" || g.m.Mode != 0o644 {
		t.Errorf("tool/README: got %+v", g)
	}
	_, err = collect(t, out, Zip, []string{"tool/bin/tool-latest"}, Limits{})
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("wanted symlink: error %v, want ErrNotRegular", err)
	}
}

// pyZip writes the folder's bin/tool and README with Python's zipfile;
// argv: folder, output, compression, force_zip64, stream (to a file object
// that cannot seek: data descriptors).
const pyZip = `
import io, sys, zipfile
src, out, method, z64, stream = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5] == "1"
class Pipe(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
with open(out, "wb") as f, zipfile.ZipFile(Pipe(f) if stream else f, "w", method) as z:
    for name in ("bin/tool", "README"):
        with open(src + "/" + name, "rb") as r, z.open(name, "w", force_zip64=z64) as w:
            w.write(r.read())
`

// TestZipWriters: zips that the usual writers make, with data descriptors,
// zip64 records, a comment, data before the zip (self-extracting) or zeros
// after it, are read: their local headers agree with their central
// directories.
func TestZipWriters(t *testing.T) {
	testenv.RequireTool(t, "zip", "python3", "git", "7zz", "bsdtar")
	dir := tree(t, map[string]string{"bin/tool": strings.Repeat("tool binary ", 5000), "README": "readme"}, map[string]fs.FileMode{"bin/tool": 0o755})
	if err := os.Symlink("tool", filepath.Join(dir, "bin/tool-latest")); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "sh", "-c", `cd "$1" && git init -q && git add -A && git -c user.name=u -c user.email=u@example.org commit -qm v1`, "sh", dir)
	for _, tc := range []struct{ name, cmd string }{
		{"zip", `zip -qry "$OUT" bin README`},
		{"zip -9, stored", `zip -qry -9 "$OUT" bin && zip -qry -0 "$OUT" README`},
		{"zip to a pipe: data descriptors", `zip -qry - bin README > "$OUT"`},
		{"zip -fz: zip64", `zip -qry -fz "$OUT" bin README`},
		{"zip -fz to a pipe", `zip -qry -fz - bin README > "$OUT"`},
		{"self-extracting: a stub before the zip", `zip -qry x.zip bin README && cat /bin/true x.zip > "$OUT"`},
		{"self-extracting, offsets adjusted: zip -A", `zip -qry x.zip bin README && cat /bin/true x.zip > "$OUT" && zip -qA "$OUT"`},
		{"Python zipfile", `python3 -c "$PY" . "$OUT" 8 0 0`},
		{"Python zipfile, stored", `python3 -c "$PY" . "$OUT" 0 0 0`},
		{"Python zipfile to a pipe", `python3 -c "$PY" . "$OUT" 8 0 1`},
		{"Python zipfile, zip64", `python3 -c "$PY" . "$OUT" 8 1 0`},
		{"Python zipfile, zip64 to a pipe", `python3 -c "$PY" . "$OUT" 8 1 1`},
		{"git archive (GitHub's source zips): a comment", `git archive --format=zip -o "$OUT" HEAD`},
		{"7-Zip", `7zz a -tzip -bso0 "$OUT" bin README`},
		{"7-Zip, stored, UTF-8 names", `7zz a -tzip -mm=Copy -mcu=on -bso0 "$OUT" bin README`},
		{"bsdtar", `bsdtar --format zip -cf "$OUT" bin README`},
		{"bsdtar, zip64", `bsdtar --format zip --options zip:zip64 -cf "$OUT" bin README`},
		{"bsdtar to a pipe: zeros after the zip", `bsdtar --format zip -cf - bin README > "$OUT"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "a.zip")
			testenv.Run(t, "sh", "-c", `cd "$1" && rm -f x.zip && OUT=$2 PY=$3 && eval "$4"`, "sh", dir, out, pyZip, tc.cmd)
			res, err := collect(t, out, Zip, []string{"bin/tool", "README"}, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			bodies := map[string]string{}
			for _, g := range res {
				bodies[g.m.Name] = g.body
			}
			if len(res) != 2 || bodies["bin/tool"] != strings.Repeat("tool binary ", 5000) || bodies["README"] != "readme" {
				t.Errorf("got %d members, bin/tool of %d bytes, README %q", len(res), len(bodies["bin/tool"]), bodies["README"])
			}
		})
	}
}

// TestZipGoWriter: zips archive/zip writes are read: data descriptors,
// stored entries with sizes in the local header, zip64 local sizes, a
// comment, and data before the zip with offsets relative to the zip or to
// the file (Writer.SetOffset).
func TestZipGoWriter(t *testing.T) {
	const body = "tool binary"
	ents := []zent{{name: "bin/tool", body: body, mode: 0o755}, storedEnt("README", "readme", nil)}
	zip64 := zipBytes(t, storedEnt("bin/tool", body, zip64SizesField(uint64(len(body)), uint64(len(body)))))
	zip64 = patchZip(t, zip64, "PK\x03\x04", "bin/tool", func(h []byte) { copy(h[18:26], "\xff\xff\xff\xff\xff\xff\xff\xff") })
	stub := []byte("#!/bin/sh\nexec unzip \"$0\"\n")
	var adjusted bytes.Buffer
	adjusted.Write(stub)
	zw := zip.NewWriter(&adjusted)
	zw.SetOffset(int64(len(stub)))
	if w, err := zw.Create("bin/tool"); err != nil {
		t.Fatal(err)
	} else if _, err := w.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"descriptors and stored":        zipBytes(t, ents...),
		"zip64 local sizes":             zip64,
		"a stub before the zip":         append(stub, zipBytes(t, ents...)...),
		"a stub, offsets from the file": adjusted.Bytes(),
		// flags that change nothing read, in one header alone: the deflate
		// level (bits 1 and 2), UTF-8 for an ASCII name (bit 11)
		"deflate level in the local header": patchZip(t, zipBytes(t, ents...), "PK\x03\x04", "bin/tool", func(h []byte) { h[6] |= 6 }),
		"UTF-8 flag on an ASCII name":       patchZip(t, zipBytes(t, ents...), "PK\x03\x04", "bin/tool", func(h []byte) { h[7] |= 8 }),
	} {
		p := writeTemp(t, "a.zip", data)
		res, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
		if err != nil || len(res) != 1 || res[0].body != body {
			t.Errorf("%s: got %+v, %v", name, res, err)
		}
	}
}

func TestZipOrderAndModes(t *testing.T) {
	p := writeTemp(t, "a.zip", zipBytes(t,
		zent{name: "dist/", mode: fs.ModeDir | 0o755},
		zent{name: "dist/b", body: "bee", mode: 0o755},
		zent{name: "dist/a", body: "a"},
		zent{name: "dist/link", body: "a", mode: fs.ModeSymlink | 0o777}))
	res, err := collect(t, p, Zip, []string{"dist/a", "dist/b"}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	expect := []got{{Member{Name: "dist/b", Size: 3, Mode: 0o755}, "bee"}, {Member{Name: "dist/a", Size: 1, Mode: 0o644}, "a"}}
	if !reflect.DeepEqual(res, expect) {
		t.Errorf("got  %+v\nwant %+v", res, expect)
	}
}

func TestRaw(t *testing.T) {
	p := writeTemp(t, "cafe", []byte("runc binary"))
	res, err := collect(t, p, Raw, []string{""}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if expect := []got{{Member{Size: 11}, "runc binary"}}; !reflect.DeepEqual(res, expect) {
		t.Errorf("got %+v, want %+v", res, expect)
	}
	_, err = collect(t, p, Raw, []string{""}, Limits{MaxFileSize: 10})
	if want := `archive ` + p + `: size 11 bytes is above the 10-byte limit for one file (Limits.MaxFileSize)`; !errors.Is(err, ErrLimit) || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestCallbackContract: fn's error comes back unchanged; a member fn does not
// finish is still read to its end, so a corrupt end is reported.
func TestCallbackContract(t *testing.T) {
	data := tarBytes(t, file("a", "first"), file("b", "second"))
	p := writeTemp(t, "a.tar.gz", gzBytes(t, data))
	stop := errors.New("stop here")
	var calls []string
	err := Select(context.Background(), p, TarGz, []string{"a", "b"}, Limits{}, func(m Member, r io.Reader) error {
		calls = append(calls, m.Name)
		return stop
	})
	if err != stop || !reflect.DeepEqual(calls, []string{"a"}) {
		t.Errorf("got %v after calls %v; want the callback's own error after [a]", err, calls)
	}

	// A zip member whose CRC is wrong, read only partly by fn.
	zp := writeTemp(t, "a.zip", zipBytes(t, zent{raw: zipBadHeader("bin/tool", "hello world"), body: "hello world"}))
	err = Select(context.Background(), zp, Zip, []string{"bin/tool"}, Limits{}, func(m Member, r io.Reader) error {
		_, err := r.Read(make([]byte, 2))
		return err
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("partly read corrupt member: error %v, want ErrCorrupt", err)
	}
}

// TestKindFromName covers the suffixes; anything else is the caller's choice.
func TestKindFromName(t *testing.T) {
	for name, want := range map[string]Kind{
		"helm-v3.15.4-linux-amd64.tar.gz": TarGz, "cni-plugins-linux-amd64-v1.5.1.tgz": TarGz,
		"x.tar.xz": TarXz, "x.TXZ": TarXz, "x.tar": Tar, "x.zip": Zip, "runc.amd64": "", "calicoctl-linux-amd64": "", "x.gz": "",
	} {
		got, ok := KindFromName(name)
		if got != want || ok != (want != "") {
			t.Errorf("KindFromName(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func TestMissingHintManyFiles(t *testing.T) {
	var ents []tent
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "sub/kubelet"} {
		ents = append(ents, file(n, n))
	}
	ents = append(ents, tent{name: "dir/", typ: tar.TypeDir})
	p := writeTemp(t, "a.tar", tarBytes(t, ents...))
	_, err := collect(t, p, Tar, []string{"kubelet"}, Limits{})
	want := `archive ARCHIVE: not found: "kubelet"; the archive holds "sub/kubelet", "a", "b", "c", "d" and 3 more`
	if !errors.Is(err, ErrMissing) || msg(err, p) != want {
		t.Errorf("error %v\nwant %s", msg(err, p), want)
	}
}

// A missing name that the archive holds in another Unicode normalization
// (macOS writes é as e and a combining accent) prints the same as the
// archive's: the message shows both names' bytes. A name in another case
// is listed first among the archive's, however many files come before it.
func TestMissingHintLookalikes(t *testing.T) {
	var ents []tent
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "bin/Kubelet", "doc/cafe\u0301.txt"} {
		ents = append(ents, file(n, n))
	}
	p := writeTemp(t, "a.tar", tarBytes(t, ents...))
	_, err := collect(t, p, Tar, []string{"bin/kubelet", "doc/caf\u00e9.txt"}, Limits{})
	want := "archive ARCHIVE: not found: \"bin/kubelet\", \"doc/caf\u00e9.txt\"; the archive holds \"bin/Kubelet\", \"doc/cafe\u0301.txt\", \"a\", \"b\", \"c\" and 3 more; " +
		`"doc/caf\u00e9.txt" is written "doc/cafe\u0301.txt" in the archive (another Unicode normalization): write the recipe's path so`
	if !errors.Is(err, ErrMissing) || msg(err, p) != want {
		t.Errorf("error %v\nwant %s", msg(err, p), want)
	}
}

// TestGNUTarHardlinks: GNU tar stores the second name of a file as a
// hardlink to the first; a wanted hardlink is that file (its content, size
// and mode, under its own name), however many names point to it and
// whether or not the first name is wanted too. Names dpkg takes
// (backslashes, spaces, UTF-8) are read as they are. Both reads count
// against the same limits.
func TestGNUTarHardlinks(t *testing.T) {
	testenv.RequireTool(t, "tar")
	body := strings.Repeat("kubelet binary ", 100)
	dir := tree(t, map[string]string{"bin/kubelet": body, `units/system-systemd\x2dcryptsetup.slice`: "[Unit]\n", "docs/read me ünï.txt": "doc"},
		map[string]fs.FileMode{"bin/kubelet": 0o750})
	for _, l := range []string{"bin/kubelet-1.36", "bin/kubelet-latest", `units/alias\x2dname.slice`} {
		target := filepath.Join(dir, "bin/kubelet")
		if strings.HasPrefix(l, "units/") {
			target = filepath.Join(dir, `units/system-systemd\x2dcryptsetup.slice`)
		}
		if err := os.Link(target, filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "a.tar.gz")
	testenv.Run(t, "tar", "-C", dir, "--sort=name", "-czf", out, "bin", "docs", "units")
	listing := string(testenv.Run(t, "tar", "-tvzf", out))
	if !strings.Contains(listing, "bin/kubelet-1.36 link to bin/kubelet") || !strings.Contains(listing, "bin/kubelet-latest link to bin/kubelet") {
		t.Fatalf("GNU tar stored no hardlinks:\n%s", listing)
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"links only", []string{"bin/kubelet-latest", "bin/kubelet-1.36"}},
		{"links and target", []string{"bin/kubelet", "bin/kubelet-1.36", "bin/kubelet-latest", `units/alias\x2dname.slice`, "docs/read me ünï.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := collect(t, out, TarGz, tc.want, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]got{}
			for _, g := range res {
				byName[g.m.Name] = g
			}
			if len(byName) != len(tc.want) {
				t.Fatalf("got %d members, want %d: %+v", len(byName), len(tc.want), res)
			}
			for _, w := range tc.want {
				g := byName[w]
				wantBody, wantMode := body, fs.FileMode(0o750)
				switch {
				case strings.HasPrefix(w, "units/"):
					wantBody, wantMode = "[Unit]\n", 0o644
				case strings.HasPrefix(w, "docs/"):
					wantBody, wantMode = "doc", 0o644
				}
				if g.body != wantBody || g.m.Mode != wantMode || g.m.Size != int64(len(wantBody)) {
					t.Errorf("%s: got %+v (%d bytes), want %d bytes mode %v", w, g.m, len(g.body), len(wantBody), wantMode)
				}
			}
		})
	}
	// Three reads of the archive for two links to one file: a MaxTotal
	// that one read fits in, three do not, refuses it.
	one := int64(len(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", out)))
	if _, err := collect(t, out, TarGz, []string{"bin/kubelet"}, Limits{MaxTotal: one + one/2}); err != nil {
		t.Fatalf("one read of %d bytes under MaxTotal %d: %v", one, one+one/2, err)
	}
	_, err := collect(t, out, TarGz, []string{"bin/kubelet-1.36", "bin/kubelet-latest"}, Limits{MaxTotal: one + one/2})
	if !errors.Is(err, ErrLimit) {
		t.Errorf("three reads of %d bytes under MaxTotal %d: error %v, want ErrLimit", one, one+one/2, err)
	}
}

// A recipe path that names a folder the archive holds only through the
// paths of its files (GNU tar given the files, zip -D: no entry of its
// own) is not found, and the message says it is a folder and names a
// file in it, as it does when the folder has an entry (ErrNotRegular).
func TestMissingIsAFolder(t *testing.T) {
	testenv.RequireTool(t, "tar", "zip")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "linux-amd64"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"README.md", "linux-amd64/LICENSE", "linux-amd64/helm"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Run(t, "tar", "-C", dir, "-cf", filepath.Join(dir, "a.tar"), "README.md", "linux-amd64/LICENSE", "linux-amd64/helm")
	cmd := exec.Command("zip", "-q", "-D", filepath.Join(dir, "a.zip"), "README.md", "linux-amd64/LICENSE", "linux-amd64/helm")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zip: %v\n%s", err, out)
	}
	for _, kind := range []Kind{Tar, Zip} {
		p := filepath.Join(dir, "a."+string(kind))
		_, err := collect(t, p, kind, []string{"linux-amd64"}, Limits{})
		want := `archive ARCHIVE: not found: "linux-amd64"; the archive holds "README.md", "linux-amd64/LICENSE", "linux-amd64/helm"; "linux-amd64" is a folder in the archive, not a file (it holds "linux-amd64/LICENSE"): write the path of the file inside it`
		if !errors.Is(err, ErrMissing) || msg(err, p) != want {
			t.Errorf("%s: error\n got %s\nwant %s", kind, msg(err, p), want)
		}
	}
}

// A zip entry compressed with a method archive/zip does not read (zip -Z
// bzip2; unzip extracts it) is a valid zip that updeb does not unpack,
// not a corrupt download: the message names the method and what to do.
func TestZipMethodNotRead(t *testing.T) {
	testenv.RequireTool(t, "zip", "unzip")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("a tool, compressed with bzip2\n", 100)
	if err := os.WriteFile(filepath.Join(dir, "bin/tool"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "a.zip")
	cmd := exec.Command("zip", "-q", "-Z", "bzip2", p, "bin/tool")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zip: %v\n%s", err, out)
	}
	if out := testenv.Run(t, "unzip", "-p", p, "bin/tool"); string(out) != body {
		t.Fatalf("unzip extracts %q", out)
	}
	_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
	want := `archive ARCHIVE: entry "bin/tool": is compressed with bzip2 (zip method 12), which updeb's reader (archive/zip: stored and deflated entries only) does not read: a valid zip (unzip reads bzip2, 7-Zip the others), not a corrupt download: take the release's .tar.gz or .tar.xz, or a zip of deflated entries: zip: unsupported compression algorithm`
	if !errors.Is(err, ErrCorrupt) || msg(err, p) != want {
		t.Errorf("error\n got %s\nwant %s", msg(err, p), want)
	}
}

// A recipe path is a name, not a pattern: one written as a glob is not
// found, and the message names what it would have matched as one.
func TestMissingIsAGlob(t *testing.T) {
	p := writeTemp(t, "a.tar", tarBytes(t, file("README.md", "x"), file("linux-amd64/helm", "x"), file("linux-arm64/helm", "x")))
	_, err := collect(t, p, Tar, []string{"linux-*/helm"}, Limits{})
	want := `archive ARCHIVE: not found: "linux-*/helm"; the archive holds "linux-amd64/helm", "linux-arm64/helm", "README.md"; "linux-*/helm" is a name, not a pattern (as a glob, it matches "linux-amd64/helm" and 1 more): write the one file's path`
	if !errors.Is(err, ErrMissing) || msg(err, p) != want {
		t.Errorf("error\n got %s\nwant %s", msg(err, p), want)
	}
}
