package gitread

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// store is one objects folder: loose objects and pack files.
type store struct {
	dir   string
	packs []*pack // opened on first use
	found bool    // packs listed
}

// addStore adds an objects folder and, recursively, its alternates.
func (r *repo) addStore(dir string, depth int) error {
	if depth > maxAlternates {
		return fmt.Errorf("%w: alternates nested deeper than %d", ErrCorrupt, maxAlternates)
	}
	for _, s := range r.stores {
		if s.dir == dir {
			return nil
		}
	}
	r.stores = append(r.stores, &store{dir: dir})
	f, err := os.Open(filepath.Join(dir, "info", "alternates"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	sc.Buffer(nil, maxRefLine)
	for sc.Scan() {
		alt := strings.TrimSpace(sc.Text())
		if alt == "" || alt[0] == '#' {
			continue
		}
		if !filepath.IsAbs(alt) {
			alt = filepath.Join(dir, alt)
		}
		if err := r.addStore(filepath.Clean(alt), depth+1); err != nil {
			return err
		}
	}
	return sc.Err()
}

func (s *store) close() {
	for _, p := range s.packs {
		p.close()
	}
}

// read returns the object id from this store; found is false when it has
// none.
func (s *store) read(r *repo, id []byte, depth int) (typ string, data []byte, found bool, err error) {
	h := hex.EncodeToString(id)
	f, err := os.Open(filepath.Join(s.dir, h[:2], h[2:]))
	if err == nil {
		defer f.Close()
		typ, data, err := readLoose(f)
		if err != nil {
			return "", nil, false, fmt.Errorf("%w: loose object %s: %v", ErrCorrupt, h, err)
		}
		return typ, data, true, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", nil, false, err
	}
	if err := s.listPacks(len(id)); err != nil {
		return "", nil, false, err
	}
	for _, p := range s.packs {
		off, ok, err := p.find(id)
		if err != nil {
			return "", nil, false, err
		}
		if ok {
			typ, data, err := p.object(r, off, depth)
			return typ, data, err == nil, err
		}
	}
	return "", nil, false, nil
}

// readLoose reads a loose object: zlib("TYPE SIZE\0DATA").
func readLoose(f io.Reader) (string, []byte, error) {
	z, err := zlib.NewReader(f)
	if err != nil {
		return "", nil, err
	}
	defer z.Close()
	br := bufio.NewReader(z)
	hdr, err := br.ReadSlice(0)
	if err != nil || len(hdr) > 32 {
		return "", nil, errors.New("bad header")
	}
	typ, sizeText, ok := strings.Cut(string(hdr[:len(hdr)-1]), " ")
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if !ok || err != nil || size < 0 || size > maxObjectSize {
		return "", nil, fmt.Errorf("bad header %q", hdr)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(br, data); err != nil {
		return "", nil, err
	}
	if n, _ := br.Read(make([]byte, 1)); n != 0 {
		return "", nil, errors.New("longer than its header says")
	}
	return typ, data, nil
}

// listPacks opens the index of every pack of the store (once).
func (s *store) listPacks(idLen int) error {
	if s.found {
		return nil
	}
	s.found = true
	idx, err := filepath.Glob(filepath.Join(s.dir, "pack", "pack-*.idx"))
	if err != nil {
		return err
	}
	sort.Strings(idx)
	for _, path := range idx {
		p, err := openPack(path, idLen)
		if errors.Is(err, os.ErrNotExist) {
			continue // a pack being written or removed by git right now
		}
		if err != nil {
			return err
		}
		s.packs = append(s.packs, p)
	}
	return nil
}

// pack is a pack file and its version 2 index, read with ReadAt as needed
// (an index may be hundreds of megabytes).
type pack struct {
	idx, data *os.File
	name      string
	idLen     int
	count     uint32
	fanout    [256]uint32
	dataSize  int64
}

const (
	idxHeader  = 8
	fanoutSize = 256 * 4
)

func openPack(idxPath string, idLen int) (*pack, error) {
	p := &pack{name: idxPath, idLen: idLen}
	var err error
	if p.idx, err = os.Open(idxPath); err != nil {
		return nil, err
	}
	if p.data, err = os.Open(strings.TrimSuffix(idxPath, ".idx") + ".pack"); err != nil {
		p.idx.Close()
		return nil, err
	}
	if err := p.readHeader(); err != nil {
		p.close()
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, idxPath, err)
	}
	return p, nil
}

func (p *pack) close() {
	p.idx.Close()
	p.data.Close()
}

func (p *pack) readHeader() error {
	var hdr [idxHeader + fanoutSize]byte
	if _, err := p.idx.ReadAt(hdr[:], 0); err != nil {
		return err
	}
	if !bytes.Equal(hdr[:4], []byte("\xfftOc")) || binary.BigEndian.Uint32(hdr[4:8]) != 2 {
		return errors.New("not a version 2 pack index")
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(hdr[idxHeader+4*i:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			return errors.New("fan-out table not sorted")
		}
	}
	p.count = p.fanout[255]
	fi, err := p.idx.Stat()
	if err != nil {
		return err
	}
	// names, CRCs and offsets, then the two trailing checksums
	if need := int64(idxHeader+fanoutSize) + int64(p.count)*int64(p.idLen+8) + 2*int64(p.idLen); fi.Size() < need {
		return fmt.Errorf("%d bytes, too short for %d objects", fi.Size(), p.count)
	}
	var ph [12]byte
	if _, err := p.data.ReadAt(ph[:], 0); err != nil {
		return err
	}
	if !bytes.Equal(ph[:4], []byte("PACK")) || binary.BigEndian.Uint32(ph[8:]) != p.count {
		return errors.New("pack file does not match its index")
	}
	if fi, err = p.data.Stat(); err != nil {
		return err
	}
	p.dataSize = fi.Size()
	return nil
}

// find returns the offset of id in the pack file.
func (p *pack) find(id []byte) (int64, bool, error) {
	lo := uint32(0)
	if id[0] > 0 {
		lo = p.fanout[id[0]-1]
	}
	hi := p.fanout[id[0]]
	name := make([]byte, p.idLen)
	namesAt := int64(idxHeader + fanoutSize)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := p.idx.ReadAt(name, namesAt+int64(mid)*int64(p.idLen)); err != nil {
			return 0, false, fmt.Errorf("%w: %s: %v", ErrCorrupt, p.name, err)
		}
		switch c := bytes.Compare(name, id); {
		case c == 0:
			off, err := p.offset(mid)
			return off, err == nil, err
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false, nil
}

// offset reads the pack offset of the i-th object of the index.
func (p *pack) offset(i uint32) (int64, error) {
	offsetsAt := int64(idxHeader+fanoutSize) + int64(p.count)*int64(p.idLen+4)
	var b [8]byte
	if _, err := p.idx.ReadAt(b[:4], offsetsAt+4*int64(i)); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, p.name, err)
	}
	off := int64(binary.BigEndian.Uint32(b[:4]))
	if off&0x80000000 != 0 {
		large := offsetsAt + 4*int64(p.count) + 8*(off&0x7fffffff)
		if _, err := p.idx.ReadAt(b[:], large); err != nil {
			return 0, fmt.Errorf("%w: %s: large offset: %v", ErrCorrupt, p.name, err)
		}
		off = int64(binary.BigEndian.Uint64(b[:]))
	}
	if off < 12 || off >= p.dataSize {
		return 0, fmt.Errorf("%w: %s: offset %d outside the pack", ErrCorrupt, p.name, off)
	}
	return off, nil
}

// Pack object types.
const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
)

var typeNames = map[int]string{objCommit: "commit", objTree: "tree", objBlob: "blob", objTag: "tag"}

// object reads the object at off, applying its chain of deltas.
func (p *pack) object(r *repo, off int64, depth int) (string, []byte, error) {
	var deltas [][]byte
	held := int64(0) // bytes of the deltas read so far
	for {
		if len(deltas) > maxDeltaChain || held > maxObjectSize*4 {
			return "", nil, fmt.Errorf("%w: %s: delta chain longer than %d deltas or %d bytes", ErrCorrupt, p.name, maxDeltaChain, maxObjectSize*4)
		}
		br := bufio.NewReader(io.NewSectionReader(p.data, off, p.dataSize-off))
		typ, size, err := entryHeader(br)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s at %d: %v", ErrCorrupt, p.name, off, err)
		}
		var baseTyp string
		var base []byte
		baseOff := int64(-1)
		switch typ {
		case objOfsDelta:
			back, err := ofsDeltaDistance(br)
			if err != nil || back <= 0 || back >= off {
				return "", nil, fmt.Errorf("%w: %s at %d: bad delta base offset", ErrCorrupt, p.name, off)
			}
			baseOff = off - back
		case objRefDelta:
			id := make([]byte, p.idLen)
			if _, err := io.ReadFull(br, id); err != nil {
				return "", nil, fmt.Errorf("%w: %s at %d: %v", ErrCorrupt, p.name, off, err)
			}
			if baseTyp, base, err = r.read(id, depth+len(deltas)+1); err != nil {
				return "", nil, err
			}
		}
		data, err := inflate(br, size)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s at %d: %v", ErrCorrupt, p.name, off, err)
		}
		held += int64(len(data))
		switch {
		case typ == objOfsDelta:
			deltas = append(deltas, data)
			off = baseOff
			continue
		case typ == objRefDelta:
			deltas = append(deltas, data)
		case typeNames[typ] != "":
			baseTyp, base = typeNames[typ], data
		default:
			return "", nil, fmt.Errorf("%w: %s at %d: object type %d", ErrCorrupt, p.name, off, typ)
		}
		for i := len(deltas) - 1; i >= 0; i-- {
			if base, err = applyDelta(base, deltas[i]); err != nil {
				return "", nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, p.name, err)
			}
		}
		return baseTyp, base, nil
	}
}

