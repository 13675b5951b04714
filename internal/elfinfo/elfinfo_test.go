package elfinfo

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// goBinary is the go command's own binary: a static, unstripped Go program.
func goBinary(t *testing.T) string {
	p, err := exec.LookPath(testenv.RequireTool(t, "go")[0])
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// sniff feeds data to a Sniffer in chunks of n bytes.
func sniff(data []byte, n int) Info {
	var s Sniffer
	for len(data) > 0 {
		k := min(n, len(data))
		s.Write(data[:k])
		data = data[k:]
	}
	return s.Info()
}

// reference is what debug/elf says, read with random access.
func reference(data []byte) (Info, bool) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return Info{}, false
	}
	i := Info{ELF: true, Known: true, LibsKnown: true, Type: uint16(f.Type), Machine: uint16(f.Machine)}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_SYMTAB {
			i.SymbolTable = true
		}
	}
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			i.Interp = true
		case elf.PT_GNU_RELRO:
			i.RELRO = true
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		i.Needed, i.Libraries = true, libs
	}
	for _, tag := range []elf.DynTag{elf.DT_RPATH, elf.DT_RUNPATH} {
		paths, _ := f.DynString(tag)
		for _, p := range paths {
			i.SearchPath = append(i.SearchPath, strings.Split(p, ":")...)
		}
	}
	flags1, _ := f.DynValue(elf.DT_FLAGS_1)
	for _, v := range flags1 {
		i.BindNow, i.PIE = i.BindNow || v&uint64(elf.DF_1_NOW) != 0, i.PIE || v&uint64(elf.DF_1_PIE) != 0
	}
	flags, _ := f.DynValue(elf.DT_FLAGS)
	bindNow, _ := f.DynValue(elf.DT_BIND_NOW)
	for _, v := range flags {
		i.BindNow = i.BindNow || v&uint64(elf.DF_BIND_NOW) != 0
	}
	i.BindNow = i.BindNow || len(bindNow) > 0
	syms, _ := f.DynamicSymbols()
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			continue
		}
		if n, ok := strings.CutPrefix(s.Name, "__"); ok && strings.HasSuffix(n, "_chk") && hardenedFunctions[strings.TrimSuffix(n, "_chk")] {
			i.Fortified = true
		} else if hardenedFunctions[s.Name] {
			i.Unfortified = true
		}
	}
	if needs, err := f.DynamicVersionNeeds(); err == nil {
		for _, n := range needs {
			for _, d := range n.Needs {
				i.Versions = append(i.Versions, Version{File: n.Name, Name: d.Dep})
			}
		}
	}
	return i, true
}

// TestRealBinaries: binaries on this machine, judged by file(1), as lintian
// does ("not stripped", "statically linked" executables), and by debug/elf,
// in every chunking.
func TestRealBinaries(t *testing.T) {
	testenv.RequireTool(t, "file", "gcc")
	goBin := goBinary(t)
	stripped := filepath.Join(t.TempDir(), "stripped")
	testenv.Run(t, "sh", "-c", "cp "+goBin+" "+stripped+" && strip "+stripped)
	// gcc-built, searching libraries in folders of its own: DT_RPATH
	// (--disable-new-dtags), DT_RUNPATH (Debian's default).
	dir := t.TempDir()
	rpath, runpath := filepath.Join(dir, "rpath"), filepath.Join(dir, "runpath")
	src := filepath.Join(dir, "hello.c")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "gcc", "-o", rpath, src, "-Wl,--disable-new-dtags,-rpath,/opt/x/lib:$ORIGIN/../lib")
	testenv.Run(t, "gcc", "-o", runpath, src, "-Wl,--enable-new-dtags,-rpath,/usr/local/lib")
	shared, _ := filepath.Glob("/usr/lib/*-linux-gnu/libc.so.6")
	// Other architectures' dynamic executables, which Go's source tree
	// carries (riscv64 with version needs; 32-bit i386, with DT_HASH and
	// Elf32 symbols): read the same way.
	testdata := filepath.Join(filepath.Dir(filepath.Dir(goBin)), "src/debug/elf/testdata")
	files := append([]string{goBin, stripped, rpath, runpath, "/bin/ls", "/bin/sh", testenv.CgoBinary(t),
		filepath.Join(testdata, "gcc-riscv64-linux-exec"), filepath.Join(testdata, "gcc-386-freebsd-exec")}, shared...)
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("file", "-L", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		desc := string(out)
		want, ok := reference(data)
		if !ok {
			t.Fatalf("%s: debug/elf cannot read it", path)
		}
		for _, n := range []int{1, 7, 4096, 1 << 20, len(data)} {
			got := sniff(data, n)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s in %d-byte writes: %+v, debug/elf says %+v", path, n, got, want)
			}
		}
		if got := sniff(data, 1<<20); got.SymbolTable != strings.Contains(desc, "not stripped") ||
			got.Static() != (strings.Contains(desc, "statically linked") && strings.Contains(desc, " executable") && !strings.Contains(desc, "pie executable")) {
			t.Errorf("%s: %+v (static %v), file(1) says %s", path, got, got.Static(), desc)
		}
	}
}

