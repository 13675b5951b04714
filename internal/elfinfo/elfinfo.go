// Package elfinfo learns what lintian's binary checks look at from a file's
// bytes as they stream past, without seeking and without keeping the file:
// whether it is ELF, its type, whether it has a symbol table (what file(1)
// calls "not stripped"), whether it needs shared libraries (DT_NEEDED) and
// which, with the symbol versions it needs of them (what dpkg-shlibdeps
// reads) and the folders it searches them in (RPATH, RUNPATH), and the
// hardening marks lintian looks for (RELRO, BIND_NOW).
// updeb writes a package in one pass from the archive it was downloaded in,
// so a binary's bytes are seen once, in order, on their way into the .deb.
//
// Only the ELF header, the program and section header tables and the dynamic
// segment are kept, each at most maxTable bytes. A table that lies before
// the header that locates it, or is larger than that, leaves the answer
// unknown (Info.Known false): callers then assume the worst. The dynamic
// segment names its strings and version needs by address, and they lie
// before it: at the start of the file (GNU ld, lld) or just before it (Go's
// own linker). So the first maxTable bytes and the maxTable bytes before the
// dynamic segment are kept too; names found elsewhere leave Info.LibsKnown
// false.
package elfinfo

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// ELF constants (the ELF specification; debug/elf names them too).
const (
	etExec       = 2          // ET_EXEC
	etDyn        = 3          // ET_DYN
	ptLoad       = 1          // PT_LOAD
	ptDynamic    = 2          // PT_DYNAMIC
	ptInterp     = 3          // PT_INTERP
	ptGNURelro   = 0x6474e552 // PT_GNU_RELRO
	shtSymtab    = 2          // SHT_SYMTAB
	dtNeeded     = 1          // DT_NEEDED
	dtStrtab     = 5          // DT_STRTAB
	dtStrsz      = 10         // DT_STRSZ
	dtFlags1     = 0x6ffffffb // DT_FLAGS_1
	dtFlags      = 30         // DT_FLAGS
	dtBindNow    = 24         // DT_BIND_NOW
	dfBindNow    = 8          // DF_BIND_NOW
	dtVerneed    = 0x6ffffffe // DT_VERNEED
	dtVerneednum = 0x6fffffff // DT_VERNEEDNUM
	dtHash       = 4          // DT_HASH
	dtSymtab     = 6          // DT_SYMTAB
	dtSyment     = 11         // DT_SYMENT
	dtRpath      = 15         // DT_RPATH
	dtRunpath    = 29         // DT_RUNPATH
	dtGNUHash    = 0x6ffffef5 // DT_GNU_HASH
	df1Now       = 1          // DF_1_NOW
	df1PIE       = 0x08000000 // DF_1_PIE
	pnXnum       = 0xffff
	maxVersions  = 1 << 12 // version needs read at most
	maxLoads     = 64      // PT_LOAD segments an address is looked up in
	maxName      = 4096    // bytes of a soname or version name read at most
	maxHardened  = 32      // longer than __NAME_chk of any hardened function
	verneedSize  = 16      // Elf32_Verneed and Elf64_Verneed
	vernauxSize  = 16      // Elf32_Vernaux and Elf64_Vernaux
)

// maxTable bounds each table kept (header tables, dynamic segment).
const maxTable = 1 << 20