// entryHeader reads a pack entry's type and inflated size.
func entryHeader(br io.ByteReader) (int, int64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	typ, size, shift := int(c>>4)&7, int64(c&15), 4
	for c&0x80 != 0 {
		if c, err = br.ReadByte(); err != nil {
			return 0, 0, err
		}
		if shift > 56 {
			return 0, 0, errors.New("size too large")
		}
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	if size > maxObjectSize {
		return 0, 0, fmt.Errorf("object of %d bytes, more than %d", size, maxObjectSize)
	}
	return typ, size, nil
}

// ofsDeltaDistance reads the backwards distance of an offset delta's base.
func ofsDeltaDistance(br io.ByteReader) (int64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	d := int64(c & 0x7f)
	for c&0x80 != 0 {
		if d > 1<<55 {
			return 0, errors.New("offset too large")
		}
		if c, err = br.ReadByte(); err != nil {
			return 0, err
		}
		d = (d+1)<<7 | int64(c&0x7f)
	}
	return d, nil
}

// inflate reads exactly size bytes of zlib data.
func inflate(r io.Reader, size int64) ([]byte, error) {
	z, err := zlib.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(z, data); err != nil {
		return nil, err
	}
	if n, _ := z.Read(make([]byte, 1)); n != 0 {
		return nil, errors.New("inflates to more than its header says")
	}
	return data, nil
}

// applyDelta rebuilds an object from its base and a git delta: the base's
// size, the result's size, then copy (from the base) and insert instructions.
func applyDelta(base, delta []byte) ([]byte, error) {
	srcSize, n := deltaSize(delta)
	if n == 0 || srcSize != int64(len(base)) {
		return nil, errors.New("delta for a base of another size")
	}
	delta = delta[n:]
	dstSize, n := deltaSize(delta)
	if n == 0 || dstSize > maxObjectSize {
		return nil, errors.New("bad delta result size")
	}
	delta = delta[n:]
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, size int64
			for i, bit := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40} {
				if op&bit == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errors.New("truncated delta copy")
				}
				if i < 4 {
					off |= int64(delta[0]) << (8 * i)
				} else {
					size |= int64(delta[0]) << (8 * (i - 4))
				}
				delta = delta[1:]
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > int64(len(base)) || int64(len(out))+size > dstSize {
				return nil, errors.New("delta copy out of bounds")
			}
			out = append(out, base[off:off+size]...)
		case op != 0:
			if int(op) > len(delta) || int64(len(out))+int64(op) > dstSize {
				return nil, errors.New("delta insert out of bounds")
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, errors.New("reserved delta instruction 0")
		}
	}
	if int64(len(out)) != dstSize {
		return nil, errors.New("delta result shorter than announced")
	}
	return out, nil
}

// deltaSize reads a little-endian base-128 size; n is 0 when it is bad.
func deltaSize(b []byte) (size int64, n int) {
	for shift := 0; n < len(b) && shift < 63; shift += 7 {
		c := b[n]
		n++
		size |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return size, n
		}
	}
	return 0, 0
}
