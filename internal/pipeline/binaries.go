package pipeline

import (
	"bytes"
	"io"

	"github.com/updeb/updeb/internal/elfinfo"
	"github.com/updeb/updeb/internal/recipe"
)

// binaries learns, for a package's lintian overrides, what each of its files
// is (stripped or not, static or not) from the bytes on their way into the
// .deb: the writer opens the files in output order, and the overrides file
// (/usr/share/lintian/overrides/) comes after /usr/bin, /usr/lib, /usr/sbin
// and /opt. A file not written yet by then is read from disk when it lies
// there (a raw source, a spooled member, a recipe-folder file); otherwise
// the overrides assume the worst for it.
type binaries struct {
	seen  map[string]*elfinfo.Sniffer // dest -> the sniffer its bytes went through
	done  map[string]bool             // dest -> every byte went through
	files map[string]func() (io.ReadCloser, error)
}

func newBinaries() *binaries {
	return &binaries{seen: map[string]*elfinfo.Sniffer{}, done: map[string]bool{}, files: map[string]func() (io.ReadCloser, error){}}
}

// watch passes rc's bytes for dest through a sniffer.
func (b *binaries) watch(dest string, rc io.ReadCloser) io.ReadCloser {
	s := &elfinfo.Sniffer{}
	b.seen[dest] = s
	return &sniffing{ReadCloser: rc, s: s, eof: func() { b.done[dest] = true }}
}

type sniffing struct {
	io.ReadCloser
	s   *elfinfo.Sniffer
	eof func()
}

func (r *sniffing) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.s.Write(p[:n])
	if err == io.EOF {
		r.eof()
	}
	return n, err
}

// facts is recipe.ResolvedPackage.Overrides' view of dest.
func (b *binaries) facts(dest string) (recipe.BinaryFacts, bool) {
	if !b.done[dest] {
		open := b.files[dest]
		if open == nil {
			return recipe.BinaryFacts{}, false
		}
		rc, err := open()
		if err != nil {
			return recipe.BinaryFacts{}, false
		}
		_, err = io.Copy(io.Discard, b.watch(dest, rc))
		rc.Close()
		if err != nil {
			return recipe.BinaryFacts{}, false
		}
	}
	i := b.seen[dest].Info()
	if i.ELF && !i.Known {
		return recipe.BinaryFacts{}, false
	}
	return recipe.BinaryFacts{ELF: i.ELF, Unstripped: i.SymbolTable, Static: i.Static()}, true
}

// overrides is the overrides file's entry content, rendered when the writer
// reaches it.
func (b *binaries) overrides(pp *recipe.ResolvedPackage) func() (io.ReadCloser, int64, error) {
	return func() (io.ReadCloser, int64, error) {
		content := pp.Overrides(b.facts)
		if len(content) == 0 {
			content = []byte("# No lintian tag to override.\n")
		}
		return io.NopCloser(bytes.NewReader(content)), int64(len(content)), nil
	}
}