func TestNotELF(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("#!/bin/sh\necho hi\n"), []byte("\x7fELF"), append([]byte("\x7fELF\x03\x01"), make([]byte, 100)...)} {
		if got := sniff(data, 3); got.ELF || got.Known {
			t.Errorf("%q: %+v", data, got)
		}
	}
}

// TestTruncated: a binary cut before its section headers (at the end of a
// GNU ld binary) is not known.
func TestTruncated(t *testing.T) {
	data, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	if got := sniff(data[:len(data)/2], 4096); !got.ELF || got.Known {
		t.Errorf("half a binary: %+v, want ELF and not known", got)
	}
}

// FuzzSniffer: whatever the bytes and the chunking, no panic, and what the
// sniffer claims to know agrees with debug/elf.
func FuzzSniffer(f *testing.F) {
	for _, p := range []string{"/bin/ls", "/bin/sh"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data[:min(len(data), 1<<16)], uint16(100))
		}
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		got := sniff(data, max(int(chunk), 1))
		if !got.Known {
			return
		}
		want, ok := reference(data)
		if ok && (got.Type != want.Type || got.SymbolTable != want.SymbolTable || got.Interp != want.Interp || got.Needed != want.Needed || got.RELRO != want.RELRO) {
			t.Errorf("sniffer %+v, debug/elf %+v", got, want)
		}
		if ok && got.LibsKnown && (!reflect.DeepEqual(got.Libraries, want.Libraries) || !reflect.DeepEqual(got.Versions, want.Versions) || !reflect.DeepEqual(got.SearchPath, want.SearchPath)) {
			t.Errorf("sniffer %+v, debug/elf %+v", got, want)
		}
	})
}

// TestVersionNeedsHostile: a version need that claims 65535 versions with
// the chain ending at the first (vna_next 0) is read as debug/elf reads
// it, one version, not the first 65535 times over; one of a version other
// than 1 is not read.
func TestVersionNeedsHostile(t *testing.T) {
	data, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	vn := f.SectionByType(elf.SHT_GNU_VERNEED)
	if vn == nil {
		t.Fatal("/bin/ls has no version needs")
	}
	off := vn.Offset
	f.ByteOrder.PutUint16(data[off+2:], 0xffff)
	aux := off + uint64(f.ByteOrder.Uint32(data[off+8:]))
	f.ByteOrder.PutUint32(data[aux+12:], 0)
	want, _ := reference(data)
	for _, n := range []int{1 << 20, len(data)} {
		if got := sniff(data, n); !reflect.DeepEqual(got, want) {
			t.Errorf("in %d-byte writes: %d version needs, debug/elf reads %d", n, len(got.Versions), len(want.Versions))
		}
	}
	// A Verneed of another version than 1, which ld.so refuses to load,
	// leaves them unknown.
	f.ByteOrder.PutUint16(data[off:], 2)
	if got := sniff(data, 4096); got.LibsKnown {
		t.Errorf("vn_version 2: %+v, want the libraries unknown", got)
	}
}

