// Package elfinfo learns what lintian's binary checks look at from a file's
// bytes as they stream past, without seeking and without keeping the file:
// whether it is ELF, its type, whether it has a symbol table (what file(1)
// calls "not stripped") and whether it needs shared libraries (DT_NEEDED).
// updeb writes a package in one pass from the archive it was downloaded in,
// so a binary's bytes are seen once, in order, on their way into the .deb.
//
// Only the ELF header, the program and section header tables and the dynamic
// segment are kept, each at most maxTable bytes. A table that lies before
// the header that locates it, or is larger than that, leaves the answer
// unknown (Info.Known false): callers then assume the worst.
package elfinfo

import (
	"bytes"
	"encoding/binary"
)

// ELF constants (the ELF specification; debug/elf names them too).
const (
	etExec    = 2 // ET_EXEC
	ptDynamic = 2 // PT_DYNAMIC
	ptInterp  = 3 // PT_INTERP
	shtSymtab = 2 // SHT_SYMTAB
	dtNeeded  = 1 // DT_NEEDED
	pnXnum    = 0xffff
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
}

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
}

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
		if len(s.head) == 64 && !s.parseHeader() {
			s.done = true
			return len(p), nil
		}
	}
	for _, r := range []*region{s.ph, s.sh, s.dyn} {
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

// newRegion registers a range to keep; nil (and unknown) when it is too
// large, and marked missed when it began before off.
func (s *Sniffer) newRegion(start, size, off int64) *region {
	if size < 0 || size > maxTable || start < 0 {
		s.unknown = true
		return nil
	}
	r := &region{start: start, size: size, buf: make([]byte, size)}
	if start < off {
		r.missed = true
		s.unknown = true
	}
	return r
}

// parseHeader reads the ELF header; false when the file is not ELF.
func (s *Sniffer) parseHeader() bool {
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
		s.ph = s.newRegion(phoff, int64(phnum)*int64(phentsize), 64)
	} else {
		s.phParsed, s.noDyn = true, true
	}
	if shnum > 0 {
		s.sh = s.newRegion(shoff, int64(shnum)*int64(shentsize), 64)
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
		if s.dyn != nil {
			s.dyn.copy(start, p)
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
		step := 8
		if s.is64 {
			step = 16
		}
		for i := 0; i+step <= len(s.dyn.buf); i += step {
			var tag uint64
			if s.is64 {
				tag = s.order.Uint64(s.dyn.buf[i:])
			} else {
				tag = uint64(s.order.Uint32(s.dyn.buf[i:]))
			}
			if tag == 0 {
				break
			}
			if tag == dtNeeded {
				s.info.Needed = true
			}
		}
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
		var off, size int64
		typ := s.order.Uint32(b[i:])
		if s.is64 {
			off, size = int64(s.order.Uint64(b[i+8:])), int64(s.order.Uint64(b[i+32:]))
		} else {
			off, size = int64(s.order.Uint32(b[i+4:])), int64(s.order.Uint32(b[i+16:]))
		}
		switch typ {
		case ptInterp:
			s.info.Interp = true
		case ptDynamic:
			if s.dyn == nil {
				s.noDyn = false
				s.dyn = s.newRegion(off, size, chunk)
			}
		}
	}
}

// Info returns what the bytes written so far say. Call it after the last
// Write: a table still incomplete then makes the answer unknown.
func (s *Sniffer) Info() Info {
	i := s.info
	i.Known = i.ELF && !s.unknown && s.phParsed && s.shParsed && (s.noDyn || s.dynParsed)
	return i
}
