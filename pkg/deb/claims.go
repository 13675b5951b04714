package deb

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Problem is one thing a .deb says of itself that its own data.tar
// contradicts. dpkg installs such a package without a word (it checks none
// of it), and the tools that trust what it says then mislead: debsums and
// dpkg --verify report a file whose md5sums line lies as changed on every
// system that installs it, and say nothing of a file md5sums leaves out.
type Problem struct {
	Check  string `json:"check"`          // the control.tar file or control field that says it: "md5sums", "Installed-Size"
	Path   string `json:"path,omitempty"` // the file concerned, cleaned: "usr/bin/tool"
	Detail string `json:"detail"`         // what is wrong, in a sentence
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Check + ": " + p.Detail
	}
	return p.Check + ": " + p.Path + ": " + p.Detail
}

// Short is String with a long path shortened: md5sums may name a path of
// megabytes that no file has.
func (p Problem) Short() string {
	p.Path = shorten(p.Path)
	return p.String()
}

// maxProblemsShown bounds the problems ProblemsError names: a package whose
// md5sums lists none of its 10,000 files is one problem 10,000 times.
const maxProblemsShown = 5

// ProblemsError is nil for a package without Problems, and otherwise an
// error (ErrMalformed) that names the first few, counts the rest and says
// what to do.
func (info *Info) ProblemsError() error {
	if len(info.Problems) == 0 {
		return nil
	}
	var shown []string
	for i, p := range info.Problems {
		if i == maxProblemsShown {
			shown = append(shown, fmt.Sprintf("and %d more", len(info.Problems)-i))
			break
		}
		shown = append(shown, p.Short())
	}
	return malformed("what the package says of its files is not true of them (%s): debsums and dpkg --verify, which trust it, would report its files changed on every system that installs it, or never check them; rebuild it with DEBIAN/md5sums written from the files it ships (dh_md5sums does), or with none", strings.Join(shown, "; "))
}

// md5Line is one line of control.tar's md5sums.
type md5Line struct {
	line      int
	sum, name string
}

// checkMD5Sums compares control.tar's md5sums, unless there is none or it
// is empty (lintian then skips it too: no sums), with data.tar, as lintian
// does (md5sum-mismatch, md5sums-lists-nonexistent-file,
// file-missing-in-md5sums) and as dh_md5sums writes it: a line for each
// regular file, a hardlink's name included (with its target's md5), and
// for nothing else; the conffiles it may leave out (dpkg records their
// digests itself), and lists them rightly if at all. A line that is not
// true of the files is a problem; a file left out (lintian's warning
// file-missing-in-md5sums: nothing false is said of it) is unlisted, a
// warning. A name is matched as
// dpkg matches it, without its leading "/" or "./". The md5 of each file was
// taken as data.tar was read (addData), so this costs no second reading.
func (in *inspector) checkMD5Sums() (problems, unlisted []Problem) {
	if len(in.md5) == 0 {
		return nil, nil
	}
	sums := map[string]string{} // a regular file or hardlink (cleaned) -> its content's md5
	var files []string          // the same, in data.tar's order
	for _, f := range in.info.Files {
		name := path.Clean(f.Path)
		switch f.Type {
		case "file":
			sums[name] = f.MD5
		case "hardlink":
			sums[name] = sums[path.Clean(f.Linkname)]
		default:
			continue
		}
		files = append(files, name)
	}
	add := func(name, format string, args ...any) {
		problems = append(problems, Problem{Check: "md5sums", Path: name, Detail: fmt.Sprintf(format, args...)})
	}
	listed := map[string]int{} // cleaned name -> its line
	for _, l := range in.md5 {
		name := path.Clean(dpkgName(l.name))
		have, ok := sums[name]
		typ, shipped := in.data[name]
		switch {
		case listed[name] != 0:
			add(name, "listed on line %d and again on line %d", listed[name], l.line)
		case !shipped:
			add(name, "listed on line %d, but the package does not ship it", l.line)
		case !ok:
			add(name, "listed on line %d, but data.tar holds it as a %s; md5sums lists regular files only", l.line, tarTypeName(typ))
		case l.sum != have:
			add(name, "listed on line %d with md5 %s, but the file's md5 is %s", l.line, l.sum, have)
		}
		if listed[name] == 0 {
			listed[name] = l.line
		}
	}
	conffile := map[string]bool{}
	for _, c := range in.conf {
		conffile[strings.TrimPrefix(c.path, "/")] = true
	}
	for _, name := range files {
		if listed[name] == 0 && !conffile[name] {
			// A warning, as lintian's file-missing-in-md5sums is: debsums
			// checks the file less, and reports nothing false of it.
			unlisted = append(unlisted, Problem{Check: "md5sums", Path: name, Detail: "shipped, but md5sums does not list it (debsums and dpkg --verify cannot check it)"})
		}
	}
	return problems, unlisted
}

// installedSizeSlack is how far Installed-Size may be from what data.tar's
// files take before checkInstalledSize warns: a tenth, and at least 1 MiB.
// apt reports the field ("After this operation, 1,024 kB of additional
// disk space will be used") and dpkg does not read it: nothing is refused
// or broken by it, so it is a warning, and a few KiB (a builder that
// counted otherwise: du's blocks, the apparent size of all files at once)
// matter to no one.
const installedSizeSlack = 1024

// checkInstalledSize compares the control file's Installed-Size, when there
// is one, with dpkg-gencontrol's count of data.tar's entries (installedSize's
// rule: each regular file rounded up to whole KiB, a hardlink nothing more, a
// symlink by the length of its target, 1 for each other entry), and warns
// when it is further off than installedSizeSlack.
func (in *inspector) checkInstalledSize() []Problem {
	v, ok := in.info.Control.Get("Installed-Size")
	if !ok {
		return nil
	}
	said, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil // checkControl refused it
	}
	var kib int64
	for _, f := range in.info.Files {
		switch f.Type {
		case "file":
			kib += (f.Size + 1023) / 1024
		case "symlink":
			kib += (int64(len(f.Linkname)) + 1023) / 1024
		case "hardlink":
		default:
			kib++
		}
	}
	if diff := max(said-kib, kib-said); diff <= max(kib/10, installedSizeSlack) {
		return nil
	}
	return []Problem{{Check: "Installed-Size", Detail: fmt.Sprintf("the control file says %d KiB, but the files take %d KiB (dpkg-gencontrol's count): apt reports the one as the disk space the package uses; rebuild it with the Installed-Size dpkg-gencontrol computes, or none", said, kib)}}
}
