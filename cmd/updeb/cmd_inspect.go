package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/termtext"
)

func newInspectCmd(g *globalOptions) *cobra.Command {
	return jsonOutput(&cobra.Command{
		Use:   "inspect FILE.deb",
		Short: "Show the members, control fields, scripts and file list of a .deb",
		Long: `inspect reads any .deb (updeb's or dpkg-deb's; xz, gzip, zstd or no compression, and a
data.tar in bzip2 or lzma, which dpkg reads and dpkg-deb no longer writes) and
prints its ar members, control fields, conffiles, maintainer scripts and every data
entry with mode, owner, size and mtime. With --json the output is meant for diffing
two builds. A malformed archive exits 2, as does a file that cannot be opened
(missing, unreadable, not a regular file); one that fails while it is read exits 3. Whatever dpkg-deb or
dpkg would refuse is refused, and so is a decompression bomb (more than 1,000 times
the file's size, plus 64 MiB, or 8 GiB in all). Control characters and escape
sequences in names, link targets and owners are printed escaped (\x1b), and a backslash
as \\, as dpkg-deb -c escapes them (a name holding the text \x1b reads otherwise);
--json keeps the bytes, but for bytes that are not UTF-8 (JSON strings hold only
Unicode), which it writes as the text does (\xff); control and format characters
(bidi overrides) are JSON escapes there (\u001b, \u202e).

What the package says of its files and they contradict is listed under problems
(--json: "problems") and exits 1: an md5sums line whose md5 is not the file's, or that
names a file the package lacks or holds as no regular file (lintian's md5sum-mismatch,
md5sums-lists-nonexistent-file). dpkg installs such a package; debsums and dpkg --verify
then report its files changed on every system, and publish refuses it. A regular file
md5sums leaves out (lintian's warning file-missing-in-md5sums), and an Installed-Size
further than a tenth (and 1 MiB) from what the files take, are listed under warnings
(--json: "warnings"), and exit 0: nothing false is said of the file, and apt only
reports Installed-Size as the disk space the package uses.`,
		Example: `  updeb inspect out/helm_3.15.4-1_amd64.deb
  updeb inspect --json a.deb > a.json && updeb inspect --json b.deb | diff a.json -`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("inspect takes one FILE.deb, found %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// A file the user names that cannot be opened is exit 2, as
			// everywhere (scripting.md); one that fails while read, 3.
			if st, err := os.Stat(args[0]); err != nil {
				return invalidInput(err, "name the .deb to inspect")
			} else if !st.Mode().IsRegular() {
				return invalidInput(fmt.Errorf("%s: not a regular file (mode %s)", args[0], st.Mode().Type()), "name the .deb to inspect")
			}
			info, err := deb.InspectFile(cmd.Context(), args[0], archive.Limits{})
			// One that exists but cannot be opened (permission denied) too.
			if pe, ok := errors.AsType[*fs.PathError](err); ok && pe.Op == "open" {
				return invalidInput(err, "name a .deb this user can read")
			}
			if err != nil {
				return err
			}
			if g.json {
				err = printJSON(cmd.OutOrStdout(), cmd, info) // bytes not UTF-8 written \xff there
			} else {
				err = printInfo(cmd.OutOrStdout(), info)
			}
			if err == nil && len(info.Problems) > 0 {
				// dpkg installs it; lintian, debsums and dpkg --verify
				// find it lying, and publish refuses it.
				return checkFailed(fmt.Errorf("%s: %w", args[0], info.ProblemsError()), "see the problems above; publish refuses the package as it is")
			}
			return err
		},
	}, 1)
}

// printInfo prints what inspect found. Every text from the archive (names,
// link targets, owners, control fields) goes through termtext, as
// dpkg-deb -c escapes names: a hostile package's escape sequence must not
// reach the terminal of whoever inspects it, and two names print alike
// only when they are alike.
func printInfo(out io.Writer, info *deb.Info) error {
	esc := termtext.EscapeName
	fmt.Fprintln(out, "members:")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, m := range info.Members {
		fmt.Fprintf(w, "  %s\t%d\t%s\n", esc(m.Name), m.Size, m.Compression)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "control:")
	for _, line := range strings.SplitAfter(string(info.Control.Bytes()), "\n") {
		if line != "" {
			fmt.Fprint(out, "  "+termtext.EscapeLines(line))
		}
	}
	fmt.Fprintln(out, "conffiles:")
	for _, c := range info.Conffiles {
		fmt.Fprintf(out, "  %s\n", esc(c))
	}
	fmt.Fprintln(out, "scripts:")
	for _, s := range info.Scripts {
		fmt.Fprintf(out, "  %s %04o %d bytes\n", esc(s.Name), uint32(s.Mode.Perm()), s.Size)
	}
	if info.Triggers != "" {
		fmt.Fprintln(out, "triggers:")
		for _, l := range strings.Split(strings.TrimSuffix(info.Triggers, "\n"), "\n") {
			fmt.Fprintf(out, "  %s\n", termtext.EscapeLines(l))
		}
	}
	fmt.Fprintln(out, "files:")
	w = tabwriter.NewWriter(out, 0, 4, 1, ' ', 0)
	for _, f := range info.Files {
		name := esc(f.Path)
		switch f.Type {
		case "symlink":
			name += " -> " + esc(f.Linkname)
		case "hardlink":
			name += " link to " + esc(f.Linkname)
		}
		fmt.Fprintf(w, "  %s\t%s/%s\t%d\t%s\t%s\n", modeString(f), esc(f.Uname), esc(f.Gname), f.Size,
			f.MTime.UTC().Format("2006-01-02 15:04:05"), name)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, list := range []struct {
		title    string
		problems []deb.Problem
	}{{"problems", info.Problems}, {"warnings", info.Warnings}} {
		if len(list.problems) > 0 {
			fmt.Fprintln(out, list.title+":")
		}
		for _, p := range list.problems {
			fmt.Fprintf(out, "  %s\n", esc(p.Short())) // --json keeps a long path whole
		}
	}
	return nil
}

// modeString renders a mode as tar tv and ls -l do: drwxr-xr-x,
// lrwxrwxrwx, hrw-r--r--, with the special bits in the execute places
// (-rwsr-xr-x setuid, -rwxr-sr-x setgid, drwxrwxrwt sticky; S and T
// where the execute bit is unset).
func modeString(f deb.FileInfo) string {
	const rwx = "rwxrwxrwx"
	perm := []byte("---------")
	for i := range 9 {
		if f.Mode&(1<<(8-i)) != 0 {
			perm[i] = rwx[i]
		}
	}
	special := func(bit fs.FileMode, at int, set, unset byte) {
		if f.Mode&bit == 0 {
			return
		}
		if perm[at] == 'x' {
			perm[at] = set
		} else {
			perm[at] = unset
		}
	}
	special(fs.ModeSetuid, 2, 's', 'S')
	special(fs.ModeSetgid, 5, 's', 'S')
	special(fs.ModeSticky, 8, 't', 'T')
	kind := map[string]byte{"file": '-', "dir": 'd', "symlink": 'l', "hardlink": 'h', "char": 'c', "block": 'b', "fifo": 'p'}[f.Type]
	return string(kind) + string(perm)
}
