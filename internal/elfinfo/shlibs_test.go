package elfinfo

import (
	"reflect"
	"strings"
	"testing"
)

// TestSharedLibraries: libc6's version is the newest GLIBC_x.y a binary
// needs of any of glibc's sonames, compared as Debian versions (2.34 after
// 2.3.4 after 2.2.5), or the release that brought a marker version; plain
// libc6 for a binary that needs glibc but no version of it (dpkg-shlibdeps'
// floor, 2.2.5 on amd64, is older than any libc6 an apt can install);
// the packages of the libraries updeb knows (libstdc++6 for
// libstdc++.so.6, libssl3 once for libssl.so.3 and libcrypto.so.3) are
// named; other sonames (musl's libc.so) are named, not guessed;
// GLIBC_PRIVATE and unknown versions are refused with the binary's name.
func TestSharedLibraries(t *testing.T) {
	glibc := func(names ...string) []Version {
		var vs []Version
		for _, n := range names {
			vs = append(vs, Version{File: "libc.so.6", Name: n})
		}
		return vs
	}
	for _, c := range []struct {
		name string
		bins map[string]Info
		want Shlibs
		err  string
	}{
		{"newest", map[string]Info{
			"usr/bin/a": {Libraries: []string{"libc.so.6"}, Versions: glibc("GLIBC_2.2.5", "GLIBC_2.34", "GLIBC_2.3.4")},
			"usr/bin/b": {Libraries: []string{"libpthread.so.0", "libc.so.6"}, Versions: append(glibc("GLIBC_2.17"), Version{"libpthread.so.0", "GLIBC_2.3.2"})},
		}, Shlibs{Libc6: "libc6 (>= 2.34)"}, ""},
		{"loader's marker", map[string]Info{
			"usr/bin/a": {Libraries: []string{"libc.so.6"}, Versions: append(glibc("GLIBC_2.2.5"), Version{"ld-linux-x86-64.so.2", "GLIBC_ABI_DT_RELR"})},
		}, Shlibs{Libc6: "libc6 (>= 2.36)"}, ""},
		{"no version", map[string]Info{"usr/bin/a": {Libraries: []string{"libc.so.6"}}}, Shlibs{Libc6: "libc6"}, ""},
		{"static", map[string]Info{"usr/bin/a": {}}, Shlibs{}, ""},
		{"others", map[string]Info{
			"usr/bin/a": {Libraries: []string{"libstdc++.so.6", "libc.so.6", "libgcc_s.so.1"}, Versions: append(glibc("GLIBC_2.14"), Version{"libstdc++.so.6", "GLIBCXX_3.4.30"})},
			"usr/bin/m": {Libraries: []string{"libc.so"}},
			"usr/bin/s": {Libraries: []string{"libcrypto.so.3", "libssl.so.3", "libfoo.so.1", "libc.so.6"}},
		}, Shlibs{Libc6: "libc6 (>= 2.14)", Packages: []string{"libgcc-s1", "libssl3", "libstdc++6"}, Unmapped: []string{"libc.so", "libfoo.so.1"}}, ""},
		{"newer than Debian 12's", map[string]Info{
			"usr/bin/a": {Libraries: []string{"libstdc++.so.6", "libgcc_s.so.1", "libssl.so.3", "libc.so.6"}, Versions: []Version{
				{"libstdc++.so.6", "GLIBCXX_3.4.30"}, {"libstdc++.so.6", "GLIBCXX_3.4.32"}, {"libstdc++.so.6", "CXXABI_1.3.15"},
				{"libstdc++.so.6", "CXXABI_FLOAT128"}, {"libstdc++.so.6", "GLIBCXX_LDBL_3.4.31"}, {"libgcc_s.so.1", "GCC_13.0.0"},
				{"libgcc_s.so.1", "GCC_3.0"}, {"libssl.so.3", "OPENSSL_3.2.0"}, {"libssl.so.3", "OPENSSL_3.0.9"},
			}},
			"usr/bin/b": {Libraries: []string{"libstdc++.so.6"}, Versions: []Version{{"libstdc++.so.6", "GLIBCXX_3.4.32"}}},
		}, Shlibs{Libc6: "libc6", Packages: []string{"libgcc-s1", "libssl3", "libstdc++6"}, Newer: []string{
			"libgcc_s.so.1 GCC_13.0.0", "libssl.so.3 OPENSSL_3.2.0", "libstdc++.so.6 CXXABI_1.3.15", "libstdc++.so.6 GLIBCXX_3.4.32",
		}}, ""},
		{"private", map[string]Info{"usr/bin/a": {Libraries: []string{"libc.so.6"}, Versions: glibc("GLIBC_2.34", "GLIBC_PRIVATE")}}, Shlibs{}, "usr/bin/a needs glibc's private symbols (GLIBC_PRIVATE of libc.so.6)"},
		{"unknown", map[string]Info{"usr/bin/a": {Libraries: []string{"libc.so.6"}, Versions: glibc("GLIBC_ABI_NEW")}}, Shlibs{}, "usr/bin/a needs symbol version GLIBC_ABI_NEW of libc.so.6"},
	} {
		got, err := SharedLibraries(c.bins)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}
