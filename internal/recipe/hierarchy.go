package recipe

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// hierarchyHint is an error of lintian's and where the path it is about
// is, for a message ("inside /var/run, which is made anew at every boot").
type hierarchyHint struct{ tag, where string }

// hierarchyTags are the errors lintian 2.116's files/hierarchy/standard
// check raises for the path p (clean, absolute) that a package installs as
// kind ("file", "symlink" or "directory"): one of its chain of cases, in
// its order, leaving out the ones that only warn (non-standard-dir-in-usr,
// non-multi-arch-lib-dir, file-in-unusual-dir), and use-of-compat-symlink,
// which it raises besides.
func hierarchyTags(pkg, p, kind string) []hierarchyHint {
	var tag, where string
	n := strings.TrimPrefix(p, "/")
	if kind == "directory" {
		n += "/"
	}
	top, _, _ := strings.Cut(n, "/")
	switch {
	case strings.HasPrefix(n, "etc/opt/") && n != "etc/opt/":
		tag, where = "dir-or-file-in-etc-opt", "inside /etc/opt, which is for the configuration of what is installed in /opt"
	case usrLocalRE.MatchString(n):
		tag, where = "file-in-usr-local", "inside /usr/local, which belongs to the local administrator"
		if kind == "directory" {
			tag = "dir-in-usr-local"
		}
	case usrShareFileRE.MatchString(n):
		if kind != "symlink" && kind != "directory" {
			tag, where = "file-directly-in-usr-share", "a file directly in /usr/share, which holds folders"
		}
	case strings.HasPrefix(n, "usr/bin/"):
		if kind == "directory" && n != "usr/bin/" && !strings.HasPrefix(n, "usr/bin/X11/") && !strings.HasPrefix(n, "usr/bin/mh/") {
			tag, where = "subdir-in-usr-bin", "a folder inside /usr/bin, which holds commands"
		}
	case usrSubdirRE.MatchString(n):
		if fsstndUsrRE.MatchString(n) {
			tag, where = "FSSTND-dir-in-usr", "a folder of the old FSSTND layout"
		}
	case varSubdirRE.MatchString(n):
		switch {
		case fsstndVarRE.MatchString(n):
			tag, where = "FSSTND-dir-in-var", "a folder of the old FSSTND layout"
		case pkg == "base-files" && (n == "var/backups/" || n == "var/local/"):
		case !fhsVarRE.MatchString(n):
			tag, where = "non-standard-dir-in-var", "a folder of /var that the FHS does not name"
		}
	case strings.HasPrefix(n, "var/lib/games/") && n != "var/lib/games/":
		tag, where = "non-standard-dir-in-var", "inside /var/lib/games, which the FHS does not name (/var/games)"
	case strings.HasPrefix(n, "var/lock/") && n != "var/lock/":
		tag, where = "dir-or-file-in-var-lock", "inside /var/lock, which is made anew at every boot"
	case strings.HasPrefix(n, "var/run/") && n != "var/run/":
		tag, where = "dir-or-file-in-var-run", "inside /var/run, which is made anew at every boot"
	case strings.HasPrefix(n, "run/") && n != "run/":
		tag, where = "dir-or-file-in-run", "inside /run, which is made anew at every boot"
	case usrWWWRE.MatchString(n):
		tag, where = "dir-or-file-in-var-www", "inside /var/www, which belongs to the local administrator"
	case strings.HasPrefix(n, "opt/") && n != "opt/":
		tag, where = "dir-or-file-in-opt", "inside /opt, which is for software that is not packaged for the system"
	case top == "hurd" || top == "servers":
	case (top == "home" || top == "root") && n != top+"/":
		tag, where = "dir-or-file-in-home", "inside a home folder, /"+top
	case tmpRE.MatchString(n):
		tag, where = "dir-or-file-in-tmp", "inside a folder for temporary files"
	case strings.HasPrefix(n, "mnt/") && n != "mnt/":
		tag, where = "dir-or-file-in-mnt", "inside /mnt, which is for mounts the administrator makes"
	case top == "bin":
		if kind == "directory" && n != "bin/" {
			tag, where = "subdir-in-bin", "a folder inside /bin, which holds commands"
		}
	case strings.HasPrefix(n, "srv/") && n != "srv/":
		tag, where = "dir-or-file-in-srv", "inside /srv, which belongs to the local administrator"
	case n == top+"/" && !fhsTop[top] && !libDirRE.MatchString(top) && pkg != "base-files" && pkg != "hurd":
		tag, where = "non-standard-toplevel-dir", "a top-level folder the FHS does not name"
	}
	var hints []hierarchyHint
	if tag != "" {
		hints = append(hints, hierarchyHint{tag, where})
	}
	if compatSymlinkRE.MatchString(n) {
		hints = append(hints, hierarchyHint{"use-of-compat-symlink", "under a compatibility symlink of the old layout"})
	}
	return hints
}

