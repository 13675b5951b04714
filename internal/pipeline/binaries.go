package pipeline

import (
	"bytes"
	"io"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/updeb/updeb/pkg/deb"

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
	if i.ELF && !i.LibsKnown {
		i.Unfortified, i.Fortified = true, false // its symbols were not read: the worst
	}
	return recipe.BinaryFacts{ELF: i.ELF, Unstripped: i.SymbolTable, Static: i.Static(), StaticPIE: i.StaticPIE(), Unhardened: i.Unhardened(), OtherLibc: i.NotLinkedAgainstLibc()}, true
}

// customSearchPath are the folders of an RPATH or RUNPATH (elfinfo.Info's
// SearchPath) of a binary of package pkg that lintian's binaries/rpath
// check flags (lintian 2.116): those not relative to $ORIGIN nor below
// the package's private folders (/lib/PKG, /usr/lib/PKG, the multiarch
// /usr/lib/x86_64-linux-gnu/PKG, /usr/lib/games/PKG) nor GHC's /usr/lib/ghc;
// lintian names the absolute ones custom-library-search-path, the
// relative ones relative-library-search-path, both errors.
func customSearchPath(pkg string, folders []string) []string {
	var out []string
	for _, f := range folders {
		if f == "" || strings.HasPrefix(f, "$ORIGIN") || strings.HasPrefix(f, "${ORIGIN}") {
			continue
		}
		c := path.Clean(f)
		private := strings.HasPrefix(c, "/usr/lib/ghc/") || c == "/usr/lib/ghc"
		for _, root := range []string{"/lib/", "/usr/lib/"} {
			rest, ok := strings.CutPrefix(c, root)
			if triplet, after, _ := strings.Cut(rest, "/"); ok && strings.Contains(triplet, "-linux-") {
				rest = after // any triplet: lintian allows the package architecture's
			}
			rest = strings.TrimPrefix(rest, "games/")
			private = private || ok && strings.HasPrefix(rest, pkg)
		}
		if !private && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
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

// libc6 sets the package's Depends on libc6 from what its binaries need of
// shared libraries (elfinfo.SharedLibraries), once every file went through
// the writer: pp.DependsOnLibc6, and the packages of the other libraries
// updeb knows (recipe.DependsOnLibraries). A package without ELF files, or
// whose binaries' needs could not be read, keeps the recipe's word
// (dynamic: true's plain libc6); a needed soname of a library updeb does
// not know is logged as a warning that says what to add, as are dynamic:
// true on binaries that need no shared library and a search path lintian
// flags (customSearchPath).
func (b *binaries) libc6(pp *recipe.ResolvedPackage, log *slog.Logger) func(c *deb.Control) error {
	return func(c *deb.Control) error {
		known := map[string]elfinfo.Info{}
		var unknown []string
		for dest, s := range b.seen {
			switch i := s.Info(); {
			case !i.ELF:
			case i.LibsKnown:
				known[strings.TrimPrefix(dest, "/")] = i
			default:
				unknown = append(unknown, dest)
			}
		}
		if len(known) == 0 && len(unknown) == 0 {
			return nil // no ELF file: nothing to learn, the recipe's word stands
		}
		sh, err := elfinfo.SharedLibraries(known)
		if err != nil {
			return err
		}
		if i := slices.Index(sh.Unmapped, "libc.so"); i >= 0 {
			// musl's soname (glibc's is libc.so.6): its loader,
			// /lib/ld-musl-ARCH.so.1, is the library, and only
			// Debian's musl ships it (dpkg -S libc.so finds
			// libc6-dev's linker script instead).
			log.Warn("the package's binaries are linked with musl (libc.so): add musl to the package's depends", "package", pp.Name)
			sh.Unmapped = slices.Delete(sh.Unmapped, i, i+1)
		}
		dests := slices.Sorted(maps.Keys(known))
		for _, dest := range dests {
			if custom := customSearchPath(pp.Name, known[dest].SearchPath); len(custom) > 0 {
				log.Warn("a binary searches shared libraries in folders of its own (RPATH or RUNPATH), before the system's: lintian's error custom-library-search-path (relative-library-search-path for a relative one); only a folder of the package's private libraries, /usr/lib/PACKAGE, or one relative to $ORIGIN is allowed: add an override with the reason to the recipe's lintian-overrides", "package", pp.Name, "file", "/"+dest, "folders", strings.Join(custom, " "))
			}
		}
		if len(sh.Newer) > 0 {
			log.Warn("the package's binaries need symbol versions of shared libraries newer than Debian 12's packages have (they will not start there), and Depends names those packages unversioned: add the release that brings them to the package's depends (libstdc++6 (>= 13))", "package", pp.Name, "versions", strings.Join(sh.Newer, ", "))
		}
		if len(sh.Unmapped) > 0 {
			log.Warn("the package's binaries need shared libraries that updeb cannot tell the Debian package of: add the packages that ship them to the package's depends (dpkg -S SONAME names one)", "package", pp.Name, "sonames", strings.Join(sh.Unmapped, " "))
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			log.Warn("cannot read which shared libraries these binaries need: Depends names libc6 as the other binaries, or dynamic: true, say", "package", pp.Name, "files", strings.Join(unknown, " "))
			if sh.Libc6 == "" {
				return nil
			}
		}
		deps := pp.DependsOnLibc6(sh.Libc6)
		if len(deps) < len(c.Depends) {
			log.Warn("dynamic: true, but no binary of the package needs glibc: no Depends on libc6 (drop dynamic: true)", "package", pp.Name)
		}
		c.Depends = recipe.DependsOnLibraries(deps, sh.Packages)
		return nil
	}
}
