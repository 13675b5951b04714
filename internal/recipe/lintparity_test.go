package recipe

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// loadWarnings loads text as recipes/x.yaml (it must load) and returns its
// warnings as "LINE:COL: message".
func loadWarnings(t *testing.T, text string, files map[string]string) []string {
	t.Helper()
	findings, warnings := loadProblems(t, text, files)
	if len(findings) > 0 {
		t.Fatalf("findings:\n%s", strings.Join(findings, "\n"))
	}
	return warnings
}

// loadProblems loads text as recipes/x.yaml, with these files in its
// folder, and returns its findings, or else its warnings, each as
// "LINE:COL: message".
func loadProblems(t *testing.T, text string, files map[string]string) (findings, warnings []string) {
	t.Helper()
	dir, file := writeProject(t, text)
	for name, content := range files {
		writeFile(t, dir, "recipes/x/"+name, content)
	}
	r, err := Load(file, LoadOptions{})
	var e *Error
	if errors.As(err, &e) {
		for _, f := range e.Findings {
			findings = append(findings, strings.TrimPrefix(f.String(), file+":"))
		}
		return findings, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range r.Warnings {
		warnings = append(warnings, strings.TrimPrefix(w.String(), file+":"))
	}
	return nil, warnings
}

// TestLintianParityWarnings: what lintian would flag in the built package
// and the recipe controls, lint warns about at the recipe's line, saying
// what to write instead; what lintian lets pass, lint does too.
func TestLintianParityWarnings(t *testing.T) {
	long := strings.Repeat("y", 80)
	// lintian 2.116's data/fields/archive-sections and archive areas.
	const sections = "one of admin, cli-mono, comm, database, debian-installer, debug, devel, doc, editors, education, electronics, embedded, fonts, games, gnome, gnu-r, gnustep, golang, graphics, hamradio, haskell, httpd, interpreters, introspection, java, javascript, kde, kernel, libdevel, libs, lisp, localization, mail, math, metapackages, misc, net, news, ocaml, oldlibs, otherosfs, perl, php, python, raku, ruby, rust, science, shells, sound, tasks, tex, text, utils, vcs, video, web, x11, xfce, zope, optionally after contrib/, non-free/ or non-free-firmware/"
	tests := []struct {
		name, old, new string
		want           []string
	}{
		// The control file indents each line by a space: 79 characters
		// pass lintian, 80 do not. Characters, not bytes.
		{"description lines of 79 characters", "    description: The X tool.\n",
			"    description: |\n      " + long[:79] + "\n      " + strings.Repeat("ü", 79) + "\n", nil},
		{"description lines too long, literal block", "    description: The X tool.\n",
			"    description: |\n      The X tool.\n\n       " + long[:79] + "\n      " + strings.Repeat("ü", 80) + "  \n",
			[]string{
				"18:8: description: line 3 has 80 characters; lintian flags a line over 79 (extended-description-line-too-long: the control file indents it by a space, and 80 is the limit): break it into shorter lines",
				"19:7: description: line 4 has 80 characters; lintian flags a line over 79 (extended-description-line-too-long: the control file indents it by a space, and 80 is the limit): break it into shorter lines",
			}},
		{"description line too long, quoted", "    description: The X tool.\n",
			"    description: \"The X tool.\\n" + long + "{{.Name}}\"\n",
			[]string{"15:18: description: line 2 has 82 characters; lintian flags a line over 79 (extended-description-line-too-long: the control file indents it by a space, and 80 is the limit): break it into shorter lines"}},
		// The description as the control file has it: blank lines around
		// it dropped, inner ones "."; lintian warns about an empty
		// paragraph and about a first line that is indented.
		{"blank lines around the description", "    description: The X tool.\n",
			"    description: |\n\n      The X tool.\n\n      More.\n\n", nil},
		{"two blank lines", "    description: The X tool.\n",
			"    description: |\n      The X tool.\n\n      .\n      More.\n",
			[]string{"18:7: description: line 3 makes an empty paragraph (lintian's extended-description-contains-empty-paragraph): one empty line between paragraphs, none before the first or after the last"}},
		{"a paragraph break last", "    description: The X tool.\n", "    description: \"The X tool.\\n.\"\n",
			[]string{"15:18: description: line 2 makes an empty paragraph (lintian's extended-description-contains-empty-paragraph): one empty line between paragraphs, none before the first or after the last"}},
		{"a paragraph break alone", "    description: The X tool.\n", "    description: \".\"\n", nil},
		{"an indented first line", "    description: The X tool.\n", "    description: \"\\n  The X tool.\\nMore.\"\n",
			[]string{"15:18: description: line 2, the first, starts with white space, which shows it verbatim (lintian's description-starts-with-leading-spaces): start it at the margin"}},
		// lintian's synopsis-too-long counts characters.
		{"summary of 80 characters outside ASCII", "    summary: X tool\n", "    summary: " + strings.Repeat("é", 39) + " " + strings.Repeat("é", 40) + "\n", nil},
		// lintian's unknown-section: a section of the archive, after
		// one of its areas or none.
		{"a section of the archive in an area", "    section: admin\n", "    section: non-free/net\n", nil},
		{"a section that is not the archive's", "    section: admin\n", "    section: tools\n",
			[]string{`16:14: section: "tools" is not a section of the Debian archive (lintian's unknown-section): ` + sections}},
		{"an area that is not the archive's", "    section: admin\n", "    section: main/admin\n",
			[]string{`16:14: section: "main/admin" is not a section of the Debian archive (lintian's unknown-section): ` + sections}},
		// lintian's conflicts-with-dependency: a relation satisfies the
		// conflict when every version it takes is one the conflict names.
		{"conflicts with a dependency", "    section: admin\n",
			"    section: admin\n    depends: [\"libfoo (= 1.2) | libfoo (<< 1)\", libbar, \"libbaz (>= 2)\", \"libqux | libfoo\"]\n    conflicts: [libbar, libbaz, \"libqux:any\"]\n    breaks: [\"libfoo (<< 2)\", \"libbaz (>= 1)\"]\n",
			[]string{
				`18:17: conflicts: "libbar": package xx also depends "libbar", which satisfies it (lintian's conflicts-with-dependency, an error, which updeb verify fails on): drop one of them`,
				`18:25: conflicts: "libbaz": package xx also depends "libbaz (>= 2)", which satisfies it (lintian's conflicts-with-dependency, an error, which updeb verify fails on): drop one of them`,
				`19:14: breaks: "libfoo (<< 2)": package xx also depends "libfoo (= 1.2) | libfoo (<< 1)", which satisfies it (lintian's conflicts-with-dependency, an error, which updeb verify fails on): drop one of them`,
				`19:31: breaks: "libbaz (>= 1)": package xx also depends "libbaz (>= 2)", which satisfies it (lintian's conflicts-with-dependency, an error, which updeb verify fails on): drop one of them`,
			}},
		{"conflicts no dependency satisfies", "    section: admin\n",
			"    section: admin\n    depends: [\"libfoo (>= 1.2)\", \"libqux | libbar\", \"libbaz:any\"]\n    breaks: [\"libfoo (<< 2)\", libbar, libbaz]\n", nil},
		// lintian's errors about a maintainer (Fields/MailAddress).
		{"a maintainer lintian takes", "copyright: X Authors\n", "copyright: X Authors\nmaintainer: \"Jörg Q. Müller (ops) <jörg.m+deb@example.org>\"\n", nil},
		{"a maintainer with a quoted word", "copyright: X Authors\n", "copyright: X Authors\nmaintainer: 'Ops \"@home; [x]\" Team <ops@example.org>'\n", nil},
		{"a maintainer with @ in the name", "copyright: X Authors\n", "copyright: X Authors\nmaintainer: \"Ops@Example <ops@example.org>\"\n",
			[]string{`6:13: maintainer: "Ops@Example <ops@example.org>" draws lintian's malformed-contact: the name holds one of @ ; [ ] \ " (quote the name to keep it)`}},
		{"a maintainer at a host without a dot", "copyright: X Authors\n", "copyright: X Authors\nmaintainer: \"Ops <ops@localhost>\"\n",
			[]string{`6:13: maintainer: "Ops <ops@localhost>" draws lintian's bogus-mail-host: the mail host is not a domain name of two or more labels of letters, digits and inner hyphens`}},
		{"a maintainer with a trailing dot", "copyright: X Authors\n", "copyright: X Authors\nmaintainer: \"Ops <ops@example.org.>\"\n",
			[]string{"6:13: maintainer: \"Ops <ops@example.org.>\" draws lintian's malformed-contact: the address is not letters, digits and !#$%&'*+/=?^_`{|}~- in dot-separated parts"}},
		{"root as the maintainer", "copyright: X Authors\n", "copyright: X Authors\nmaintainer: \"Ops <root@example.org>\"\n",
			[]string{`6:13: maintainer: "Ops <root@example.org>" draws lintian's root-in-contact: write the address of a person or a team`}},
		// lintian splits a conffiles line at spaces (dpkg does not).
		{"a conffile with a space", "    systemd-units: [x.service]\n",
			"      - {file: x.service, dest: \"/etc/x/a b.conf\"}\n      - {file: x.service, dest: \"/etc/x/c d.conf\", conffile: false}\n    systemd-units: [x.service]\n",
			[]string{`20:33: dest: "/etc/x/a b.conf" is a conffile with a space in its name: dpkg takes it, but lintian reads the part before the last space as a conffile flag and reports errors (unknown-conffile-instruction, relative-conffile, missing-conffile, ...), which updeb verify fails on: rename it, or say conffile: false`}},
		// A package that triggers ldconfig must ship what it reads.
		{"ldconfig trigger without a library", "    systemd-units: [x.service]\n",
			"    systemd-units: [x.service]\n    triggers: [activate-await x-reload, activate-noawait ldconfig]\n",
			[]string{`21:41: triggers: "activate-noawait ldconfig": package xx installs nothing in a folder ldconfig reads (/usr/lib, /usr/lib/TRIPLET, /lib, /lib64, ...), so ldconfig has nothing to learn (lintian's package-has-unnecessary-activation-of-ldconfig-trigger): leave the trigger out`}},
		{"ldconfig trigger with a multiarch library", "    systemd-units: [x.service]\n",
			"      - {source: bin, path: x, dest: \"/usr/lib/{{.Arch}}-linux-gnu/libx.so.1\"}\n    systemd-units: [x.service]\n    triggers: [activate-noawait ldconfig]\n", nil},
		{"ldconfig trigger with a symlink in /usr/lib", "    systemd-units: [x.service]\n",
			"    symlinks: [{dest: /usr/lib/libx.so.1, target: /opt/x/libx.so.1}]\n    systemd-units: [x.service]\n    triggers: [activate-noawait ldconfig]\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(baseRecipe, tt.old) {
				t.Fatalf("base recipe lacks %q", tt.old)
			}
			got := loadWarnings(t, strings.Replace(baseRecipe, tt.old, tt.new, 1), nil)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRelativeSymlinkTag: the errors lintian 2.116 raised for these links
// of one package (dpkg-deb -b of a tree with them, lintian -I -E
// --pedantic), the first of each link's.
func TestRelativeSymlinkTag(t *testing.T) {
	for _, tt := range []struct{ dest, target, tag string }{
		{"/usr/share/x/a", "../../etc/x", ""}, // /usr/etc/x
		{"/usr/share/x", "../../etc/x", "relative-symlink"},
		{"/etc/g", "../usr/x", "relative-symlink"},
		{"/usr/share/x/c", "../../../../x", "symlink-has-too-many-up-segments"},
		{"/usr/share/x/d", "./y", "symlink-contains-spurious-segments"},
		{"/usr/share/x/e", "../x/../y", "lengthy-symlink"},
		{"/usr/share/x/f", "../doc/y", ""},
		{"/usr/share/x/h", "..", ""}, // symlink-is-self-recursive, a warning
		{"/usr/bin/x", "y", ""},
		{"/usr/bin/x", "/etc/y", ""},
	} {
		if tag, _ := relativeSymlinkTag(tt.dest, tt.target); tag != tt.tag {
			t.Errorf("%s -> %s: %q, want %q", tt.dest, tt.target, tag, tt.tag)
		}
	}
}

// A relative symlink lintian flags as an error refuses the recipe, unless
// the package overrides the tag (base-files' /etc/os-release is meant so).
func TestRelativeSymlinkRefused(t *testing.T) {
	links := "    symlinks: [{dest: /etc/x.conf, target: ../usr/share/x/x.conf}]\n    systemd-units: [x.service]\n"
	text := strings.Replace(baseRecipe, "    systemd-units: [x.service]\n", links, 1)
	want := []string{`20:44: symlink target: /etc/x.conf -> ../usr/share/x/x.conf leads from the top-level folder /etc into another one by a relative path, which lintian flags as an error (relative-symlink): write the target absolute, /usr/share/x/x.conf, or add "relative-symlink" to lintian-overrides with a comment saying why it must be so`}
	if got := loadWarnings(t, text, nil); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	overridden := strings.Replace(text, "    systemd-units:", "    lintian-overrides: [\"relative-symlink ../usr/share/x/x.conf [etc/x.conf]\"]\n    systemd-units:", 1)
	if got := loadWarnings(t, overridden, nil); got != nil {
		t.Errorf("overridden: warnings:\n%s", strings.Join(got, "\n"))
	}
}

// TestLintianDescriptionErrors: the summaries and description lines that
// lintian reports (errors that verify's lintian run then fails on, and an
// article at the start, its warning) are lint warnings at their line: the
// package builds as it did, and the author learns it before verify.
func TestLintianDescriptionErrors(t *testing.T) {
	for _, tt := range []struct{ name, old, new, want string }{
		{"one word", "summary: X tool", "summary: Xtool", `14:14: summary: "Xtool" is one word (lintian's description-too-short, an error): say in a few words what the package is`},
		{"starts with the name", "summary: X tool", "summary: xx command line tool", `14:14: summary: "xx command line tool" starts with the package's name (lintian's description-starts-with-package-name, an error): say what it is, without the name ("command line tool")`},
		{"the package's name", "summary: X tool", "summary: x-x", `14:14: summary: "x-x" is one word (lintian's description-too-short, an error): say in a few words what the package is`},
		{"a tab", "summary: X tool", "summary: \"X\\ttool\"", `14:14: summary: "X\ttool" holds a tab (lintian's description-contains-tabs, an error): use spaces`},
		{"said again", "description: The X tool.", "description: \"X tool!\\nMore.\"", "14:14: summary: the description's first line says it again (lintian's description-synopsis-is-duplicated, an error): start the description with what the summary does not say"},
		{"a control statement", "description: The X tool.", "description: \"The X tool.\\n.x\\nMore.\"", `15:18: description: line 2, ".x", reads as a control statement in the package (lintian's description-contains-invalid-control-statement, an error): start it with another character, or leave the line empty for a paragraph break`},
		{"an article", "summary: X tool", "summary: A tool for X", `14:14: summary: "A tool for X" starts with an article (lintian's description-synopsis-starts-with-article): leave it out`},
		{"a paragraph break", "description: The X tool.", "description: \"The X tool.\\n.\\nMore.\"", ""},
		// lintian 2.116: missing-conffile etc/x/é.conf, file-in-etc-not-marked-as-conffile [etc/x/Ã©.conf].
		{"a conffile outside ASCII", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /etc/x/\u00e9.conf}\n", `20:33: dest: "/etc/x/é.conf" is a conffile with characters outside ASCII in its name: dpkg takes it, but lintian reads the package's file names as Latin-1 and its conffiles as UTF-8, finds neither in the other and reports errors (missing-conffile, file-in-etc-not-marked-as-conffile), which updeb verify fails on: rename it, or say conffile: false`},
		{"a file under /etc outside ASCII, no conffile", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /etc/x/\u00e9.conf, conffile: false}\n", ""},
		{"a sudoers file at 0644", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /etc/sudoers.d/x}\n", `20:33: mode: /etc/sudoers.d/x is 0644; sudo wants its files in /etc/sudoers.d at 0440 (lintian's bad-perm-for-file-in-etc-sudoers.d, an error): write mode: "0440"`},
		{"a sudoers file at 0440", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /etc/sudoers.d/x, mode: \"0440\"}\n", ""},
		// sudo skips a sudoers.d file with a "." or a final "~" (sudoers(5)),
		// cron and run-parts one with a "." or "+" (cron(8), run-parts(8)):
		// the rules and the job never applied, and lint said nothing.
		{"a sudoers file with a dot", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /etc/sudoers.d/x.conf, mode: \"0440\"}\n", "20:33: dest: sudo skips a file in /etc/sudoers.d whose name holds a \".\" or ends in \"~\" (sudoers(5), @includedir), so the rules of /etc/sudoers.d/x.conf never apply: name it without them"},
		{"a sudoers backup name", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /etc/sudoers.d/x~, mode: \"0440\"}\n", "20:33: dest: sudo skips a file in /etc/sudoers.d whose name holds a \".\" or ends in \"~\" (sudoers(5), @includedir), so the rules of /etc/sudoers.d/x~ never apply: name it without them"},
		{"a cron job with a dot", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.timer, dest: /lib/systemd/system/x.timer}\n      - {file: x.default, dest: /etc/cron.daily/x.sh, mode: \"0755\"}\n", "21:33: dest: cron skips a file in /etc/cron.daily whose name holds a \".\" or \"+\" (run-parts' names: letters, digits, \"_\" and \"-\"), so /etc/cron.daily/x.sh never runs (lintian's run-parts-cron-filename-contains-illegal-chars): use \"_\" instead"},
		{"an executable cron table", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.timer, dest: /lib/systemd/system/x.timer}\n      - {file: x.default, dest: /etc/cron.d/x, mode: \"0755\"}\n", `21:33: mode: /etc/cron.d/x is 0755; a file in /etc/cron.d is a cron table, not a script (lintian's bad-permissions-for-etc-cron.d-script, an error, wants 0644): write mode: "0644"`},
		// run-parts runs only executable files, and a file in /etc is
		// 0644 unless the recipe says otherwise: the job never ran.
		{"a cron job not executable", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.timer, dest: /lib/systemd/system/x.timer}\n      - {file: x.default, dest: /etc/cron.daily/x}\n", `21:33: mode: /etc/cron.daily/x is 0644: run-parts runs only the executable files of /etc/cron.daily, so the job never runs (lintian's script-not-executable): write mode: "0755"`},
		// lintian wants an init script at 0755 exactly; lint said nothing
		// of the 0644 a file in /etc gets by default.
		{"an init script at 0644", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /etc/init.d/x}\n      - {file: x.default, dest: /etc/init.d/README}\n      - {file: x.default, dest: /etc/init.d/y, mode: \"0755\"}\n      - {file: x.default, dest: /etc/init.d/z, mode: \"0700\"}\n", `20:33: mode: /etc/init.d/x is 0644; an init script is 0755 (lintian's non-standard-file-permissions-for-etc-init.d-script, an error, which updeb verify fails on; not executable, it cannot run at all): write mode: "0755"` + "\n" +
			`23:33: mode: /etc/init.d/z is 0700; an init script is 0755 (lintian's non-standard-file-permissions-for-etc-init.d-script, an error, which updeb verify fails on): write mode: "0755"`},
		// lintian's errors for what a path is by its name, which lint
		// did not know: an uncompressed manual page (or a link so named),
		// Python bytecode and its cache folder.
		{"an uncompressed manual page", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /usr/share/man/man1/x.1}\n      - {file: x.default, dest: /usr/share/man/de/man8/x.8.gz}\n", `20:33: dest: /usr/share/man/man1/x.1 is a manual page that is not gzip-compressed (lintian's uncompressed-manual-page, an error that updeb verify fails on): install the page compressed with gzip -9n, under a name ending in .gz (and a link to one so named)`},
		{"Python bytecode", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /usr/lib/x/a.pyc}\n      - {file: x.default, dest: /usr/lib/x/__pycache__/b.cpython-311.pyc}\n      - {file: x.default, dest: /usr/lib/x/c.py}\n",
			`20:33: dest: /usr/lib/x/a.pyc is Python bytecode, which Python compiles on the node (lintian's package-installs-python-bytecode, an error that updeb verify fails on): leave it out` + "\n" +
				`21:33: dest: /usr/lib/x/__pycache__/b.cpython-311.pyc is in a folder of Python's bytecode cache, which Python writes on the node (lintian's package-installs-python-pycache-dir, an error that updeb verify fails on): leave it out`},
		// modprobe reads only *.conf in /etc/modprobe.d: the options never applied.
		{"a modprobe.d file not named .conf", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /etc/modprobe.d/x}\n      - {file: x.default, dest: /etc/modprobe.d/y.conf}\n", `20:33: dest: modprobe reads only the files of /etc/modprobe.d whose name ends in .conf (modprobe.d(5)), so /etc/modprobe.d/x never applies (lintian's non-conf-file-in-modprobe.d, an error): name it so`},
		// A command stated 0644 (a mode copied from a data file) cannot
		// run, and lintian says nothing of it.
		{"a command nobody may execute", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: /usr/sbin/x-a, mode: \"0644\"}\n      - {file: x.default, dest: /usr/sbin/x-b, mode: \"0750\"}\n", `20:54: mode: /usr/sbin/x-a is 0644: a command that nobody may execute cannot be run: leave mode out (commands get 0755) or write one with x bits`},
		{"a cron table and job as cron reads them", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.timer, dest: /lib/systemd/system/x.timer}\n      - {file: x.default, dest: /etc/cron.d/x_y-z}\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(baseRecipe, tt.old) {
				t.Fatalf("base recipe lacks %q", tt.old)
			}
			got := loadWarnings(t, strings.Replace(baseRecipe, tt.old, tt.new, 1), nil)
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

// TestPlainHTTPWarning: a download or checksum file over plain http is
// allowed (the pins decide) but warned about at its line: bump counts no
// checksum file fetched over http as vouching.
func TestPlainHTTPWarning(t *testing.T) {
	text := strings.Replace(baseRecipe, "    url: https://example.org/x-{{.Arch}}.tar.gz\n",
		"    url: http://example.org/x-{{.Arch}}.tar.gz\n    checksums: {url: \"http://example.org/SHA256SUMS\"}\n", 1)
	got := loadWarnings(t, text, nil)
	if len(got) != 2 || !strings.HasPrefix(got[0], "9:10: url: plain http") || !strings.HasPrefix(got[1], "10:22: checksums.url: plain http") {
		t.Errorf("warnings:\n%s", strings.Join(got, "\n"))
	}
	if got := loadWarnings(t, baseRecipe, nil); len(got) != 0 {
		t.Errorf("https: warnings %v", got)
	}
}

// TestPackedRawWarning: a URL whose name says an archive or compression
// that updeb does not unpack (.tar.zst, .bz2, ...) is packaged as a raw
// file when no kind is written: lint warns at the URL; kind: raw, or a
// kind updeb reads, says nothing.
func TestPackedRawWarning(t *testing.T) {
	raw := strings.Replace(baseRecipe, "{source: bin, path: x, dest: /usr/bin/x}", "{source: bin, dest: /usr/bin/x}", 1)
	for _, tt := range []struct{ url, kind, want string }{
		{"x-{{.Arch}}.tar.zst", "", "9:10: url: ends in .tar.zst, an archive or compression updeb does not unpack"},
		{"x-{{.Arch}}.BZ2?download=1", "", "9:10: url: ends in .bz2,"},
		{"x-{{.Arch}}.tar.zst", "raw", ""},
		{"x-{{.Arch}}", "", ""},
	} {
		text := strings.Replace(raw, "url: https://example.org/x-{{.Arch}}.tar.gz\n", "url: https://example.org/"+tt.url+"\n", 1)
		if tt.kind != "" {
			text = strings.Replace(text, "    sha256:", "    kind: "+tt.kind+"\n    sha256:", 1)
		}
		got := strings.Join(loadWarnings(t, text, nil), "\n")
		if tt.want == "" && strings.Contains(got, "does not unpack") || tt.want != "" && !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s (kind %q): warnings:\n%s\nwant %q", tt.url, tt.kind, got, tt.want)
		}
	}
}

// TestDebianSectionsAreLintians: the sections lint knows are those of the
// installed lintian's data (fields/archive-sections), no more, no fewer.
func TestDebianSectionsAreLintians(t *testing.T) {
	testenv.RequireTool(t, "lintian")
	data, err := os.ReadFile("/usr/share/lintian/data/fields/archive-sections")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for line := range strings.Lines(string(data)) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(debianSections)); !slices.Equal(got, want) {
		t.Errorf("sections:\n%q\nlintian's:\n%q", got, want)
	}
}

// TestCronJobWithoutTimer: lint warns at a cron job of a package that
// installs no systemd timer exactly where lintian raises
// missing-systemd-timer-for-cron-script (a warning: on a system without
// cron the job never runs), checked with lintian on a package of the same
// paths built by dpkg-deb; the recipe's override silences it.
func TestCronJobWithoutTimer(t *testing.T) {
	tools := testenv.RequireTool(t, "dpkg-deb", "lintian")
	const tag = "missing-systemd-timer-for-cron-script"
	for _, tt := range []struct {
		name  string
		dests []string
	}{
		{"a cron table", []string{"/etc/cron.d/x"}},
		{"a daily job", []string{"/etc/cron.daily/x"}},
		{"a cron table and a timer", []string{"/etc/cron.d/x", "/lib/systemd/system/x.timer"}},
		{"a weekly job and a timer in /usr/lib", []string{"/etc/cron.weekly/x", "/usr/lib/systemd/system/x.timer"}},
		{"no cron job", []string{"/etc/x/x.conf"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tree := filepath.Join(t.TempDir(), "tree")
			files := ""
			for _, d := range tt.dests {
				mode := os.FileMode(0o644)
				if strings.Contains(d, "/cron.") && !strings.Contains(d, "/cron.d/") {
					mode = 0o755
				}
				writeFile(t, tree, d, "x\n")
				if err := os.Chmod(filepath.Join(tree, d), mode); err != nil {
					t.Fatal(err)
				}
				local := "x.default"
				if strings.HasSuffix(d, ".timer") {
					local = "x.timer"
				}
				files += fmt.Sprintf("      - {file: %s, dest: %s, mode: \"%04o\"}\n", local, d, mode)
			}
			out := lintianOnTree(t, tools, tree, "1.0-1", "")
			lintian := strings.Contains(out, " "+tag+" ")

			text := strings.Replace(baseRecipe, "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n"+files, 1)
			warned := slices.ContainsFunc(loadWarnings(t, text, nil), func(w string) bool { return strings.Contains(w, tag) })
			if warned != lintian {
				t.Errorf("lint warns: %v, lintian raises %s: %v\n%s", warned, tag, lintian, out)
			}
			overridden := strings.Replace(text, "    systemd-units:", "    lintian-overrides: [\""+tag+"\"]\n    systemd-units:", 1)
			if slices.ContainsFunc(loadWarnings(t, overridden, nil), func(w string) bool { return strings.Contains(w, tag) }) {
				t.Errorf("lint warns about %s although the recipe overrides it", tag)
			}
		})
	}
}

// TestFileNameErrors: lint warns at a dest exactly where lintian raises an
// error for the file's name, which updeb verify fails on: a command (in
// bin, sbin, usr/bin, usr/sbin, usr/games) named outside ASCII
// (file-name-in-PATH-is-not-ASCII), a file named "*" (star-file) or "-"
// (hyphen-file), a file in a runlevel folder (package-installs-into-etc-rc.d)
// or /etc/rc.boot (package-installs-into-etc-rc.boot), in
// /etc/ld.so.conf.d (package-modifies-ld.so-search-path) or /etc/skel
// (package-contains-file-in-etc-skel); checked with lintian on a package
// of the same paths built by dpkg-deb.
func TestFileNameErrors(t *testing.T) {
	tools := testenv.RequireTool(t, "dpkg-deb", "lintian")
	for _, tt := range []struct {
		dest, tag string
	}{
		{"/usr/bin/grüß", "file-name-in-PATH-is-not-ASCII"},
		{"/sbin/x-ü", "file-name-in-PATH-is-not-ASCII"},
		{"/usr/bin/y/ü", ""},
		{"/usr/share/x/grüß", ""},
		{"/usr/share/x/*", "star-file"},
		{"/usr/share/x/-", "hyphen-file"},
		{"/usr/bin/-x", ""},
		{"/etc/rc2.d/S01xx", "package-installs-into-etc-rc.d"},
		{"/etc/rcS.d/S01xx", "package-installs-into-etc-rc.d"},
		{"/etc/rc.d/xx", "package-installs-into-etc-rc.d"},
		{"/etc/rc.boot/xx", "package-installs-into-etc-rc.boot"},
		{"/etc/rc2.dx/xx", ""},
		{"/etc/ld.so.conf.d/xx.conf", "package-modifies-ld.so-search-path"},
		{"/etc/skel/.xxrc", "package-contains-file-in-etc-skel"},
		{"/etc/skel/.bashrc", ""},
		{"/etc/skel/.profile", ""},
	} {
		t.Run(tt.dest, func(t *testing.T) {
			tree := filepath.Join(t.TempDir(), "tree")
			writeFile(t, tree, tt.dest, "x\n")
			out := lintianOnTree(t, tools, tree, "1.0-1", "")
			var raised []string
			for _, tag := range []string{"file-name-in-PATH-is-not-ASCII", "star-file", "hyphen-file", "package-installs-into-etc-rc.d", "package-installs-into-etc-rc.boot",
				"package-modifies-ld.so-search-path", "package-contains-file-in-etc-skel"} {
				if strings.Contains(out, " "+tag+" ") {
					raised = append(raised, tag)
				}
			}
			if want := strings.Fields(tt.tag); !slices.Equal(raised, want) {
				t.Fatalf("lintian raises %v, the case says %v:\n%s", raised, want, out)
			}

			text := strings.Replace(baseRecipe, "      - {file: x.service, dest: /lib/systemd/system/x.service}\n", "      - {file: x.service, dest: /lib/systemd/system/x.service}\n      - {file: x.default, dest: \""+tt.dest+"\"}\n", 1)
			var warned []string
			for _, w := range loadWarnings(t, text, nil) {
				if strings.Contains(w, "lintian's ") && strings.Contains(w, tt.dest) {
					warned = append(warned, w)
				}
			}
			switch {
			case tt.tag == "" && len(warned) > 0:
				t.Errorf("lint warns, lintian says nothing: %q", warned)
			case tt.tag != "" && (len(warned) != 1 || !strings.Contains(warned[0], "(lintian's "+tt.tag+", an error that updeb verify fails on)")):
				t.Errorf("lint warns %q, lintian raises %s", warned, tt.tag)
			}
			if tt.tag == "" {
				return
			}
			overridden := strings.Replace(text, "    systemd-units:", "    lintian-overrides: [\""+tt.tag+"\"]\n    systemd-units:", 1)
			if slices.ContainsFunc(loadWarnings(t, overridden, nil), func(w string) bool { return strings.Contains(w, tt.tag) }) {
				t.Errorf("lint warns about %s although the recipe overrides it", tt.tag)
			}
		})
	}
}

// lintianOnTree builds the folder tree (package xx of the version, with
// the control fields given, each a line) with dpkg-deb and returns what
// lintian says of it at testenv.LintianLevel; tools are dpkg-deb's and
// lintian's paths.
func lintianOnTree(t *testing.T, tools []string, tree, version, fields string) string {
	t.Helper()
	writeFile(t, tree, "DEBIAN/control", "Package: xx\nVersion: "+version+"\nArchitecture: all\nMaintainer: X <x@example.org>\n"+fields+"Description: X tool\n The X tool.\n")
	deb := filepath.Join(t.TempDir(), "xx.deb")
	testenv.Run(t, tools[0], "--root-owner-group", "--build", tree, deb)
	cmd := exec.Command(tools[1], append(slices.Clone(testenv.LintianLevel), deb)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, _ := cmd.CombinedOutput() // exits 1 on errors
	return string(out)
}

// TestEssentialDependency: lint warns at a relation exactly where lintian
// raises depends-on-essential-package-without-using-version (an error,
// which updeb verify fails on): an essential package but diffutils and
// dash, named without a version in Pre-Depends, Depends, Recommends or
// Suggests; checked with lintian on a package of the same relations built
// by dpkg-deb; the recipe's override silences it.
func TestEssentialDependency(t *testing.T) {
	tools := testenv.RequireTool(t, "dpkg-deb", "lintian")
	const tag = "depends-on-essential-package-without-using-version"
	for _, tt := range []struct{ key, field, rel string }{
		{"depends", "Depends", "bash"},
		{"depends", "Depends", "zsh | coreutils:any"},
		{"recommends", "Recommends", "tar"},
		{"pre-depends", "Pre-Depends", "util-linux (>= 2.38)"},
		{"depends", "Depends", "dash"},
		{"suggests", "Suggests", "diffutils"},
		{"depends", "Depends", "libc6"},
	} {
		t.Run(tt.field+" "+tt.rel, func(t *testing.T) {
			tree := filepath.Join(t.TempDir(), "tree")
			writeFile(t, tree, "usr/share/xx/f", "x\n")
			lintian := strings.Contains(lintianOnTree(t, tools, tree, "1.0-1", tt.field+": "+tt.rel+"\n"), " "+tag+" ")

			text := strings.Replace(baseRecipe, "    section: admin\n", "    section: admin\n    "+tt.key+": [\""+tt.rel+"\"]\n", 1)
			checkWarnsAsLintian(t, text, tag, lintian)
		})
	}
}

// TestRevisionZero: lint warns at the revision exactly where lintian
// raises debian-revision-is-zero (an error, which updeb verify fails on):
// a version that ends in "-0"; checked with lintian on a package of that
// version built by dpkg-deb; an override in every package silences it.
func TestRevisionZero(t *testing.T) {
	tools := testenv.RequireTool(t, "dpkg-deb", "lintian")
	const tag = "debian-revision-is-zero"
	for _, revision := range []string{"0", "1", "10", "0.1", "0~rc1"} {
		t.Run(revision, func(t *testing.T) {
			tree := filepath.Join(t.TempDir(), "tree")
			writeFile(t, tree, "usr/share/xx/f", "x\n")
			lintian := strings.Contains(lintianOnTree(t, tools, tree, "1.0.0-"+revision, ""), " "+tag+" ")

			text := strings.Replace(baseRecipe, "version: 1.0.0\n", "version: 1.0.0\nrevision: \""+revision+"\"\n", 1)
			checkWarnsAsLintian(t, text, tag, lintian)
		})
	}
}

// checkWarnsAsLintian checks that lint warns about lintian's tag for the
// recipe text exactly where lintian raises it, and not once the recipe's
// package overrides it.
func checkWarnsAsLintian(t *testing.T, text, tag string, lintian bool) {
	t.Helper()
	warned := slices.ContainsFunc(loadWarnings(t, text, nil), func(w string) bool { return strings.Contains(w, tag) })
	if warned != lintian {
		t.Errorf("lint warns: %v, lintian raises %s: %v", warned, tag, lintian)
	}
	overridden := strings.Replace(text, "    systemd-units:", "    lintian-overrides: [\""+tag+"\"]\n    systemd-units:", 1)
	if slices.ContainsFunc(loadWarnings(t, overridden, nil), func(w string) bool { return strings.Contains(w, tag) }) {
		t.Errorf("lint warns about %s although the recipe overrides it", tag)
	}
}