// dynELF is a minimal ELF64 executable: one PT_LOAD of the whole file and
// a PT_DYNAMIC after a string table that holds needed, each a DT_NEEDED.
func dynELF(needed ...string) []byte {
	const base = 0x400000
	le := binary.LittleEndian
	strtab := []byte{0}
	var offs []uint64
	for _, n := range needed {
		offs = append(offs, uint64(len(strtab)))
		strtab = append(append(strtab, n...), 0)
	}
	strOff := uint64(64 + 2*56)
	dynOff := (strOff + uint64(len(strtab)) + 7) &^ 7
	var dyn []byte
	entry := func(tag, val uint64) { dyn = le.AppendUint64(le.AppendUint64(dyn, tag), val) }
	for _, o := range offs {
		entry(uint64(elf.DT_NEEDED), o)
	}
	entry(uint64(elf.DT_STRTAB), base+strOff)
	entry(uint64(elf.DT_STRSZ), uint64(len(strtab)))
	entry(uint64(elf.DT_NULL), 0)
	size := dynOff + uint64(len(dyn))
	b := make([]byte, size)
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[0x10:], uint16(elf.ET_EXEC))
	le.PutUint16(b[0x12:], uint16(elf.EM_X86_64))
	le.PutUint32(b[0x14:], 1)
	le.PutUint64(b[0x20:], 64) // e_phoff
	le.PutUint16(b[0x34:], 64)
	le.PutUint16(b[0x36:], 56)
	le.PutUint16(b[0x38:], 2)
	le.PutUint16(b[0x3a:], 64)
	ph := func(at int, typ uint32, off, sz uint64) {
		p := b[64+56*at:]
		le.PutUint32(p, typ)
		le.PutUint32(p[4:], 4)
		le.PutUint64(p[8:], off)
		le.PutUint64(p[16:], base+off)
		le.PutUint64(p[24:], base+off)
		le.PutUint64(p[32:], sz)
		le.PutUint64(p[40:], sz)
	}
	ph(0, uint32(elf.PT_LOAD), 0, size)
	ph(1, uint32(elf.PT_DYNAMIC), dynOff, uint64(len(dyn)))
	copy(b[strOff:], strtab)
	copy(b[dynOff:], dyn)
	return b
}

// TestLongNames: a name is read up to 4 KiB, however many entries point
// into a string table without an end (a MiB scanned for each of them
// would take minutes); a longer one leaves the libraries unknown.
func TestLongNames(t *testing.T) {
	if got := sniff(dynELF("libc.so.6", strings.Repeat("a", 100)), 4096); !got.LibsKnown || !reflect.DeepEqual(got.Libraries, []string{"libc.so.6", strings.Repeat("a", 100)}) {
		t.Errorf("a 100-byte soname: %+v", got)
	}
	if got := sniff(dynELF("libc.so.6", strings.Repeat("a", 5000)), 4096); !got.Known || got.LibsKnown || got.Libraries != nil {
		t.Errorf("a 5000-byte soname: %+v, want known and its libraries not", got)
	}
}

// TestAddressesWrap: a PT_LOAD whose file offset puts the string table at
// the top of the 64-bit range (offset + size wraps around to a few bytes)
// leaves the libraries unknown; it made the sniffer slice out of range.
func TestAddressesWrap(t *testing.T) {
	b := dynELF("libc.so.6")
	strOff := uint64(64 + 2*56) // dynELF's string table
	binary.LittleEndian.PutUint64(b[64+8:], -strOff-4)
	if got := sniff(b, 4096); got.LibsKnown {
		t.Errorf("%+v, want the libraries unknown", got)
	}
}