// Info is what a Sniffer learnt.
type Info struct {
	ELF bool // the file starts with the ELF magic and a known class and byte order
	// Known: every table needed was seen whole; the fields below are facts.
	// When false they are what was seen before giving up.
	Known       bool
	Type        uint16 // e_type: 1 relocatable, 2 executable, 3 shared object or PIE, 4 core
	SymbolTable bool   // a SHT_SYMTAB section: file(1) says "not stripped"
	Interp      bool   // a PT_INTERP program header
	Needed      bool   // a DT_NEEDED entry: it needs shared libraries
	RELRO       bool   // a PT_GNU_RELRO program header
	BindNow     bool   // DF_1_NOW in DT_FLAGS_1, DF_BIND_NOW in DT_FLAGS or DT_BIND_NOW: lintian reads each as NOW
	PIE         bool   // DT_FLAGS_1 has DF_1_PIE: file(1) says "pie executable"
	Machine     uint16 // e_machine
	// LibsKnown: Libraries, Versions, Fortified and Unfortified are facts
	// (Known, and the dynamic names and symbols were found); a file
	// without a dynamic segment needs none.
	LibsKnown bool
	Libraries []string  // the DT_NEEDED sonames, in order
	Versions  []Version // the version needs (.gnu.version_r), in order
	// SearchPath are the folders of DT_RPATH, then of DT_RUNPATH (each
	// a list separated by colons, as ld.so and lintian split it).
	SearchPath []string
	// Of the functions glibc can fortify (lintian's hardened-functions
	// list), the binary calls a fortified one (__strcpy_chk: Fortified)
	// or a plain one (strcpy: Unfortified), as its undefined dynamic
	// symbols say.
	Fortified, Unfortified bool
}

// Version is a symbol version a file needs of a shared library: libc.so.6's
// GLIBC_2.34.
type Version struct{ File, Name string }

// StaticPIE reports a position-independent executable (ET_DYN, DF_1_PIE)
// that needs no shared library: Go's -buildmode=pie without cgo (which
// names a loader all the same), gcc -static-pie. lintian counts a PIE as
// a shared object and raises shared-library-lacks-prerequisites on it.
func (i Info) StaticPIE() bool { return i.ELF && i.Type == etDyn && i.PIE && !i.Needed }

// Static reports an executable (ET_EXEC) that needs no shared library: what
// lintian's statically-linked-binary is about.
func (i Info) Static() bool { return i.ELF && i.Type == etExec && !i.Needed }

// region is a byte range of the file to keep.
type region struct {
	start, size int64
	buf         []byte
	got         int64 // bytes of the range copied so far
	missed      bool  // part of it went by before it was known
}

func (r *region) full() bool { return r != nil && !r.missed && r.got == r.size }

// Sniffer is an io.Writer that watches a file's bytes go by. Write never
// fails; call Info at the end.
type Sniffer struct {
	off       int64
	head      []byte // the first 64 bytes
	done      bool   // not ELF, or given up: ignore the rest
	info      Info
	order     binary.ByteOrder
	is64      bool
	ph, sh    *region
	dyn       *region
	phParsed  bool
	shParsed  bool
	dynParsed bool
	noDyn     bool // the program headers name no PT_DYNAMIC
	unknown   bool
	// The bytes the dynamic segment's strings and version needs lie in:
	// the first ones (up to prefixEnd) and the ones just before the
	// dynamic segment (pre); loads map their addresses to file offsets.
	prefix    []byte
	prefixEnd int64
	pre       *region
	loads     []load
	libsFound bool
}

// load is a PT_LOAD segment: vaddr..vaddr+size lies at off in the file.
type load struct{ off, vaddr, size uint64 }

// Write watches p, the next bytes of the file.
func (s *Sniffer) Write(p []byte) (int, error) {
	start := s.off
	s.off += int64(len(p))
	if s.done {
		return len(p), nil
	}
	if len(s.head) < 64 {
		k := min(64-len(s.head), len(p))
		s.head = append(s.head, p[:k]...)
		if len(s.head) == 64 && !s.parseHeader(start) {
			s.done = true
			return len(p), nil
		}
	}
	if start == 0 {
		s.prefixEnd = maxTable // until the dynamic segment is located
	}
	if start < s.prefixEnd {
		s.prefix = append(s.prefix, p[:min(int64(len(p)), s.prefixEnd-start)]...)
	}
	for _, r := range []*region{s.ph, s.sh, s.dyn, s.pre} {
		if r != nil {
			r.copy(start, p)
		}
	}
	s.advance(start, p)
	return len(p), nil
}

