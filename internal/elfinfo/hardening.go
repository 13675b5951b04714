package elfinfo

import (
	"slices"
	"strings"
)

// hardenedFunctions are the functions glibc's _FORTIFY_SOURCE replaces by
// a checking __NAME_chk: lintian's data/binaries/hardened-functions
// (lintian 2.116), which its hardening-no-fortify-functions reads.
var hardenedFunctions = map[string]bool{}

func init() {
	for _, f := range []string{
		"asprintf", "confstr", "dprintf", "fdelt", "fgets", "fgets_unlocked", "fgetws", "fgetws_unlocked",
		"fprintf", "fread", "fread_unlocked", "fwprintf", "getcwd", "getdomainname", "getgroups", "gethostname",
		"getlogin_r", "gets", "getwd", "longjmp", "mbsnrtowcs", "mbsrtowcs", "mbstowcs", "mempcpy",
		"obstack_printf", "obstack_vprintf", "poll", "ppoll", "pread64", "pread", "printf", "ptsname_r", "read",
		"readlink", "readlinkat", "realpath", "recv", "recvfrom", "snprintf", "sprintf", "stpcpy", "stpncpy",
		"strcat", "strcpy", "strncat", "strncpy", "swprintf", "syslog", "ttyname_r", "vasprintf", "vdprintf",
		"vfprintf", "vfwprintf", "vprintf", "vsnprintf", "vsprintf", "vswprintf", "vsyslog", "vwprintf",
		"wcpcpy", "wcpncpy", "wcrtomb", "wcscat", "wcscpy", "wcsncat", "wcsncpy", "wcsnrtombs", "wcsrtombs",
		"wcstombs", "wctomb", "wmempcpy", "wprintf",
	} {
		hardenedFunctions[f] = true
	}
}

// NotLinkedAgainstLibc is the tag lintian's binaries/prerequisites check
// raises on a binary linked with a C library other than glibc (musl's,
// whose soname is libc.so): it counts only glibc's libc.so.N as one.
// library-not-linked-against-libc for a shared object or PIE,
// program-not-linked-against-libc for an ET_EXEC executable that does not
// need libstdc++ either; "" for a binary that needs glibc, none, or when
// its libraries are not LibsKnown.
func (i Info) NotLinkedAgainstLibc() string {
	has := func(prefix string) bool {
		return slices.ContainsFunc(i.Libraries, func(l string) bool { return strings.HasPrefix(l, prefix) })
	}
	switch {
	case !i.LibsKnown || !slices.Contains(i.Libraries, "libc.so") || has("libc.so."):
		return ""
	case i.Type == etDyn:
		return "library-not-linked-against-libc"
	case i.Type == etExec && !has("libstdc++.so."):
		return "program-not-linked-against-libc"
	}
	return ""
}

// Unhardened are the tags lintian's binaries/hardening check raises on a
// binary it sees built elsewhere, for the features dpkg-buildflags
// recommends on every Debian architecture: hardening-no-fortify-functions
// for a binary that calls a function glibc fortifies and no fortified one;
// for a dynamically linked executable or shared object,
// hardening-no-relro without PT_GNU_RELRO, hardening-no-bindnow without
// BindNow (DF_1_NOW, DF_BIND_NOW or DT_BIND_NOW), hardening-no-pie for an
// ET_EXEC executable. Fortified and Unfortified are facts only when i is
// LibsKnown.
func (i Info) Unhardened() []string {
	var tags []string
	if i.Unfortified && !i.Fortified {
		tags = append(tags, "hardening-no-fortify-functions")
	}
	if (i.Type != etExec && i.Type != etDyn) || !i.Needed {
		return tags
	}
	if !i.RELRO {
		tags = append(tags, "hardening-no-relro")
	}
	if !i.BindNow {
		tags = append(tags, "hardening-no-bindnow")
	}
	if i.Type == etExec {
		tags = append(tags, "hardening-no-pie")
	}
	return tags
}
