package deb

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/ctxio"
)

// Recompress writes to dst a copy of the .deb at src whose control.tar and
// data.tar are compressed with c: each is decompressed and compressed again,
// so that the tar bytes are the same and only the compression layer and the
// member's name (control.tar.zst becomes control.tar.xz) differ, for a tool
// that reads fewer compressions than dpkg (Debian 12's lintian reads no
// zstd). A member already in c, debian-binary and every other member are
// copied as they are; the members keep their order and mtimes. xz is
// written without the x86 filter that Write uses for amd64 data.tar.
//
// It streams: each member is compressed into a temporary file beside dst
// (the ar header needs its size), and dst is written as Write writes a
// package (a temporary file, fsynced and renamed), so that it is either
// the complete copy or untouched. Only the container is checked, as
// Inspect does (the ar headers, a known suffix, one xz or bzip2 stream or
// zstd frame, which is all dpkg reads): those faults wrap ErrMalformed, and a
// member that does not decompress fails with its decoder's error. The tar
// archives are not read: inspect a package from elsewhere first.
func Recompress(ctx context.Context, dst, src string, c Compression) error {
	to, err := codecFor(c)
	if err != nil {
		return err
	}
	f, srcSize, err := OpenPackage(src)
	if err != nil {
		return err
	}
	defer f.Close()
	members, err := readAr(f, srcSize)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, tempPattern(base, "member"))
	if err != nil {
		return err
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	out, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return err
	}
	defer out.Abort() // a no-op once committed
	bw := bufio.NewWriterSize(out, 1<<20)
	aw, err := newArWriter(bw)
	if err != nil {
		return err
	}
	for _, m := range members {
		name, size, r := m.name, m.size, io.Reader(io.NewSectionReader(f, m.offset, m.size))
		if tarBase, ok := tarMember(m.name); ok {
			from, err := memberCodec(m.name, tarBase)
			if err != nil {
				return fmt.Errorf("%s: %w", src, err)
			}
			if from.compression != to.compression {
				if size, err = recompressMember(ctx, tmp, io.NewSectionReader(f, m.offset, m.size), from, to); err != nil {
					return fmt.Errorf("%s: %s: %w", src, m.name, err)
				}
				name, r = tarBase+to.suffix, &punchingReader{f: tmp}
			}
		}
		if err := aw.member(name, time.Unix(m.mtime, 0), size, ctxio.Reader(ctx, r)); err != nil {
			return fmt.Errorf("writing %s: %w", dst, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return out.Commit()
}

// tarMember returns the base name of a control.tar or data.tar member
// ("data.tar" for "data.tar.zst").
func tarMember(name string) (string, bool) {
	for _, base := range []string{"control.tar", "data.tar"} {
		if strings.HasPrefix(name, base) {
			return base, true
		}
	}
	return "", false
}

// recompressMember decompresses the member r (from) into tmp, emptied
// first, compressed with to, and returns its size with tmp at its start.
func recompressMember(ctx context.Context, tmp *os.File, r *io.SectionReader, from, to codec) (int64, error) {
	if err := checkOneStream(r, r.Size(), from.compression); err != nil {
		return 0, err
	}
	zr, err := from.newReader(bufio.NewReaderSize(r, 256<<10))
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	if err := tmp.Truncate(0); err != nil {
		return 0, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	if _, err := compressInto(tmp, to, writerOptions{ctx: ctx}, func(w io.Writer) (int64, error) {
		return io.Copy(w, ctxio.Reader(ctx, zr))
	}); err != nil {
		return 0, err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	_, err = tmp.Seek(0, io.SeekStart)
	return size, err
}