// copy takes the part of p (at file offset off) that falls in r.
func (r *region) copy(off int64, p []byte) {
	end := off + int64(len(p))
	lo, hi := max(off, r.start), min(end, r.start+r.size)
	if lo >= hi {
		return
	}
	copy(r.buf[lo-r.start:hi-r.start], p[lo-off:hi-off])
	r.got += hi - lo
}

// newRegion registers a range to keep, the bytes from off on still to come;
// nil (and unknown) when it is too large. What it holds before off is
// taken from the first 64 bytes (the program headers of a 32-bit file
// start at 52, after its header); it is marked missed when it began
// before off and before that.
func (s *Sniffer) newRegion(start, size, off int64) *region {
	if size < 0 || size > maxTable || start < 0 {
		s.unknown = true
		return nil
	}
	r := &region{start: start, size: size, buf: make([]byte, size)}
	switch {
	case start >= off:
	case off <= int64(len(s.head)):
		r.copy(0, s.head[:off])
	default:
		r.missed = true
		s.unknown = true
	}
	return r
}

// parseHeader reads the ELF header, whose last byte came in the chunk
// written at start; false when the file is not ELF.
func (s *Sniffer) parseHeader(start int64) bool {
	h := s.head
	if !bytes.Equal(h[:4], []byte("\x7fELF")) {
		return false
	}
	switch h[5] {
	case 1:
		s.order = binary.LittleEndian
	case 2:
		s.order = binary.BigEndian
	default:
		return false
	}
	var phoff, shoff int64
	var phentsize, phnum, shentsize, shnum uint16
	switch h[4] {
	case 1:
		phoff, shoff = int64(s.order.Uint32(h[0x1c:])), int64(s.order.Uint32(h[0x20:]))
		phentsize, phnum = s.order.Uint16(h[0x2a:]), s.order.Uint16(h[0x2c:])
		shentsize, shnum = s.order.Uint16(h[0x2e:]), s.order.Uint16(h[0x30:])
	case 2:
		s.is64 = true
		phoff, shoff = int64(s.order.Uint64(h[0x20:])), int64(s.order.Uint64(h[0x28:]))
		phentsize, phnum = s.order.Uint16(h[0x36:]), s.order.Uint16(h[0x38:])
		shentsize, shnum = s.order.Uint16(h[0x3a:]), s.order.Uint16(h[0x3c:])
	default:
		return false
	}
	s.info.ELF = true
	s.info.Type = s.order.Uint16(h[0x10:])
	s.info.Machine = s.order.Uint16(h[0x12:])
	minPh, minSh := uint16(32), uint16(40)
	if s.is64 {
		minPh, minSh = 56, 64
	}
	// Extended numbering (the counts live in section 0) and entries smaller
	// than the standard ones are left unknown.
	switch {
	case phnum == pnXnum || (phnum > 0 && phentsize < minPh) || (shnum > 0 && shentsize < minSh) || (shnum == 0 && shoff != 0):
		s.unknown = true
		s.done = true
		return true
	}
	if phnum > 0 {
		s.ph = s.newRegion(phoff, int64(phnum)*int64(phentsize), start)
	} else {
		s.phParsed, s.noDyn = true, true
	}
	if shnum > 0 {
		s.sh = s.newRegion(shoff, int64(shnum)*int64(shentsize), start)
	} else {
		s.shParsed = true
	}
	if s.unknown {
		s.done = s.ph == nil && s.sh == nil
	}
	return true
}

