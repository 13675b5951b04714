package deb

// Debian's naming rules, written once: updeb's recipe loader, release sets,
// repository, configuration and shell completion all check names with these,
// and Write and Inspect check control files with them.

// PackageNamePattern is dpkg's rule for a package name, binary or source
// (Debian policy 5.6.1), in regexp syntax: lower-case letters, digits and
// + . -, at least two characters, starting with a letter or digit. dpkg-deb
// lowercases an upper-case name silently; updeb refuses it, as apt's
// indexes use lower case.
const PackageNamePattern = `[a-z0-9][a-z0-9+.-]+`

// ArchitecturePattern is the rule for a Debian architecture name (amd64,
// arm64, armhf, ppc64el, musl-linux-amd64, all), in regexp syntax. "any" fits
// it, but names a source package's architectures only: ValidArchitecture
// refuses it.
const ArchitecturePattern = `[a-z0-9][a-z0-9-]*`

// ValidPackageName reports whether s is a package name (PackageNamePattern).
func ValidPackageName(s string) bool {
	if len(s) < 2 || !isLowerAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '+' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// ValidArchitecture reports whether s is the architecture of a binary
// package (ArchitecturePattern, not "any", nor "source", which names a source
// package's in dpkg and which dpkg -i refuses in a .deb).
func ValidArchitecture(s string) bool {
	if s == "" || s == "any" || s == "source" || !isLowerAlnum(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
func isAlnum(c byte) bool      { return isLowerAlnum(c) || c >= 'A' && c <= 'Z' }