var (
	usrLocalRE      = regexp.MustCompile(`^usr/local/\S`)
	usrShareFileRE  = regexp.MustCompile(`^usr/share/[^/]+$`)
	usrSubdirRE     = regexp.MustCompile(`^usr/[^/]+/$`)
	fsstndUsrRE     = regexp.MustCompile(`^usr/(?:dict|doc|etc|info|man|adm|preserve)/`)
	varSubdirRE     = regexp.MustCompile(`^var/[^/]+/$`)
	fsstndVarRE     = regexp.MustCompile(`^var/(?:adm|catman|named|nis|preserve)/`)
	fhsVarRE        = regexp.MustCompile(`^var/(?:account|lib|cache|crash|games|lock|log|opt|run|spool|state|tmp|www|yp)/`)
	usrWWWRE        = regexp.MustCompile(`^var/www/\S`)
	tmpRE           = regexp.MustCompile(`^(?:tmp|var/tmp|usr/tmp)/.`)
	libDirRE        = regexp.MustCompile(`^lib(?:64|x?32)$`)
	compatSymlinkRE = regexp.MustCompile(`^(?:usr/(?:spool|tmp)/|usr/(?:doc|bin)/X11/|var/adm/)`)
	fhsTop          = map[string]bool{"bin": true, "boot": true, "dev": true, "etc": true, "home": true, "lib": true, "mnt": true,
		"opt": true, "root": true, "run": true, "sbin": true, "srv": true, "sys": true, "tmp": true, "usr": true, "var": true}
)