// advance parses each table once it is whole; p (at start) is the chunk
// just written, which may already hold a table located only now.
func (s *Sniffer) advance(start int64, p []byte) {
	if !s.phParsed && s.ph.full() {
		s.phParsed = true
		s.parseProgramHeaders(start)
		for _, r := range []*region{s.dyn, s.pre} {
			if r != nil {
				r.copy(start, p)
			}
		}
	}
	if !s.shParsed && s.sh.full() {
		s.shParsed = true
		ent := len(s.sh.buf) / max(int(s.shCount()), 1)
		for i := 0; i+ent <= len(s.sh.buf); i += ent {
			if s.order.Uint32(s.sh.buf[i+4:]) == shtSymtab {
				s.info.SymbolTable = true
			}
		}
	}
	if !s.dynParsed && s.dyn.full() {
		s.dynParsed = true
		s.parseDynamic()
		s.prefix, s.pre = nil, nil // read: the rest is not kept
	}
	if s.phParsed && s.shParsed && (s.noDyn || s.dynParsed || s.dyn == nil) {
		s.done = true // everything known: the rest of the file is not needed
	}
}

func (s *Sniffer) shCount() uint16 {
	if s.is64 {
		return s.order.Uint16(s.head[0x3c:])
	}
	return s.order.Uint16(s.head[0x30:])
}

func (s *Sniffer) parseProgramHeaders(chunk int64) {
	b := s.ph.buf
	var ent int
	if s.is64 {
		ent = int(s.order.Uint16(s.head[0x36:]))
	} else {
		ent = int(s.order.Uint16(s.head[0x2a:]))
	}
	s.noDyn = true
	for i := 0; i+ent <= len(b); i += ent {
		var off, vaddr, size int64
		typ := s.order.Uint32(b[i:])
		if s.is64 {
			off, vaddr, size = int64(s.order.Uint64(b[i+8:])), int64(s.order.Uint64(b[i+16:])), int64(s.order.Uint64(b[i+32:]))
		} else {
			off, vaddr, size = int64(s.order.Uint32(b[i+4:])), int64(s.order.Uint32(b[i+8:])), int64(s.order.Uint32(b[i+16:]))
		}
		switch typ {
		case ptLoad:
			if len(s.loads) < maxLoads {
				s.loads = append(s.loads, load{uint64(off), uint64(vaddr), uint64(size)})
			}
		case ptInterp:
			s.info.Interp = true
		case ptGNURelro:
			s.info.RELRO = true
		case ptDynamic:
			if s.dyn == nil {
				s.noDyn = false
				s.dyn = s.newRegion(off, size, chunk)
				// The strings and version needs lie before the
				// dynamic segment: at the start, kept from the
				// first byte on, or in the maxTable bytes before it.
				s.prefixEnd = min(s.prefixEnd, max(off, 0))
				if lo := max(s.prefixEnd, off-maxTable); lo < off && lo >= chunk {
					s.pre = &region{start: lo, size: off - lo, buf: make([]byte, off-lo)}
				}
			}
		}
	}
	if s.noDyn {
		s.prefix, s.prefixEnd = nil, 0
	}
}

