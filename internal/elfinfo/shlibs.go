package elfinfo

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/updeb/updeb/pkg/debversion"
)

// glibc's shared objects that Debian's libc6 ships on every architecture
// (its shlibs file names them), and the dynamic loaders of the
// architectures updeb builds for: a binary that needs one needs libc6.
var glibcSonames = map[string]bool{
	"libc.so.6": true, "libm.so.6": true, "libpthread.so.0": true, "libdl.so.2": true, "librt.so.1": true,
	"libresolv.so.2": true, "libutil.so.1": true, "libanl.so.1": true,
	"ld-linux-x86-64.so.2": true, "ld-linux-aarch64.so.1": true, "ld-linux-armhf.so.3": true, "ld-linux.so.2": true,
	"ld64.so.2": true, "ld64.so.1": true, "ld-linux-riscv64-lp64d.so.1": true,
}

// glibcVersionRE is a numbered glibc symbol version: GLIBC_2.34 is in
// libc6 2.34 and later (Debian's libc6 symbols file).
var glibcVersionRE = regexp.MustCompile(`^GLIBC_([0-9]+(\.[0-9]+)+)$`)

// glibcMarkers are glibc's other symbol versions a binary can need, with
// the libc6 version that brings them (Debian's libc6 symbols file).
var glibcMarkers = map[string]string{"GLIBC_ABI_DT_RELR": "2.36"}

// libraryPackages are the Debian 12 packages of shared libraries outside
// glibc that upstream binaries commonly need, each the only package that
// ships its soname on every architecture (the shlibs file of each names
// it): a binary that needs the soname needs the package.
var libraryPackages = map[string]string{
	"libstdc++.so.6": "libstdc++6", "libgcc_s.so.1": "libgcc-s1", "libz.so.1": "zlib1g",
	"libssl.so.3": "libssl3", "libcrypto.so.3": "libssl3", "libseccomp.so.2": "libseccomp2",
	"libsystemd.so.0": "libsystemd0",
}

// debian12Newest are, for the libraries of libraryPackages, the newest
// numbered symbol version of each series that Debian 12's package brings
// (its symbols file): libstdc++6 12 has GLIBCXX_3.4.30, a binary of
// GCC 13 may need GLIBCXX_3.4.31.
var debian12Newest = map[string]map[string]string{
	"libstdc++.so.6":  {"GLIBCXX_": "3.4.30", "CXXABI_": "1.3.13"},
	"libgcc_s.so.1":   {"GCC_": "12.0.0"},
	"libz.so.1":       {"ZLIB_": "1.2.12"},
	"libssl.so.3":     {"OPENSSL_": "3.0.9"},
	"libcrypto.so.3":  {"OPENSSL_": "3.0.9"},
	"libsystemd.so.0": {"LIBSYSTEMD_": "252"},
}

// numberedRE is a symbol version's number: 3.4.30 of GLIBCXX_3.4.30.
var numberedRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)

// newerThanDebian12 reports a symbol version of a library of
// libraryPackages that Debian 12's package does not bring.
func newerThanDebian12(v Version) bool {
	for prefix, newest := range debian12Newest[v.File] {
		if n, ok := strings.CutPrefix(v.Name, prefix); ok && numberedRE.MatchString(n) {
			c, err := debversion.CompareStrings(n, newest)
			return err == nil && c > 0
		}
	}
	return false
}

// Shlibs is what dpkg-shlibdeps concludes from binaries' dynamic sections,
// as far as it can be told from the binaries alone: Libc6 is the libc6
// relation they need ("" when none needs glibc; "libc6" when they need it
// but no symbol version of it; "libc6 (>= 2.34)" for the newest
// GLIBC_2.34), Packages the packages of the other libraries they need
// whose package updeb knows (libstdc++6 for libstdc++.so.6), sorted,
// Unmapped the other sonames they need, sorted, whose Debian package the
// binaries do not tell; Newer the versions they need of those packages'
// libraries that Debian 12's do not have ("libstdc++.so.6 GLIBCXX_3.4.31"),
// sorted: Packages names them unversioned.
type Shlibs struct {
	Libc6    string
	Packages []string
	Unmapped []string
	Newer    []string
}

// SharedLibraries works out Shlibs for binaries (name -> what a Sniffer
// learnt of it; each LibsKnown). A binary that needs glibc's private
// symbols (GLIBC_PRIVATE: only the glibc build it was linked with has
// them, dpkg-shlibdeps pins libc6 to that one release) or a glibc symbol
// version updeb does not know is an error that names it.
func SharedLibraries(binaries map[string]Info) (Shlibs, error) {
	var sh Shlibs
	var newest string
	names := make([]string, 0, len(binaries))
	for n := range binaries {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		i := binaries[n]
		for _, l := range i.Libraries {
			if glibcSonames[l] {
				sh.Libc6 = "libc6"
			} else if p := libraryPackages[l]; p != "" {
				if !slices.Contains(sh.Packages, p) {
					sh.Packages = append(sh.Packages, p)
				}
			} else if !slices.Contains(sh.Unmapped, l) {
				sh.Unmapped = append(sh.Unmapped, l)
			}
		}
		for _, v := range i.Versions {
			if newerThanDebian12(v) && !slices.Contains(sh.Newer, v.File+" "+v.Name) {
				sh.Newer = append(sh.Newer, v.File+" "+v.Name)
			}
			if !glibcSonames[v.File] {
				continue
			}
			sh.Libc6 = "libc6"
			var have string
			if m := glibcVersionRE.FindStringSubmatch(v.Name); m != nil {
				have = m[1]
			} else if v.Name == "GLIBC_PRIVATE" {
				return Shlibs{}, fmt.Errorf("%s needs glibc's private symbols (GLIBC_PRIVATE of %s): only the glibc build it was linked with has them, no libc6 release can be named for it", n, v.File)
			} else if have = glibcMarkers[v.Name]; have == "" {
				return Shlibs{}, fmt.Errorf("%s needs symbol version %s of %s, which no libc6 release is known to bring (only the glibc build it was linked with may have it)", n, v.Name, v.File)
			}
			if c, err := debversion.CompareStrings(have, newest); newest == "" || err == nil && c > 0 {
				newest = have
			}
		}
	}
	if newest != "" {
		sh.Libc6 = "libc6 (>= " + newest + ")"
	}
	slices.Sort(sh.Packages)
	slices.Sort(sh.Newer)
	slices.Sort(sh.Unmapped)
	return sh, nil
}