// hierarchy warns where a path the package installs (dest,
// as kind), or a folder above it, is one lintian's files/hierarchy/standard
// check reports as an error, which updeb verify fails on; not for a tag
// the recipe overrides.
func (pl *packageResolver) hierarchy(at *yaml.Node, what, dest, kind string) {
	// lintian's cases look at the first four names of a path at most
	// (var/lib/games/x): a deeper folder raises what one of those does.
	items := []string{dest}
	for i, n := 0, 0; n < 4; n++ {
		j := strings.IndexByte(dest[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
		items = append(items, dest[:i])
	}
	slices.Reverse(items[1:])
	for _, p := range items {
		k := kind
		if p != dest {
			k = "directory"
		}
		for _, h := range hierarchyTags(pl.pp.Name, p, k) {
			if pl.overrides(h.tag) {
				continue
			}
			where := h.where
			if p != dest {
				where = "in " + p + ", which is " + where
			}
			pl.fs.warn(at, "%s: %s is %s: lintian reports %s, an error that updeb verify fails on: install it elsewhere, or add %q to lintian-overrides with a comment saying why it must be there", what, dest, where, h.tag, h.tag)
			return
		}
	}
}

// overrides reports whether the recipe overrides lintian's tag for the
// package (lintian-overrides: "TAG" or "TAG CONTEXT").
func (pl *packageResolver) overrides(tag string) bool {
	for _, o := range pl.rp.Lintian {
		if strings.Fields(o)[0] == tag {
			return true
		}
	}
	return false
}

// rcDirRE is a path inside a runlevel folder, /etc/rc.d, /etc/rcN.d or
// /etc/rcS.d, as lintian 2.116's files/init check finds one.
var rcDirRE = regexp.MustCompile(`^/etc/rc[0-9S]?\.d/.`)

// skelFileRE is a name lintian 2.116's files/names check takes in
// /etc/skel (its regular expression as it is: .bashrc at the start,
// .profile at the end).
var skelFileRE = regexp.MustCompile(`^\.bashrc|\.bash_logout|\.m?kshrc|\.profile$`)

// pathDirs are the folders of commands whose names lintian 2.116's
// files/names check wants in ASCII.
var pathDirs = map[string]bool{"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true, "/usr/games": true}

// manPageRE is a manual page as lintian 2.116's documentation/manual
// check finds one: a file or symlink in a manN folder of /usr/share/man
// (a language's too); group 1 is its name.
var manPageRE = regexp.MustCompile(`^/usr/share/man/\S*man\d/([^/]+)$`)

// contentErrors warns where lintian reports an error, which updeb verify
// fails on, for what dest (installed as kind) is by its name: a manual page
// that is not gzip-compressed (uncompressed-manual-page), Python bytecode
// (package-installs-python-bytecode) and its cache folder
// (package-installs-python-pycache-dir), a file named "*" or "-"
// (star-file, hyphen-file), a command named outside ASCII
// (file-name-in-PATH-is-not-ASCII) and a path in a runlevel folder or
// /etc/rc.boot (package-installs-into-etc-rc.d, -rc.boot), in
// /etc/ld.so.conf.d (package-modifies-ld.so-search-path) and a file in
// /etc/skel but a shell's start-up file (package-contains-file-in-etc-skel);
// not for a tag lintian-overrides names.
func (pl *packageResolver) contentErrors(at *yaml.Node, what, dest, kind string) {
	var tag, is, fix string
	switch m := manPageRE.FindStringSubmatch(dest); {
	case m != nil && kind != "directory" && !strings.HasSuffix(m[1], ".gz"):
		tag, is, fix = "uncompressed-manual-page", "a manual page that is not gzip-compressed", "install the page compressed with gzip -9n, under a name ending in .gz (and a link to one so named)"
	case strings.Contains(dest+"/", "/__pycache__/"):
		tag, is, fix = "package-installs-python-pycache-dir", "in a folder of Python's bytecode cache, which Python writes on the node", "leave it out"
	case strings.HasSuffix(dest, ".pyc") || strings.HasSuffix(dest, ".pyo"):
		tag, is, fix = "package-installs-python-bytecode", "Python bytecode, which Python compiles on the node", "leave it out"
	case kind != "directory" && path.Base(dest) == "*":
		tag, is, fix = "star-file", `named "*", which a shell glob such as rm * takes for every file`, "name it otherwise"
	case kind != "directory" && path.Base(dest) == "-":
		tag, is, fix = "hyphen-file", `named "-", which commands take for standard input`, "name it otherwise"
	case kind != "directory" && pathDirs[path.Dir(dest)] && nonASCII.MatchString(path.Base(dest)):
		tag, is, fix = "file-name-in-PATH-is-not-ASCII", "a command whose name holds characters outside ASCII", "name it in ASCII"
	case rcDirRE.MatchString(dest):
		tag, is, fix = "package-installs-into-etc-rc.d", "in a runlevel folder, whose links update-rc.d makes for an init script", "leave it out, and install the init script in /etc/init.d"
	case strings.HasPrefix(dest, "/etc/rc.boot/"):
		tag, is, fix = "package-installs-into-etc-rc.boot", "in /etc/rc.boot, which Debian's init no longer reads", "leave it out"
	case strings.HasPrefix(dest, "/etc/ld.so.conf.d/") && !strings.HasPrefix(pl.pp.Name, "libc"):
		tag, is, fix = "package-modifies-ld.so-search-path", "in /etc/ld.so.conf.d, which adds folders to the library search path of every program on the node", "leave it out, and let the package's programs find their libraries themselves (an RPATH, or a wrapper that sets LD_LIBRARY_PATH)"
	case kind != "directory" && strings.HasPrefix(dest, "/etc/skel/") && !skelFileRE.MatchString(path.Base(dest)):
		tag, is, fix = "package-contains-file-in-etc-skel", "in /etc/skel, which useradd copies into every new home folder, where the package cannot update it", "leave it out, or install it elsewhere for users to copy"
	default:
		return
	}
	if !pl.overrides(tag) {
		pl.fs.warn(at, "%s: %s is %s (lintian's %s, an error that updeb verify fails on): %s", what, dest, is, tag, fix)
	}
}