// parseDynamic reads the dynamic segment: DT_NEEDED and DT_FLAGS_1, and
// the names it points to in the kept bytes.
func (s *Sniffer) parseDynamic() {
	step := 8
	if s.is64 {
		step = 16
	}
	var needed, rpath, runpath []uint64
	var strtab, strsz, verneed, verneednum, hash, gnuHash, symtab uint64
	var haveStrtab, haveVerneed bool
	syment := uint64(16)
	if s.is64 {
		syment = 24
	}
	for i := 0; i+step <= len(s.dyn.buf); i += step {
		var tag, val uint64
		if s.is64 {
			tag, val = s.order.Uint64(s.dyn.buf[i:]), s.order.Uint64(s.dyn.buf[i+8:])
		} else {
			tag, val = uint64(s.order.Uint32(s.dyn.buf[i:])), uint64(s.order.Uint32(s.dyn.buf[i+4:]))
		}
		if tag == 0 {
			break
		}
		switch tag {
		case dtNeeded:
			s.info.Needed = true
			needed = append(needed, val)
		case dtRpath:
			rpath = append(rpath, val)
		case dtRunpath:
			runpath = append(runpath, val)
		case dtStrtab:
			strtab, haveStrtab = val, true
		case dtStrsz:
			strsz = val
		case dtFlags1:
			s.info.BindNow = s.info.BindNow || val&df1Now != 0
			s.info.PIE = s.info.PIE || val&df1PIE != 0
		case dtFlags:
			s.info.BindNow = s.info.BindNow || val&dfBindNow != 0
		case dtBindNow:
			s.info.BindNow = true
		case dtVerneed:
			verneed, haveVerneed = val, true
		case dtVerneednum:
			verneednum = val
		case dtHash:
			hash = val
		case dtGNUHash:
			gnuHash = val
		case dtSymtab:
			symtab = val
		case dtSyment:
			syment = val
		}
	}
	paths := append(rpath, runpath...)
	if len(needed) == 0 && len(paths) == 0 && !haveVerneed {
		s.libsFound = true
		return
	}
	if !haveStrtab {
		return
	}
	strs := s.at(strtab, strsz)
	if strs == nil {
		return
	}
	// str is the name at off, when it ends within limit bytes (a name
	// read is scanned that far at most, however many point into a
	// string table of a MiB without an end).
	str := func(off uint64, limit int) (string, bool) {
		if off >= uint64(len(strs)) {
			return "", false
		}
		b := strs[off:]
		n := bytes.IndexByte(b[:min(len(b), limit)], 0)
		if n < 0 {
			return "", false
		}
		return string(b[:n]), true
	}
	if len(needed)+len(paths) > maxVersions {
		return // no binary needs so many
	}
	var libs []string
	for _, o := range needed {
		name, ok := str(o, maxName)
		if !ok {
			return
		}
		libs = append(libs, name)
	}
	var search []string
	for _, o := range paths {
		list, ok := str(o, maxName)
		if !ok {
			return
		}
		search = append(search, strings.Split(list, ":")...)
	}
	var vers []Version
	// Each Verneed entry: vn_version, vn_cnt (16 bits each), vn_file,
	// vn_aux, vn_next (32 bits each, offsets); each Vernaux: vna_hash,
	// vna_flags, vna_other, vna_name, vna_next.
	for n, addr := uint64(0), verneed; haveVerneed && n < verneednum; n++ {
		if n >= maxVersions {
			return // no binary needs so many libraries' versions
		}
		vn := s.at(addr, verneedSize)
		if vn == nil || s.order.Uint16(vn) != 1 {
			return // vn_version 1 is the only one (ld.so refuses others)
		}
		file, ok := str(uint64(s.order.Uint32(vn[4:])), maxName)
		if !ok {
			return
		}
		aux := addr + uint64(s.order.Uint32(vn[8:]))
		for k := uint16(0); k < s.order.Uint16(vn[2:]); k++ {
			va := s.at(aux, vernauxSize)
			if va == nil {
				return
			}
			name, ok := str(uint64(s.order.Uint32(va[8:])), maxName)
			if !ok {
				return
			}
			vers = append(vers, Version{File: file, Name: name})
			if len(vers) > maxVersions {
				return // no binary needs so many: entries that share their names
			}
			next := uint64(s.order.Uint32(va[12:]))
			if next == 0 {
				break
			}
			aux += next
		}
		next := uint64(s.order.Uint32(vn[12:]))
		if next == 0 {
			break
		}
		addr += next
	}
	if symtab != 0 && !s.readSymbols(symtab, syment, s.symbolCount(hash, gnuHash), strs, str) {
		return
	}
	s.info.Libraries, s.info.Versions, s.info.SearchPath, s.libsFound = libs, vers, search, true
}

