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
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/dirglob"
)

// store is one objects folder: loose objects and pack files.
type store struct {
	dir   string
	packs []*pack // opened on first use
	found bool    // packs listed
}

// addStore adds an objects folder and, recursively, its alternates. An
// alternate may lie anywhere (as git allows); what is read there is checked
// against its id like any object.
func (r *repo) addStore(dir string, depth int) error {
	if depth > maxAlternates {
		return r.errorf(ErrCorrupt, "alternates nested deeper than %d", maxAlternates)
	}
	for _, s := range r.stores {
		if s.dir == dir {
			return nil
		}
	}
	role := "the objects folder"
	if depth > 0 {
		role = "an objects folder objects/info/alternates names"
	}
	if err := r.checkFolder(role, dir); err != nil {
		if depth > 0 && errors.Is(err, fs.ErrNotExist) {
			return nil // as git, which warns and goes on
		}
		return err
	}
	if len(r.stores) >= maxStores {
		return r.errorf(ErrRefused, "objects/info/alternates name more than %d objects folders", maxStores-1)
	}
	r.stores = append(r.stores, &store{dir: dir})
	data, err := confined.ReadIn(dir, maxTextFile, "info/alternates")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return r.fileError("objects/info/alternates", err)
	}
	for line := range strings.Lines(string(data)) {
		alt := strings.TrimSpace(line)
		if alt == "" || alt[0] == '#' {
			continue
		}
		if strings.ContainsRune(alt, 0) || len(alt) > maxRefLine {
			return r.errorf(ErrCorrupt, "objects/info/alternates: a line that names no folder")
		}
		if !filepath.IsAbs(alt) {
			alt = filepath.Join(dir, alt)
		}
		if err := r.addStore(filepath.Clean(alt), depth+1); err != nil {
			return err
		}
	}
	return nil
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
	f, _, err := confined.Open(s.dir, h[:2]+"/"+h[2:])
	if err == nil {
		defer f.Close()
		typ, data, err := readLoose(r, f)
		if err != nil {
			return "", nil, false, r.errorf(ErrCorrupt, "loose object %s: %v", h, err)
		}
		return typ, data, true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", nil, false, r.fileError("loose object "+h, err)
	}
	if err := s.listPacks(r, len(id)); err != nil {
		return "", nil, false, err
	}
	for _, p := range s.packs {
		off, ok, err := p.find(r, id)
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

// readLoose reads a loose object: zlib("TYPE SIZE\0DATA"). Nothing of the
// header is quoted in an error.
func readLoose(r *repo, f io.Reader) (string, []byte, error) {
	z, err := r.zlib(f)
	if err != nil {
		return "", nil, errors.New("not zlib data")
	}
	br := bufio.NewReader(z)
	hdr, err := br.ReadSlice(0)
	if err != nil || len(hdr) > 32 {
		return "", nil, errors.New("bad header")
	}
	typ, sizeText, ok := strings.Cut(string(hdr[:len(hdr)-1]), " ")
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if !ok || err != nil || size < 0 {
		return "", nil, errors.New("bad header")
	}
	if size > MaxObjectSize {
		return "", nil, fmt.Errorf("%d bytes, more than %d", size, MaxObjectSize)
	}
	if _, known := typeIDs[typ]; !known {
		return "", nil, errors.New("unknown object type")
	}
	data, err := readExactly(r, br, size)
	if err != nil {
		return "", nil, err
	}
	if n, _ := br.Read(make([]byte, 1)); n != 0 {
		return "", nil, errors.New("longer than its header says")
	}
	return typ, data, nil
}

// zlib returns a zlib reader of src, reusing r's: a delta chain thousands
// long would otherwise allocate a decompressor per entry.
func (r *repo) zlib(src io.Reader) (io.Reader, error) {
	if r.z == nil {
		z, err := zlib.NewReader(src)
		if err != nil {
			return nil, err
		}
		r.z = z
		return z, nil
	}
	if err := r.z.(zlib.Resetter).Reset(src, nil); err != nil {
		return nil, err
	}
	return r.z, nil
}

// readExactly reads size bytes of inflated data, charged to r's budget;
// memory grows with what is really there, not with what a header claims.
func readExactly(r *repo, src io.Reader, size int64) ([]byte, error) {
	if err := r.charge(size); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(src, size))
	if err != nil {
		return nil, errors.New("bad zlib data")
	}
	if n != size {
		return nil, fmt.Errorf("%d bytes, its header says %d", n, size)
	}
	return buf.Bytes(), nil
}