// symbolCount is the number of dynamic symbols: DT_HASH's nchain, or past
// the last symbol DT_GNU_HASH's buckets and chains reach; 0 when neither
// can be read.
func (s *Sniffer) symbolCount(hash, gnuHash uint64) uint64 {
	if hash != 0 {
		if h := s.at(hash, 8); h != nil {
			return uint64(s.order.Uint32(h[4:]))
		}
		return 0
	}
	if gnuHash == 0 {
		return 0
	}
	h := s.at(gnuHash, 16)
	if h == nil {
		return 0
	}
	nbuckets, symoffset, bloomSize := uint64(s.order.Uint32(h)), uint64(s.order.Uint32(h[4:])), uint64(s.order.Uint32(h[8:]))
	word := uint64(4)
	if s.is64 {
		word = 8
	}
	buckets := gnuHash + 16 + bloomSize*word
	b := s.at(buckets, nbuckets*4)
	if b == nil {
		return 0
	}
	last := uint64(0)
	for i := uint64(0); i < nbuckets; i++ {
		last = max(last, uint64(s.order.Uint32(b[i*4:])))
	}
	if last < symoffset {
		return symoffset
	}
	for chains, first := buckets+nbuckets*4, last; ; last++ {
		if last-first > maxTable/4 {
			return 0 // a chain longer than the bytes kept
		}
		c := s.at(chains+(last-symoffset)*4, 4)
		if c == nil {
			return 0
		}
		if s.order.Uint32(c)&1 != 0 {
			return last + 1
		}
	}
}

// readSymbols reads the undefined dynamic symbols for the functions glibc
// can fortify; false when the symbols could not be read.
func (s *Sniffer) readSymbols(symtab, syment, n uint64, strs []byte, str func(uint64, int) (string, bool)) bool {
	minEnt := uint64(16)
	if s.is64 {
		minEnt = 24
	}
	if n == 0 || syment < minEnt || n > maxTable/syment {
		return false
	}
	syms := s.at(symtab, n*syment)
	if syms == nil {
		return false
	}
	for i := uint64(1); i < n; i++ {
		e := syms[i*syment:]
		// st_shndx: after st_name, st_info and st_other in Elf64_Sym,
		// after st_name, st_value, st_size, st_info, st_other in Elf32_Sym.
		shndx := s.order.Uint16(e[14:])
		if s.is64 {
			shndx = s.order.Uint16(e[6:])
		}
		if shndx != 0 {
			continue
		}
		off := uint64(s.order.Uint32(e))
		if off >= uint64(len(strs)) {
			return false
		}
		name, _ := str(off, maxHardened) // longer: not one of them
		if f, ok := strings.CutPrefix(name, "__"); ok && strings.HasSuffix(f, "_chk") && hardenedFunctions[strings.TrimSuffix(f, "_chk")] {
			s.info.Fortified = true
		} else if hardenedFunctions[name] {
			s.info.Unfortified = true
		}
	}
	return true
}

// at returns the n bytes at address vaddr, when a PT_LOAD maps them and
// they were kept; nil otherwise.
func (s *Sniffer) at(vaddr, n uint64) []byte {
	if n > maxTable {
		return nil
	}
	for _, l := range s.loads {
		if vaddr < l.vaddr || vaddr-l.vaddr > l.size || n > l.size-(vaddr-l.vaddr) {
			continue
		}
		// Every sum checked not to wrap: the offsets are the file's.
		off := l.off + (vaddr - l.vaddr)
		if off < l.off {
			continue
		}
		if have := uint64(len(s.prefix)); off <= have && n <= have-off {
			return s.prefix[off : off+n]
		}
		if r := s.pre; r != nil && r.full() && off >= uint64(r.start) {
			if in := off - uint64(r.start); in <= uint64(r.size) && n <= uint64(r.size)-in {
				return r.buf[in : in+n]
			}
		}
	}
	return nil
}

// Info returns what the bytes written so far say. Call it after the last
// Write: a table still incomplete then makes the answer unknown.
func (s *Sniffer) Info() Info {
	i := s.info
	i.Known = i.ELF && !s.unknown && s.phParsed && s.shParsed && (s.noDyn || s.dynParsed)
	i.LibsKnown = i.Known && (s.noDyn || s.libsFound)
	if !i.LibsKnown {
		i.Libraries, i.Versions, i.SearchPath = nil, nil, nil
	}
	return i
}