// listPacks opens the index of every pack of the store (once).
func (s *store) listPacks(r *repo, idLen int) error {
	if s.found {
		return nil
	}
	s.found = true
	idx, err := dirglob.Glob(filepath.Join(s.dir, "pack"), "pack-*.idx")
	if err != nil {
		return err
	}
	if len(idx) > maxPacks {
		return r.errorf(ErrRefused, "an objects folder with more than %d packs", maxPacks)
	}
	sort.Strings(idx)
	for _, path := range idx {
		p, err := openPack(r, s.dir, filepath.Base(path), idLen)
		if errors.Is(err, fs.ErrNotExist) {
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
	name      string // pack/pack-*.idx, for messages
	idLen     int
	count     uint32
	fanout    [256]uint32
	idxSize   int64
	dataSize  int64
}

const (
	idxHeader  = 8
	fanoutSize = 256 * 4
)

// openPack opens the index name (in dir/pack) and its pack, confined to the
// objects folder dir.
func openPack(r *repo, dir, name string, idLen int) (*pack, error) {
	p := &pack{name: "pack/" + name, idLen: idLen}
	var (
		err error
		fi  fs.FileInfo
	)
	if p.idx, fi, err = confined.Open(dir, p.name); err != nil {
		return nil, r.fileError(p.name, err)
	}
	p.idxSize = fi.Size()
	dataName := strings.TrimSuffix(p.name, ".idx") + ".pack"
	if p.data, fi, err = confined.Open(dir, dataName); err != nil {
		p.idx.Close()
		return nil, r.fileError(dataName, err)
	}
	p.dataSize = fi.Size()
	if err := p.readHeader(); err != nil {
		p.close()
		return nil, r.errorf(ErrCorrupt, "%s: %v", p.name, err)
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
		return errors.New("too short")
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
	// names, CRCs and offsets, then the two trailing checksums
	if need := int64(idxHeader+fanoutSize) + int64(p.count)*int64(p.idLen+8) + 2*int64(p.idLen); p.idxSize < need {
		return fmt.Errorf("%d bytes, too short for %d objects", p.idxSize, p.count)
	}
	var ph [12]byte
	if _, err := p.data.ReadAt(ph[:], 0); err != nil {
		return errors.New("its pack is too short")
	}
	if !bytes.Equal(ph[:4], []byte("PACK")) || binary.BigEndian.Uint32(ph[8:]) != p.count {
		return errors.New("pack file does not match its index")
	}
	return nil
}

// find returns the offset of id in the pack file.
func (p *pack) find(r *repo, id []byte) (int64, bool, error) {
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
			return 0, false, r.errorf(ErrCorrupt, "%s: truncated", p.name)
		}
		switch c := bytes.Compare(name, id); {
		case c == 0:
			off, err := p.offset(r, mid)
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
func (p *pack) offset(r *repo, i uint32) (int64, error) {
	offsetsAt := int64(idxHeader+fanoutSize) + int64(p.count)*int64(p.idLen+4)
	var b [8]byte
	if _, err := p.idx.ReadAt(b[:4], offsetsAt+4*int64(i)); err != nil {
		return 0, r.errorf(ErrCorrupt, "%s: truncated", p.name)
	}
	off := int64(binary.BigEndian.Uint32(b[:4]))
	if off&0x80000000 != 0 {
		large := offsetsAt + 4*int64(p.count) + 8*(off&0x7fffffff)
		if _, err := p.idx.ReadAt(b[:], large); err != nil {
			return 0, r.errorf(ErrCorrupt, "%s: large offset: truncated", p.name)
		}
		off = int64(binary.BigEndian.Uint64(b[:]))
	}
	if off < 12 || off >= p.dataSize {
		return 0, r.errorf(ErrCorrupt, "%s: offset %d outside the pack", p.name, off)
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

var (
	typeNames = map[int]string{objCommit: "commit", objTree: "tree", objBlob: "blob", objTag: "tag"}
	typeIDs   = map[string]int{"commit": objCommit, "tree": objTree, "blob": objBlob, "tag": objTag}
)

// object reads the object at off, applying its chain of deltas. Offset
// deltas point strictly backwards, so they cannot loop; reference deltas go
// through repo.read, which refuses a cycle. Every delta and result is
// charged to r's budget.
func (p *pack) object(r *repo, off int64, depth int) (string, []byte, error) {
	var deltas [][]byte
	for {
		if depth+len(deltas) > MaxDeltaChain {
			return "", nil, r.errorf(ErrCorrupt, "%s: delta chain longer than %d", p.name, MaxDeltaChain)
		}
		br := bufio.NewReader(io.NewSectionReader(p.data, off, p.dataSize-off))
		typ, size, err := entryHeader(br)
		if err != nil {
			return "", nil, r.errorf(ErrCorrupt, "%s at %d: %v", p.name, off, err)
		}
		var baseTyp string
		var base []byte
		baseOff := int64(-1)
		switch typ {
		case objOfsDelta:
			back, err := ofsDeltaDistance(br)
			if err != nil || back <= 0 || back >= off {
				return "", nil, r.errorf(ErrCorrupt, "%s at %d: bad delta base offset", p.name, off)
			}
			baseOff = off - back
		case objRefDelta:
			id := make([]byte, p.idLen)
			if _, err := io.ReadFull(br, id); err != nil {
				return "", nil, r.errorf(ErrCorrupt, "%s at %d: truncated", p.name, off)
			}
			if baseTyp, base, err = r.read(id, depth+len(deltas)+1); err != nil {
				return "", nil, err
			}
		}
		data, err := inflate(r, br, size)
		if err != nil {
			if errors.Is(err, ErrRefused) || r.ctx.Err() != nil {
				return "", nil, err
			}
			return "", nil, r.errorf(ErrCorrupt, "%s at %d: %v", p.name, off, err)
		}
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
			return "", nil, r.errorf(ErrCorrupt, "%s at %d: object type %d", p.name, off, typ)
		}
		for i := len(deltas) - 1; i >= 0; i-- {
			if dst, n := deltaResultSize(deltas[i]); n > 0 {
				if err := r.charge(dst); err != nil {
					return "", nil, err
				}
			}
			if base, err = applyDelta(base, deltas[i]); err != nil {
				return "", nil, r.errorf(ErrCorrupt, "%s: %v", p.name, err)
			}
			deltas[i] = nil
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
	if size > MaxObjectSize {
		return 0, 0, fmt.Errorf("object of %d bytes, more than %d", size, MaxObjectSize)
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

// inflate reads exactly size bytes of zlib data, charged to r's budget.
func inflate(r *repo, src io.Reader, size int64) ([]byte, error) {
	z, err := r.zlib(src)
	if err != nil {
		return nil, errors.New("not zlib data")
	}
	data, err := readExactly(r, z, size)
	if err != nil {
		return nil, err
	}
	if n, _ := z.Read(make([]byte, 1)); n != 0 {
		return nil, errors.New("inflates to more than its header says")
	}
	return data, nil
}

// deltaResultSize is the size a delta announces for its result (n is 0 when
// the header is bad).
func deltaResultSize(delta []byte) (int64, int) {
	_, n := deltaSize(delta)
	if n == 0 {
		return 0, 0
	}
	return deltaSize(delta[n:])
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
	if n == 0 || dstSize > MaxObjectSize {
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
