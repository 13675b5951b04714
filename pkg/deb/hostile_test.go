package deb

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
)

// hostileCase is one .deb of the hostile corpus. accept is our verdict;
// stricter explains a refusal of what dpkg-deb and dpkg accept (a danger for
// a repository, or for apt); slow marks cases the referee does not run
// (dpkg would unpack gigabytes).
type hostileCase struct {
	name     string
	data     []byte
	accept   bool
	want     string // a part of our error message
	stricter string
	slow     bool
}

// hostileDebs builds the corpus. Every case is a small valid package with
// one thing wrong (or, for the accepted ones, one unusual thing right).
func hostileDebs(t testing.TB) []hostileCase {
	ctl := hCtlTar(hostileControl)
	data := buildTar(false, dataEntries()...)
	good := func(control, data []byte) []byte { return hdeb(t, control, data) }
	bin := arMem{name: "debian-binary", data: []byte("2.0\n")}
	ctlM := arMem{name: "control.tar.gz", data: gz(t, ctl)}
	dataM := arMem{name: "data.tar.gz", data: gz(t, data)}
	big := strings.Repeat("x", 300<<10)
	huge := strings.Repeat("y", 1<<20)
	truncated := good(ctl, data)
	return []hostileCase{
		// The ar container.
		{name: "ok-gzip", data: good(ctl, data), accept: true},
		{name: "ok-xz", data: buildAr(bin, arMem{name: "control.tar.xz", data: xzData(t, ctl)}, arMem{name: "data.tar.xz", data: xzData(t, data)}), accept: true},
		{name: "ok-zstd", data: buildAr(bin, arMem{name: "control.tar.zst", data: zst(t, ctl)}, arMem{name: "data.tar.zst", data: zst(t, data)}), accept: true},
		{name: "ok-uncompressed", data: buildAr(bin, arMem{name: "control.tar", data: ctl}, arMem{name: "data.tar", data: data}), accept: true},
		{name: "ok-gnu-ar-names", data: buildAr(arMem{name: "debian-binary/", data: []byte("2.0\n")}, arMem{name: "control.tar.gz/", data: ctlM.data}, arMem{name: "data.tar.gz/", data: dataM.data}), accept: true},
		{name: "ok-format-2.1", data: buildAr(arMem{name: "debian-binary", data: []byte("2.1\n")}, ctlM, dataM), accept: true},
		{name: "ok-underscore-members", data: buildAr(bin, arMem{name: "_extra", data: []byte("x")}, ctlM, arMem{name: "_more", data: []byte("y")}, dataM, arMem{name: "_gpgorigin", data: []byte("sig")}), accept: true},
		{name: "ok-odd-last-member-unpadded", data: buildAr(bin, ctlM, arMem{name: "data.tar", data: append(data, 0), noPad: true}), accept: true},
		{name: "not-ar", data: []byte("PK\x03\x04 this is a zip"), want: "not an ar archive"},
		{name: "old-format-0.939", data: oldFormatDeb(t, gz(t, ctl), gz(t, data)), want: "the old .deb format 0.939000 (deb-old(5)), not an ar archive",
			stricter: "dpkg-deb still reads the format from before ar, apt does not: no repository can serve it"},
		{name: "ar-magic-only", data: []byte("!<arch>\n"), want: "empty ar archive"},
		{name: "first-member-not-debian-binary", data: buildAr(ctlM, bin, dataM), want: `first ar member is "control.tar.gz"`},
		{name: "format-3.0", data: buildAr(arMem{name: "debian-binary", data: []byte("3.0\n")}, ctlM, dataM), want: "debian-binary is"},
		{name: "format-no-newline", data: buildAr(arMem{name: "debian-binary", data: []byte("2.0")}, ctlM, dataM), want: "debian-binary is"},
		{name: "format-garbage", data: buildAr(arMem{name: "debian-binary", data: []byte("2.x\n")}, ctlM, dataM), want: "debian-binary is"},
		{name: "data-before-control", data: buildAr(bin, dataM, ctlM), want: `unexpected ar member "data.tar.gz"`},
		{name: "two-control-members", data: buildAr(bin, ctlM, ctlM, dataM), want: `unexpected ar member "control.tar.gz"`},
		{name: "no-data-member", data: buildAr(bin, ctlM), want: "no data.tar member"},
		{name: "no-control-member", data: buildAr(bin, dataM), want: `unexpected ar member "data.tar.gz"`},
		{name: "member-between-control-and-data", data: buildAr(bin, ctlM, arMem{name: "extra", data: []byte("x")}, dataM), want: `unexpected ar member "extra"`},
		{name: "member-after-data", data: buildAr(bin, ctlM, dataM, arMem{name: "hidden", data: []byte("x")}), want: `unexpected ar member "hidden"`,
			stricter: "dpkg-deb stops reading after data.tar; a member there is content no tool shows"},
		{name: "two-data-members", data: buildAr(bin, ctlM, dataM, dataM), want: `unexpected ar member "data.tar.gz" at position 4`,
			stricter: "dpkg-deb reads the first data.tar only; the second is content no tool shows"},
		{name: "unknown-compression", data: buildAr(bin, ctlM, arMem{name: "data.tar.lz4", data: dataM.data}), want: "unsupported compression"},
		{name: "control-bzip2", data: buildAr(bin, arMem{name: "control.tar.bz2", data: ctl}, dataM), want: "unsupported compression"},
		{name: "wrong-compression-suffix", data: buildAr(bin, ctlM, arMem{name: "data.tar.xz", data: dataM.data}), want: "data.tar.xz"},
		{name: "compression-suffix-garbage", data: buildAr(bin, arMem{name: "control.tar.gzX", data: ctlM.data}, dataM), want: "unsupported compression"},
		{name: "bad-size-field", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: dataM.data, header: []byte(fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10s`\n", "data.tar.gz", 0, 0, 0, "100644", "12x4"))}), want: "bad size field"},
		{name: "ok-size-field-right-aligned", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: dataM.data, header: []byte(fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%10d`\n", "data.tar.gz", 0, 0, 0, "100644", len(dataM.data)))}), accept: true},
		{name: "size-field-two-numbers", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: dataM.data, header: []byte(fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10s`\n", "data.tar.gz", 0, 0, 0, "100644", fmt.Sprint(len(dataM.data), " 99")))}), want: "bad size field",
			stricter: "dpkg reads the size up to the first space and ignores the rest of the field"},
		{name: "size-past-end", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: dataM.data, header: []byte(fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10d`\n", "data.tar.gz", 0, 0, 0, "100644", 999999999))}), want: "runs past the end"},
		{name: "bad-header-terminator", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: dataM.data, header: []byte(fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10dXX", "data.tar.gz", 0, 0, 0, "100644", len(dataM.data)))}), want: "bad header terminator"},
		{name: "truncated", data: truncated[:len(truncated)-40], want: "runs past the end"},

		// control.tar.
		{name: "control-dotdot", data: good(buildTar(false, tent{name: "./", typ: tarDir}, tent{name: "../control", data: []byte(hostileControl)}, tent{name: "./control", data: []byte(hostileControl)}), data), want: `"../control": expected a plain file name`},
		{name: "control-dotdot-inside", data: good(buildTar(false, tent{name: "./", typ: tarDir}, tent{name: "./x/../../postinst", data: []byte("#!/bin/sh\n")}, tent{name: "./control", data: []byte(hostileControl)}), data), want: "expected a plain file name"},
		{name: "control-absolute", data: good(buildTar(false, tent{name: "./", typ: tarDir}, tent{name: "/etc/cron.d/evil", data: []byte("x")}, tent{name: "./control", data: []byte(hostileControl)}), data), want: `"/etc/cron.d/evil": expected a plain file name`},
		{name: "control-symlink", data: good(buildTar(false, tent{name: "./", typ: tarDir}, tent{name: "./control", typ: tarSymlink, link: "/etc/passwd"}), data), want: "is a symlink",
			stricter: "GNU tar extracts the link and dpkg-deb --info reads through it: control.tar holds regular files only"},
		// dpkg-deb --build writes a maintainer script hardlinked to another.
		{name: "ok-control-hardlink-script", data: good(hCtlTar(hostileControl, tent{name: "./postinst", mode: 0o755, data: []byte("#!/bin/sh\n")}, tent{name: "./postrm", typ: tarLink, link: "./postinst"}), data), accept: true},
		{name: "control-hardlink-to-later", data: good(hCtlTar(hostileControl, tent{name: "./postrm", typ: tarLink, link: "./postinst"}, tent{name: "./postinst", mode: 0o755, data: []byte("#!/bin/sh\n")}), data), want: "not a regular file earlier in control.tar"},
		{name: "control-hardlink-unread", data: good(hCtlTar(hostileControl, tent{name: "./shlibs", data: []byte("#!/bin/sh\n")}, tent{name: "./postinst", typ: tarLink, link: "./shlibs"}), data), want: "not a control file or maintainer script",
			stricter: "a maintainer script's content is what inspect shows; it keeps no other file's"},
		{name: "control-device", data: good(hCtlTar(hostileControl, tent{name: "./mem", typ: tarChar}), data), want: "is a char"},
		{name: "control-subdirectory", data: good(hCtlTar(hostileControl, tent{name: "./sub/", typ: tarDir}, tent{name: "./sub/file", data: []byte("x")}), data), want: "expected a plain file name"},
		{name: "control-twice", data: good(hCtlTar(hostileControl, tent{name: "./control", data: []byte(setField("Version", "9.9"))}), data), want: "appears twice",
			stricter: "GNU tar extracts both and the last wins: the package would not be the one inspected"},
		{name: "ok-control-root-pre-posix-dir", data: good(buildTar(false, tent{name: "./", typ: tarReg}, tent{name: "./control", data: []byte(hostileControl)}), data), accept: true},
		{name: "control-missing", data: good(buildTar(false, tent{name: "./", typ: tarDir}, tent{name: "./postinst", data: []byte("#!/bin/sh\n")}), data), want: "no control file"},
		{name: "control-empty-tar", data: good(make([]byte, 1024), data), want: "empty tar archive"},
		// PAX headers in control.tar, which dpkg-deb extracts with GNU tar.
		{name: "ok-control-tar-format-pax", data: good(paxControlTar(t, hostileControl), data), accept: true},
		{name: "ok-control-pax-path", data: good(buildTar(false, tent{name: "./", typ: tarDir}, paxExt("path", "./control"), tent{name: "./not-control", data: []byte(hostileControl)}), data), accept: true},
		{name: "ok-control-pax-size", data: good(buildTar(false, tent{name: "./", typ: tarDir}, paxExt("size", fmt.Sprint(len(hostileControl))),
			tent{name: "./control", data: []byte(hostileControl), tweak: func(h *[512]byte) { octal(h[124:136], 0) }, reChecksum: true}), data), accept: true},
		{name: "ok-control-pax-linkpath", data: good(hCtlTar(hostileControl, tent{name: "./postinst", mode: 0o755, data: []byte("#!/bin/sh\n")},
			paxExt("linkpath", "./postinst"), tent{name: "./prerm", typ: tarLink, link: "./elsewhere"}), data), accept: true},
		{name: "ok-control-pax-global", data: good(buildTar(false, append([]tent{{name: "pax_global_header", typ: tarPAXGlobal, data: paxRecords("comment", "a global header, as git archive writes one", "mtime", "1723636800.25")}},
			ctlEntries(hostileControl)...)...), data), accept: true},
		{name: "ok-control-pax-unknown-keyword", data: good(hCtlTar(hostileControl, paxExt("LIBARCHIVE.creationtime", "1723636800"), tent{name: "./postinst", mode: 0o755, data: []byte("#!/bin/sh\n")}), data), accept: true},
		{name: "control-pax-global-path", data: good(buildTar(false, append([]tent{{name: "pax_global_header", typ: tarPAXGlobal, data: paxRecords("path", "./zzz")}}, ctlEntries(hostileControl)...)...), data),
			want: `a global PAX header sets path="./zzz"`},
		{name: "control-pax-bad-mtime", data: good(hCtlTar(hostileControl, paxExt("mtime", "yesterday"), tent{name: "./postinst", data: []byte("#!/bin/sh\n")}), data), want: `PAX mtime="yesterday": not a decimal number of seconds`},
		{name: "control-pax-uid-over-32-bits", data: good(hCtlTar(hostileControl, paxExt("uid", "4294967296"), tent{name: "./postinst", data: []byte("#!/bin/sh\n")}), data), want: `PAX uid="4294967296" is out of range`},
		{name: "control-pax-sparse", data: good(hCtlTar(hostileControl, paxExt("GNU.sparse.major", "1", "GNU.sparse.minor", "0", "GNU.sparse.name", "./postinst", "GNU.sparse.realsize", "10"),
			tent{name: "./postinst", data: []byte("#!/bin/sh\n")}), data), want: "a sparse file",
			stricter: "GNU tar reads a sparse file's map from its data (or fails on it, and dpkg-deb with it) and extracts other bytes than the data: what control.tar holds would depend on the reader"},
		{name: "control-pax-sparse-size", data: good(hCtlTar(hostileControl, paxExt("GNU.sparse.size", "10"), tent{name: "./postinst", data: []byte("#!/bin/sh\n")}), data), want: "a sparse file",
			stricter: "GNU tar takes GNU.sparse.size alone as the file's real size, not its data's: what it extracts depends on the reader"},
		{name: "control-pax-bad-length", data: good(hCtlTar(hostileControl, tent{name: "./PaxHeaders/postinst", typ: tarPAX, data: []byte("99 path=./postinst\n")}, tent{name: "./postinst", data: []byte("#!/bin/sh\n")}), data),
			want: "a PAX record of length"},
		{name: "control-pax-at-end", data: good(hCtlTar(hostileControl, paxExt("path", "./postinst")), data), want: "after a PAX header for an entry",
			stricter: "GNU tar ignores an extended header that no entry follows; it is content no tool shows"},
		{name: "control-pax-twice", data: good(hCtlTar(hostileControl, paxExt("path", "./preinst"), paxExt("path", "./postinst"), tent{name: "./x", data: []byte("#!/bin/sh\n")}), data),
			want: "a second PAX extended header for one entry", stricter: "which of two extended headers names the entry depends on the reader"},
		{name: "control-pax-and-gnu-long-name", data: good(hCtlTar(hostileControl, paxExt("path", "./postinst"), tent{name: "./" + strings.Repeat("p", 120), data: []byte("#!/bin/sh\n")}), data),
			want: "both a GNU long name or link and a PAX header", stricter: "which of the two names the entry depends on the reader"},
		{name: "control-pax-huge-header", data: good(hCtlTar(hostileControl, paxExt("comment", strings.Repeat("c", 70<<10)), tent{name: "./postinst", data: []byte("#!/bin/sh\n")}), data),
			want: "more than 65536", stricter: "a header of 64 KiB holds any path, link and owner; GNU tar reads any size"},
		{name: "ok-md5sums-empty", data: good(hCtlTar(hostileControl, tent{name: "./md5sums"}), data), accept: true},
		{name: "md5sums-no-final-newline", data: good(hCtlTar(hostileControl, tent{name: "./md5sums", data: []byte("249c850f62ea50feb918b095fc56d763  usr/share/hostile/file")}), data), want: "md5sums: no newline at the end",
			stricter: "dpkg installs it; then dpkg --verify, of it or of all packages, fails (\"missing final newline\")"},
		{name: "control-bad-checksum", data: good(hCtlTar(hostileControl, tent{name: "./md5sums", data: []byte("x"), tweak: func(h *[512]byte) { h[148] = '7' }}), data), want: "checksum"},

		// conffiles (dpkg's deb_parse_conffiles, and its unpacking).
		{name: "ok-triggers", data: withTriggers(t, "# comment\n\ninterest /usr/share/hostile\n\tactivate-noawait  ldconfig \ninterest-await x-"+strings.Repeat("t", maxTriggerLine-17)+"\n"), accept: true},
		{name: "triggers-unknown-directive", data: withTriggers(t, "interested /usr/share/hostile\n"), want: `triggers line 1: "interested /usr/share/hostile": unknown directive "interested"`},
		{name: "triggers-name-with-space", data: withTriggers(t, "interest /usr/share/host ile\n"), want: "triggers line 1: \"interest /usr/share/host ile\": expected DIRECTIVE NAME"},
		{name: "triggers-control-character", data: withTriggers(t, "interest \x01x\n"), want: `triggers line 1: control character '\x01'`},
		{name: "triggers-crlf", data: withTriggers(t, "interest /usr/share/hostile\r\n"), want: `triggers line 1: control character '\r'`},
		{name: "triggers-no-final-newline", data: withTriggers(t, "interest /usr/share/hostile"), want: "triggers: no newline at the end"},
		{name: "ok-triggers-activate-any-name", data: withTriggers(t, "activate-noawait foo_bar:x@y\n"), accept: true},
		{name: "triggers-interest-underscore", data: withTriggers(t, "interest-noawait foo_bar\n"), want: `triggers line 1: "interest-noawait foo_bar": dpkg refuses an interest in "foo_bar"`},
		{name: "triggers-interest-punctuation-first", data: withTriggers(t, "interest .foo\n"), want: `dpkg refuses an interest in ".foo"`},
		{name: "triggers-interest-root", data: withTriggers(t, "interest-await /\n"), want: `dpkg refuses an interest in "/"`},
		{name: "triggers-long-line", data: withTriggers(t, "interest-await x-"+strings.Repeat("t", maxTriggerLine-16)+"\n"), want: "triggers line 1: 255 bytes, more than the 254"},
		{name: "ok-conffiles", data: withConffiles(t, "/usr/share/hostile/file\n"), accept: true},
		{name: "ok-conffiles-remove-on-upgrade", data: withConffiles(t, "\n/usr/share/hostile/file  \nremove-on-upgrade /usr/share/hostile/old\n"), accept: true},
		{name: "conffiles-relative", data: withConffiles(t, "usr/share/hostile/file\n"), want: "is not an absolute path"},
		{name: "conffiles-unknown-flag", data: withConffiles(t, "keep /usr/share/hostile/file\n"), want: `unknown flag "keep"`},
		{name: "conffiles-leading-space", data: withConffiles(t, " /usr/share/hostile/file\n"), want: `unknown flag ""`},
		{name: "conffiles-no-final-newline", data: withConffiles(t, "/usr/share/hostile/file"), want: "conffiles: no newline at the end"},
		{name: "conffiles-remove-on-upgrade-shipped", data: withConffiles(t, "remove-on-upgrade /usr/share/hostile/file\n"), want: "but data.tar ships it"},
		{name: "conffiles-folder", data: withConffiles(t, "/usr/share/hostile\n"), want: "is a dir in data.tar"},
		{name: "conffiles-not-shipped", data: withConffiles(t, "/usr/share/hostile/missing\n"), want: "is not in data.tar",
			stricter: "dpkg accepts it; a conffile the package does not ship is a package built wrong (lintian: conffile-is-not-in-package)"},
		{name: "conffiles-dotdot", data: withConffiles(t, "/usr/share/../share/hostile/file\n"), want: "expected an absolute, clean path",
			stricter: "dpkg records the name as written, which no file has"},
		{name: "conffiles-spelled-otherwise", data: hdeb(t, hCtlTar(hostileControl, tent{name: "./conffiles", data: []byte("/usr/share/hostile/conf\n")}),
			buildTar(false, dataEntries(tent{name: "./usr/share//hostile/conf", data: []byte("x")})...)), want: `conffiles: "/usr/share/hostile/conf" is named "./usr/share//hostile/conf" in data.tar, which dpkg does not take for it`,
			stricter: "dpkg installs the file as no conffile (its status says newconffile), so an upgrade replaces the administrator's changes without a word"},
		{name: "conffiles-twice", data: withConffiles(t, "/usr/share/hostile/file\n/usr/share/hostile/file\n"), want: "is listed twice",
			stricter: "dpkg records it twice"},
		{name: "ok-conffiles-longest-line", data: withLongConffile(t, MaxConffileLine), accept: true},
		{name: "conffiles-line-too-long", data: withLongConffile(t, MaxConffileLine+1), want: "is 997 bytes long, and dpkg -i refuses a line of more than 996"},

		// The control file.
		{name: "field-1MiB", data: withControl(t, setField("X-Big", huge)), want: `(the field "X-Big" alone has 1048584), more than the 262144 a control file may have`,
			stricter: "dpkg accepts it; apt refuses the whole Packages index that carries it"},
		{name: "field-300KiB", data: withControl(t, setField("X-Big", big)), want: "more than the 262144",
			stricter: "dpkg and apt accept it; updeb keeps control files under 256 KiB, a quarter of apt's 1 MiB stanza limit and three times Debian's largest stanza (76 KB)"},
		{name: "field-name-with-space", data: withControl(t, hostileControl+"Bad Name: x\n"), want: `field name "Bad Name"`},
		{name: "field-name-hyphen", data: withControl(t, hostileControl+"-Bad: x\n"), want: `field name "-Bad"`},
		{name: "field-name-one-char", data: withControl(t, hostileControl+"X: y\n"), want: "shorter than two characters"},
		{name: "field-twice", data: withControl(t, hostileControl+"Version: 2.0\n"), want: "duplicate field Version"},
		{name: "field-twice-other-case", data: withControl(t, hostileControl+"version: 2.0\n"), want: "duplicate field version"},
		{name: "no-colon", data: withControl(t, hostileControl+"just words\n"), want: `expected "Field: value"`},
		{name: "field-empty-last-line", data: withControl(t, hostileControl+"X-Empty:\n"), want: "field X-Empty: an empty value on the last line"},
		{name: "ok-field-empty-before-another", data: withControl(t, "X-Empty:\n"+hostileControl), accept: true},
		{name: "comment-line", data: withControl(t, "# a comment\n"+hostileControl), want: "control files have no comments"},
		{name: "blank-line-in-value", data: withControl(t, strings.Replace(hostileControl, " It installs", " \n It installs", 1)), want: "only whitespace"},
		{name: "two-paragraphs", data: withControl(t, hostileControl+"\nPackage: other\n"), want: "a second paragraph"},
		{name: "no-final-newline", data: withControl(t, strings.TrimSuffix(hostileControl, "\n")), want: "no newline at the end"},
		{name: "continuation-first", data: withControl(t, " indented\n"+hostileControl), want: "continuation line without a field"},
		{name: "control-character", data: withControl(t, setField("X-Note", "a\x01b")), want: `field "X-Note": control character`,
			stricter: "dpkg keeps control characters; apt's and dpkg's output, and policy, do not expect them"},
		{name: "nul-in-value", data: withControl(t, setField("X-Note", "a\x00b")), want: "control character",
			stricter: "a NUL ends the value for dpkg's and apt's C strings and hides what follows it"},
		{name: "crlf", data: withControl(t, strings.ReplaceAll(hostileControl, "\n", "\r\n")), want: "control character",
			stricter: "dpkg tolerates CRLF line ends; policy's control files have LF"},
		{name: "not-utf8", data: withControl(t, setField("X-Note", "caf\xe9")), want: "not UTF-8",
			stricter: "dpkg keeps any bytes; policy requires UTF-8 and apt prints fields as UTF-8"},
		{name: "no-package", data: withControl(t, setField("Package", "")), want: "control field Package: required"},
		{name: "no-version", data: withControl(t, setField("Version", "")), want: "control field Version: required"},
		{name: "no-architecture", data: withControl(t, setField("Architecture", "")), want: "control field Architecture: required"},
		{name: "no-maintainer", data: withControl(t, setField("Maintainer", "")), want: "control field Maintainer: required",
			stricter: "dpkg only warns; policy 5.3 requires Maintainer"},
		{name: "package-uppercase", data: withControl(t, setField("Package", "Hostile")), want: "is not a package name",
			stricter: "dpkg accepts upper case and '_'; policy 5.6.1 and apt's index use lower case"},
		{name: "package-slash", data: withControl(t, setField("Package", "../../etc")), want: "is not a package name"},
		{name: "version-letter-first", data: withControl(t, setField("Version", "v1.0")), want: "is not a Debian version"},
		{name: "version-space", data: withControl(t, setField("Version", "1.0 2")), want: "is not a Debian version"},
		{name: "version-slash", data: withControl(t, setField("Version", "1.0/../x")), want: "is not a Debian version"},
		{name: "version-epoch-overflow", data: withControl(t, setField("Version", "99999999999:1.0")), want: "epoch \"99999999999\" is too big"},
		{name: "name-too-long-for-a-file", data: withControl(t, setField("Package", "a"+strings.Repeat("b", 300))), want: "make a file name longer than 255 bytes",
			stricter: "dpkg accepts it; the repository cannot store name_version_arch.deb"},
		{name: "source-garbage", data: withControl(t, setField("Source", "../../etc (1.0")), want: "control field Source",
			stricter: "dpkg keeps Source as text; the repository names a pool folder after it"},
		{name: "ok-source-with-version", data: withControl(t, setField("Source", "hostile-src (1:2.0-1)")), accept: true},
		{name: "architecture-two-words", data: withControl(t, setField("Architecture", "amd64 arm64")), want: "is not a Debian architecture"},
		{name: "architecture-any", data: withControl(t, setField("Architecture", "any")), want: "is not a Debian architecture"},
		// dpkg -i refuses it: "package architecture (source) does not match system".
		{name: "architecture-source", data: withControl(t, setField("Architecture", "source")), want: `"source" is not a Debian architecture`},
		{name: "depends-unterminated", data: withControl(t, setField("Depends", "libc6 (>= 2.36")), want: "control field Depends"},
		{name: "depends-arch-list", data: withControl(t, setField("Depends", "libc6 [amd64]")), want: "control field Depends"},
		{name: "depends-bad-operator", data: withControl(t, setField("Depends", "libc6 (=> 2.36)")), want: "control field Depends"},
		{name: "depends-implicit-equal", data: withControl(t, setField("Depends", "libc6 (2.36)")), want: "control field Depends",
			stricter: "dpkg warns and reads it as '='; its warnings are errors here"},
		{name: "depends-empty-element", data: withControl(t, setField("Depends", "libc6, , adduser")), want: "empty relation"},
		{name: "conflicts-alternatives", data: withControl(t, setField("Conflicts", "a | b")), want: "alternatives (|) are not allowed"},
		{name: "provides-greater", data: withControl(t, setField("Provides", "virtual (>= 1)")), want: "only an exact version (=) may be provided",
			stricter: "dpkg warns; apt ignores such a Provides"},
		{name: "ok-relations", data: withControl(t, setField("Depends", "libc6 (>= 2.36), adduser | passwd, foo:any (<< 2:1.0~rc1-1)")+"Breaks: old (<< 1.0)\nProvides: virtual (= 1.0)\n"), accept: true},
		{name: "status-field", data: withControl(t, setField("Status", "install ok installed")), want: "control field Status: belongs to"},
		{name: "index-field", data: withControl(t, setField("Filename", "pool/evil.deb")), want: "control field Filename: belongs to",
			stricter: "the repository writes Filename, Size and the digests; a package that carries them forges its index entry"},
		{name: "multiarch-same-all", data: withControl(t, setField("Multi-Arch", "same")), want: "Multi-Arch: same is not allowed with Architecture: all"},
		{name: "multiarch-bogus", data: withControl(t, setField("Multi-Arch", "sometimes")), want: "control field Multi-Arch"},
		{name: "essential-maybe", data: withControl(t, setField("Essential", "maybe")), want: "control field Essential"},
		{name: "revision-field", data: withControl(t, setField("Revision", "2")), want: "control field Revision: obsolete, and dpkg still reads it: it installs version 1.0-1 as 1.0-1-2 while the index lists 1.0-1",
			stricter: "dpkg warns and installs the package as version 1.0-1-2, not the 1.0-1 the index lists"},
		{name: "package-revision-field", data: withControl(t, setField("package_revision", "2")), want: "control field Package_Revision: obsolete",
			stricter: "as revision-field"},
		{name: "priority-trailing-junk", data: withControl(t, setField("Priority", "Optionalx")), want: `control field Priority: "Optionalx": dpkg reads the priority optional and refuses what follows it`},
		{name: "ok-priority-unknown-word", data: withControl(t, setField("Priority", "xoptional")), accept: true},
		{name: "installed-size-words", data: withControl(t, setField("Installed-Size", "twelve")), want: "control field Installed-Size",
			stricter: "dpkg stores it as text; apt reads a number"},

		// data.tar.
		// A metapackage of a builder that writes no "./" entry (nfpm, Go's
		// archive/tar): the end-of-archive blocks alone.
		{name: "ok-data-no-entries", data: withData(t, false), accept: true},
		{name: "data-no-bytes", data: hdeb(t, ctl, nil), want: "no bytes, not even the end-of-archive blocks"},
		{name: "data-dotdot", data: withData(t, false, dataEntries(tent{name: "./../../etc/cron.d/evil", data: []byte("x")})...), want: `a ".." component`,
			stricter: "dpkg unpacks it relative to the root, so with --root or --instdir it lands outside"},
		{name: "data-dotdot-inside", data: withData(t, false, dataEntries(tent{name: "./usr/../../x", data: []byte("x")})...), want: `a ".." component`,
			stricter: "as data-dotdot"},
		{name: "data-absolute", data: withData(t, false, dataEntries(tent{name: "/etc/", typ: tarDir}, tent{name: "/etc/cron.d/", typ: tarDir}, tent{name: "/etc/cron.d/evil", data: []byte("x")})...), want: "an absolute name",
			stricter: "dpkg-deb writes ./path; an absolute name is not a package it built"},
		{name: "data-newline", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/a\nb", data: []byte("x")})...), want: "a newline in a name"},
		{name: "data-duplicate", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/file", data: []byte("other\n")})...), want: "appears twice",
			stricter: "dpkg installs the last copy; a reviewer reading the first is fooled"},
		{name: "data-hardlink-outside", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/shadow", typ: tarLink, link: "./etc/shadow"})...), want: "the target must be a regular file earlier",
			stricter: "dpkg links to whatever the installing system has at that path"},
		{name: "data-hardlink-dotdot", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/l", typ: tarLink, link: "../../etc/shadow"})...), want: `a ".." component`},
		{name: "data-hardlink-target-spelled-otherwise", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/l", typ: tarLink, link: "./usr/share//hostile/file"})...), want: `data.tar hardlink "./usr/share/hostile/l" to "./usr/share//hostile/file": dpkg finds its target only by the name data.tar gives it, "./usr/share/hostile/file"`},
		{name: "ok-hardlink-target-as-spelled", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile//g", data: []byte("g")}, tent{name: "./usr/share/hostile/l", typ: tarLink, link: "usr/share/hostile//g"})...), accept: true},
		{name: "data-hardlink-before-target", data: withData(t, false, append([]tent{{name: "./", typ: tarDir}, {name: "./l", typ: tarLink, link: "./f"}}, tent{name: "./f", data: []byte("x")})...), want: "the target must be a regular file earlier"},
		{name: "data-below-symlink", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/etc", typ: tarSymlink, link: "/etc"}, tent{name: "./usr/share/hostile/etc/evil", data: []byte("x")})...), want: `lies below "usr/share/hostile/etc", which is a symlink`,
			stricter: "dpkg fails on a fresh install; on an upgrade, the link already installed, it writes where the link points (outside --root too) while the package lists the path below the link"},
		{name: "data-below-file", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/file/x", data: []byte("x")})...), want: `lies below "usr/share/hostile/file", which is a file`},
		{name: "data-symlink-above-earlier", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/d/x", data: []byte("x")}, tent{name: "./usr/share/hostile/d", typ: tarSymlink, link: "/etc"})...), want: "but earlier entries lie below it"},
		{name: "data-name-ends-in-dot", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/f/.", data: []byte("x")})...), want: `data.tar entry "./usr/share/hostile/f/.": a name ending in ".", which dpkg cannot unpack; name it "./usr/share/hostile/f"`},
		{name: "data-dir-name-ends-in-dot", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/d/./", typ: tarDir})...), want: `a name ending in "."`,
			stricter: "dpkg makes the folder only where it is one already, and records usr/share/hostile/d/. as another path than usr/share/hostile/d"},
		{name: "data-symlink-name-ends-in-slash", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/l/", typ: tarSymlink, link: "/etc"})...), want: `data.tar entry "./usr/share/hostile/l/": a symlink whose name ends in "/" (a folder's in "//"), which dpkg cannot create; name it "./usr/share/hostile/l"`},
		{name: "data-dir-name-ends-in-two-slashes", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/d//", typ: tarDir})...), want: `name it "./usr/share/hostile/d/"`},
		{name: "data-dpkg-tmp-name", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/file.dpkg-tmp", data: []byte("x")})...), want: `data.tar has "./usr/share/hostile/file" and "./usr/share/hostile/file.dpkg-tmp"`,
			stricter: "dpkg unpacks both, then deletes file.dpkg-tmp, its backup name for file: the package lists a file that is not installed"},
		{name: "data-dpkg-tmp-name-first", data: withData(t, false, append(dataEntries()[:4], tent{name: "./usr/share/hostile/d.dpkg-tmp/", typ: tarDir}, tent{name: "./usr/share/hostile/d", data: []byte("x")})...), want: `data.tar has "./usr/share/hostile/d" and "./usr/share/hostile/d.dpkg-tmp"`,
			stricter: "as data-dpkg-tmp-name"},
		{name: "data-dpkg-new-name-first", data: withData(t, false, append(dataEntries()[:4], tent{name: "./usr/share/hostile/g.dpkg-new", data: []byte("reviewed\n")}, tent{name: "./usr/share/hostile/g", data: []byte("installed\n")})...), want: `data.tar has "./usr/share/hostile/g" and "./usr/share/hostile/g.dpkg-new"`,
			stricter: "dpkg installs g with g.dpkg-new's content, and no g.dpkg-new: what it installs is not what the listing shows"},
		{name: "data-dpkg-new-name", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/file.dpkg-new", data: []byte("x")})...), want: "dpkg unpacks PATH as PATH.dpkg-new",
			stricter: "dpkg installs both in this order; the other order installs one with the other's content"},
		{name: "data-root-file", data: withData(t, false, append([]tent{{name: ".", data: []byte("x")}}, dataEntries()[1:]...)...), want: `data.tar entry "." is a file; the root must be a directory`},
		{name: "data-root-symlink", data: withData(t, false, append([]tent{{name: "./", typ: tarSymlink, link: "/tmp"}}, dataEntries()[1:]...)...), want: `data.tar entry "./" is a symlink; the root must be a directory`,
			stricter: "dpkg skips a symlink at the root and unpacks what follows into the root folder: the listing would show a link that is never installed"},
		{name: "data-file-named-as-dir", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/d/", data: []byte("x")})...), want: `a regular file whose name ends in "/"`,
			stricter: "dpkg installs a file usr/share/hostile/d holding x, where GNU tar (dpkg-deb --contents) lists a directory"},
		{name: "data-file-named-as-dir-below", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/d/"}, tent{name: "./usr/share/hostile/d/x", data: []byte("x")})...), want: `a regular file whose name ends in "/"`},
		{name: "ok-hardlink", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/link", typ: tarLink, link: "./usr/share/hostile/file"})...), accept: true},
		{name: "ok-absolute-symlink", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/passwd", typ: tarSymlink, link: "/etc/passwd"})...), accept: true},
		{name: "symlink-target-4096-bytes", data: withData(t, false, dataEntries(tent{name: "././@LongLink", typ: tarLongLk, data: []byte(strings.Repeat("t/", 2048))},
			tent{name: "./usr/share/hostile/l", typ: tarSymlink, link: "t/"})...), want: "its target is 4096 bytes long: Linux takes at most 4095"},
		{name: "symlink-empty-target", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/l", typ: tarSymlink})...), want: "empty target"},
		{name: "data-char-device", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/mem", typ: tarChar, mode: 0o666})...), want: "is a device node",
			stricter: "dpkg creates it; a world-writable device in a package is a root shell"},
		{name: "data-block-device", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/sda", typ: tarBlockDv})...), want: "is a device node",
			stricter: "as data-char-device"},
		{name: "ok-fifo", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/pipe", typ: tarFifo})...), accept: true},
		{name: "ok-setuid", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/su", mode: 0o4755, data: []byte("#!/bin/sh\n")})...), accept: true},
		{name: "ok-name-of-246-bytes", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/" + strings.Repeat("n", MaxName), data: []byte("x")})...), accept: true},
		{name: "data-name-of-247-bytes", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/" + strings.Repeat("n", MaxName+1), data: []byte("x")})...), want: "has a name of 247 bytes: dpkg unpacks it as NAME.dpkg-new"},
		{name: "ok-long-name", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/" + strings.Repeat("n", 150), data: []byte("x")})...), accept: true},
		{name: "ok-ustar-prefix", data: withData(t, false, dataEntries(tent{name: "file2", magic: "ustar\x0000", data: []byte("x"), tweak: func(h *[512]byte) { copy(h[345:], "./usr/share/hostile") }, reChecksum: true})...), accept: true},
		{name: "ok-no-end-blocks", data: withData(t, true, dataEntries()...), accept: true},
		{name: "ok-base256-size", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/b", data: []byte("base-256\n"), tweak: func(h *[512]byte) {
			clear(h[124:136])
			h[124], h[135] = 0x80, 9
		}, reChecksum: true})...), accept: true},
		{name: "data-mtime-year-36812", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/m", data: []byte("x"), tweak: func(h *[512]byte) { octal(h[136:148], 1<<40) }, reChecksum: true})...), want: "mtime 1099511627776 seconds is outside the years 0 to 9999",
			stricter: "dpkg takes any mtime; inspect --json failed to write this one (RFC 3339 has four-digit years), and no file system stores it"},
		{name: "data-mtime-before-year-0", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/m", data: []byte("x"), tweak: func(h *[512]byte) {
			v := int64(-1 << 40) // base-256, two's complement: 0xff first
			for i := 147; i >= 136; i-- {
				h[i], v = byte(v), v>>8
			}
		}, reChecksum: true})...), want: "mtime -1099511627776 seconds is outside",
			stricter: "as data-mtime-year-36812"},
		{name: "data-uid-over-32-bits", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/u", data: []byte("x"), tweak: func(h *[512]byte) { octal(h[108:116], 1<<32+1000) }, reChecksum: true})...), want: "uid 4294968296 or gid 0 out of range: dpkg takes at most 4294967295"},
		{name: "data-pax", data: withData(t, false, dataEntries(tent{name: "./PaxHeaders/x", typ: 'x', data: []byte("30 path=./usr/share/hostile/p\n")}, tent{name: "./usr/share/hostile/q", data: []byte("x")})...),
			want: "type 'x', a PAX header, which dpkg refuses where it unpacks data.tar"},
		{name: "data-pax-global", data: withData(t, false, append([]tent{{name: "pax_global_header", typ: 'g', data: []byte("20 comment=hostile\n")}}, dataEntries()...)...), want: "type 'g', a PAX header"},
		{name: "data-tar-format-pax", data: hdeb(t, hCtlTar(hostileControl), paxTar(t, map[string]string{"usr/share/hostile/file": "payload\n"})), want: "a PAX header, which dpkg refuses where it unpacks data.tar"},
		{name: "data-gnu-sparse", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/s", typ: 'S'})...), want: "type 'S'"},
		{name: "data-unknown-type", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/z", typ: 'Z'})...), want: "type 'Z'"},
		{name: "data-dir-with-size", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/d/", typ: tarDir, data: []byte("hidden")})...), want: "a dir with 6 bytes of data"},
		{name: "data-bad-checksum", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/c", data: []byte("x"), tweak: func(h *[512]byte) { h[0] ^= 1 }})...), want: "checksum"},
		{name: "data-truncated-entry", data: withData(t, true, dataEntries(tent{name: "./usr/share/hostile/t", size: 5000, data: []byte("short")})...), want: "unexpected EOF"},
		{name: "data-huge-size", data: withData(t, true, dataEntries(tent{name: "./usr/share/hostile/h", size: 1 << 40})...), want: "Limits.MaxFileSize"},
		{name: "data-after-end", data: withData(t, false, dataEntries()...)[:0], want: ""}, // replaced below
		{name: "data-bad-octal", data: withData(t, false, dataEntries(tent{name: "./usr/share/hostile/o", data: []byte("x"), tweak: func(h *[512]byte) { h[130] = '9' }, reChecksum: true})...), want: "invalid size field"},

		// Compression and bombs.
		{name: "xz-end-marker-in-lzma2", data: buildAr(bin, ctlM, arMem{name: "data.tar.xz", data: xzWithEndMarker(t, data)}), want: "end-of-payload marker"},
		{name: "xz-corrupt-check", data: buildAr(bin, ctlM, arMem{name: "data.tar.xz", data: flipLast(xzData(t, data), 13)}), want: "data.tar.xz"},
		{name: "gzip-corrupt", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: flipLast(dataM.data, 5)}), want: "data.tar.gz"},
		{name: "zstd-corrupt", data: buildAr(bin, ctlM, arMem{name: "data.tar.zst", data: flipLast(zst(t, data), 2)}), want: "data.tar.zst"},
		{name: "gzip-trailing-garbage", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: append(bytes.Clone(dataM.data), "garbage"...)}), want: "data.tar.gz: gzip: 7 bytes after the last member that are not gzip",
			stricter: "zlib ignores bytes after the gzip stream; they are content no tool shows"},
		{name: "gzip-trailing-zeros", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: append(bytes.Clone(dataM.data), make([]byte, 20)...)}), want: "data.tar.gz: gzip: 20 bytes after the last member that are not gzip",
			stricter: "zlib ignores bytes after the gzip stream; they are content no tool shows"},
		{name: "ok-gzip-two-streams", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: append(gz(t, data[:2600]), gz(t, data[2600:])...)}), accept: true},
		{name: "ok-gzip-name-and-comment", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: gzNamed(t, data, "data.tar", strings.Repeat("c", 511))}), accept: true},
		{name: "gzip-comment-512", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: gzNamed(t, data, "data.tar", strings.Repeat("c", 512))}), want: "data.tar.gz: gzip: the header of member 1: its comment is longer than 511 bytes",
			stricter: "zlib skips a gzip header's name and comment, however long; Go's gzip reader stops at 511 bytes, and neither dpkg-deb nor gzip writes a comment"},
		{name: "gzip-second-stream-long-name", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: append(gz(t, data[:2600]), gzNamed(t, data[2600:], strings.Repeat("n", 600), "")...)}), want: "gzip: the header of member 2: its file name is longer than 511 bytes",
			stricter: "as gzip-comment-512"},
		{name: "gzip-second-stream-cut-in-name", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: append(gz(t, data), gzNamed(t, data, "data.tar", "")[:15]...)}), want: "gzip: member 2 ends inside its header: unexpected EOF",
			stricter: "klauspost's gzip reader ends a header cut in its file name with io.EOF, as if no stream had begun; gzip -d says \"unexpected end of file\""},
		{name: "gzip-cut-in-name", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: gzNamed(t, data, "data.tar", "")[:15]}), want: "gzip: member 1 ends inside its header: unexpected EOF"},
		{name: "ok-xz-stream-padding", data: buildAr(bin, ctlM, arMem{name: "data.tar.xz", data: append(xzData(t, data), 0, 0, 0, 0, 0, 0, 0, 0)}), accept: true},
		{name: "xz-two-streams", data: buildAr(bin, ctlM, arMem{name: "data.tar.xz", data: append(xzData(t, data[:2600]), xzData(t, data[2600:])...)}), want: "several xz streams"},
		{name: "zstd-two-frames", data: buildAr(bin, ctlM, arMem{name: "data.tar.zst", data: append(zst(t, data[:2600]), zst(t, data[2600:])...)}), want: "after the first zstd frame"},
		{name: "zstd-skippable-first", data: buildAr(bin, ctlM, arMem{name: "data.tar.zst", data: append([]byte("\x50\x2a\x4d\x18\x04\x00\x00\x00skip"), zst(t, data)...)}), want: "a zstd skippable frame at byte 0"},
		{name: "zstd-skippable-after", data: buildAr(bin, ctlM, arMem{name: "data.tar.zst", data: append(zst(t, data), "\x50\x2a\x4d\x18\x06\x00\x00\x00hidden"...)}), want: "14 bytes after the first zstd frame",
			stricter: "dpkg stops after the first frame; a skippable frame after it is content no tool shows"},
		{name: "bomb-zstd-1GiB", data: buildAr(bin, ctlM, arMem{name: "data.tar.zst", data: bombZstd(t, 1<<30)}), want: "Limits.MaxRatio",
			stricter: "dpkg would unpack 1 GiB of zeros from a small file; refused after 1,000 times the file's size plus 64 MiB", slow: true},
		{name: "bomb-xz-10GiB-header", data: buildAr(bin, ctlM, arMem{name: "data.tar.xz", data: xzData(t, buildTar(true, tent{name: "./zeros", size: 10 << 30}))}), want: "Limits.MaxFileSize",
			stricter: "a 10 GiB file: over the one-file limit (8 GiB, the most Inspect decompresses)", slow: true},
		// bzip2 and lzma, which dpkg reads in data.tar and dpkg-deb no
		// longer writes: read with the same checks and bounds.
		{name: "ok-bzip2", data: buildAr(bin, ctlM, arMem{name: "data.tar.bz2", data: bz2(t, data)}), accept: true},
		{name: "ok-lzma", data: buildAr(bin, ctlM, arMem{name: "data.tar.lzma", data: lzmaAlone(t, data)}), accept: true},
		{name: "ok-lzma-size-in-header", data: buildAr(bin, ctlM, arMem{name: "data.tar.lzma", data: lzmaSized(t, data)}), accept: true},
		{name: "ok-xz-control-bzip2-data", data: buildAr(bin, arMem{name: "control.tar.xz", data: xzData(t, ctl)}, arMem{name: "data.tar.bz2", data: bz2(t, data)}), accept: true},
		{name: "control-lzma", data: buildAr(bin, arMem{name: "control.tar.lzma", data: lzmaAlone(t, ctl)}, dataM), want: `ar member "control.tar.lzma": unsupported compression`},
		{name: "bzip2-truncated", data: buildAr(bin, ctlM, arMem{name: "data.tar.bz2", data: bz2(t, data)[:60]}), want: "data.tar.bz2: truncated"},
		{name: "bzip2-corrupt", data: buildAr(bin, ctlM, arMem{name: "data.tar.bz2", data: flipLast(bz2(t, data), 3)}), want: "data.tar.bz2: bzip2 data invalid"},
		{name: "bzip2-two-streams", data: buildAr(bin, ctlM, arMem{name: "data.tar.bz2", data: append(bz2(t, data[:2560]), bz2(t, data[2560:])...)}), want: "a second bzip2 stream at byte"},
		{name: "bzip2-trailing-garbage", data: buildAr(bin, ctlM, arMem{name: "data.tar.bz2", data: append(bz2(t, data), "garbage"...)}), want: "data.tar.bz2: bzip2 data invalid",
			stricter: "libbz2 (dpkg) stops after the first stream; bytes after it are content no tool shows"},
		{name: "lzma-truncated", data: buildAr(bin, ctlM, arMem{name: "data.tar.lzma", data: lzmaAlone(t, data)[:60]}), want: "data.tar.lzma: truncated"},
		{name: "lzma-header-only", data: buildAr(bin, ctlM, arMem{name: "data.tar.lzma", data: lzmaAlone(t, data)[:10]}), want: "data.tar.lzma: truncated"},
		{name: "lzma-corrupt", data: buildAr(bin, ctlM, arMem{name: "data.tar.lzma", data: flipLast(lzmaAlone(t, data), 20)}), want: "data.tar.lzma: tar: header at offset 0: lzma data invalid"},
		{name: "lzma-trailing-garbage", data: buildAr(bin, ctlM, arMem{name: "data.tar.lzma", data: append(lzmaAlone(t, data), "garbage"...)}), want: "lzma: bytes after the end of the stream",
			stricter: "liblzma (dpkg) stops at the end of the stream; bytes after it are content no tool shows"},
		{name: "lzma-dictionary-1GiB", data: buildAr(bin, ctlM, arMem{name: "data.tar.lzma", data: withLZMADict(lzmaAlone(t, data), 1<<30)}), want: "lzma: a dictionary of 1073741824 bytes, more than the 67108864",
			stricter: "liblzma (dpkg) allocates whatever dictionary the header asks for; xz -9 uses 64 MiB"},
		{name: "bomb-bzip2-128MiB", data: buildAr(bin, ctlM, arMem{name: "data.tar.bz2", data: compressWith(t, zerosTar(128<<20), "bzip2", "-9c")}), want: "Limits.MaxRatio",
			stricter: "dpkg would unpack 128 MiB of zeros from 112 bytes; refused after 1,000 times the file's size plus 64 MiB", slow: true},
		{name: "bomb-lzma-128MiB", data: buildAr(bin, ctlM, arMem{name: "data.tar.lzma", data: compressWith(t, zerosTar(128<<20), "xz", "--format=lzma", "-0", "-c")}), want: "Limits.MaxRatio",
			stricter: "as bomb-bzip2-128MiB", slow: true},
		{name: "nested-gzip-in-gzip", data: buildAr(bin, ctlM, arMem{name: "data.tar.gz", data: gz(t, gz(t, data))}), want: "data.tar.gz"},
	}
}

// withLZMADict is the lzma stream b with the dictionary size its header
// gives set to dict.
func withLZMADict(b []byte, dict uint32) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[1:5], dict)
	return b
}

// oldFormatDeb is a .deb in the format before ar (deb-old(5)): its version
// line, the size of control.tar.gz, and the two archives.
func oldFormatDeb(t testing.TB, control, data []byte) []byte {
	return append(fmt.Appendf(nil, "0.939000\n%d\n%s", len(control), control), data...)
}

// withTriggers is a valid .deb whose control.tar holds triggers.
func withTriggers(t testing.TB, triggers string) []byte {
	return hdeb(t, hCtlTar(hostileControl, tent{name: "./triggers", data: []byte(triggers)}), buildTar(false, dataEntries()...))
}

// withLongConffile is a valid .deb whose one conffile, in folders of its
// own, has a path of n bytes (n > 300).
func withLongConffile(t testing.TB, n int) []byte {
	entries := dataEntries()
	dir := "/usr/share/hostile"
	for len(dir)+1+200 < n-50 {
		dir += "/" + strings.Repeat("d", 200)
		entries = append(entries, tent{name: "." + dir + "/", typ: tarDir})
	}
	conf := dir + "/" + strings.Repeat("c", n-len(dir)-1)
	entries = append(entries, tent{name: "." + conf, data: []byte("x\n")})
	return hdeb(t, hCtlTar(hostileControl, tent{name: "./conffiles", data: []byte(conf + "\n")}), buildTar(false, entries...))
}

// withConffiles is a valid .deb whose control.tar holds conffiles.
func withConffiles(t testing.TB, conffiles string) []byte {
	return hdeb(t, hCtlTar(hostileControl, tent{name: "./conffiles", data: []byte(conffiles)}), buildTar(false, dataEntries()...))
}

// flipLast flips a byte n bytes before the end.
func flipLast(b []byte, n int) []byte {
	b = bytes.Clone(b)
	b[len(b)-n] ^= 0x55
	return b
}

// fixups fills the cases that need another case's bytes.
func hostileCorpus(t testing.TB) []hostileCase {
	cases := hostileDebs(t)
	for i := range cases {
		if cases[i].name == "data-after-end" {
			tarb := append(buildTar(false, dataEntries()...), buildTar(true, tent{name: "./usr/share/hostile/hidden", data: []byte("seen by some tar readers only\n")})...)
			cases[i].data = hdeb(t, hCtlTar(hostileControl), tarb)
			cases[i].want = "after the end-of-archive block"
			cases[i].stricter = "dpkg stops at the first zero block; GNU tar may list what follows"
		}
	}
	return cases
}

// TestHostileDebs: each case gets our verdict, with a message naming the
// problem; with the referees installed, each refusal of ours that dpkg-deb
// and dpkg do not share is one the case says is stricter, and each refusal
// of theirs is ours too.
func TestHostileDebs(t *testing.T) {
	referee := refereeAvailable(t)
	for _, tc := range hostileCorpus(t) {
		t.Run(tc.name, func(t *testing.T) {
			info, err := inspectBytes(tc.data)
			switch {
			case tc.accept && err != nil:
				t.Fatalf("refused: %v", err)
			case !tc.accept && err == nil:
				t.Fatalf("accepted: %+v", info.Control)
			case !tc.accept && (!errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v\nwant ErrMalformed containing %q", err, tc.want)
			}
			if !referee || tc.slow {
				return
			}
			ok, detail := dpkgVerdict(t, tc.data)
			switch {
			case !ok && tc.accept:
				t.Fatalf("we accept; the referee refuses: %s", detail)
			case ok && !tc.accept && tc.stricter == "":
				t.Fatalf("we refuse (%v); dpkg-deb and dpkg accept, and the case gives no reason to be stricter", err)
			case !ok && tc.stricter != "":
				// dpkg refused for a reason of this throwaway root (a
				// missing directory, a missing link target); on another
				// system it would unpack it.
				t.Logf("stricter case; the referee refuses here too: %s", detail)
			}
		})
	}
}

func refereeAvailable(t *testing.T) bool {
	if testing.Short() {
		return false
	}
	testenv.RequireTool(t, "dpkg-deb", "dpkg")
	return true
}

// dpkgVerdict runs dpkg-deb --info, --contents and --fsys-tarfile, and
// dpkg --unpack into a throwaway root (the package's format, not its
// dependencies or scripts): accepted only if all succeed.
func dpkgVerdict(t *testing.T, data []byte) (bool, string) {
	dir := t.TempDir()
	deb := filepath.Join(dir, "case.deb")
	if err := os.WriteFile(deb, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, dpkgOpts := dpkgRoot(t)
	runs := [][]string{
		{"dpkg-deb", "--info", deb},
		{"dpkg-deb", "--contents", deb},
		{"dpkg-deb", "--fsys-tarfile", deb},
		append(append([]string{"dpkg"}, dpkgOpts...), "--unpack", deb),
	}
	for _, args := range runs {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return false, fmt.Sprintf("%s %s: %v: %s", args[0], args[len(args)-2], err, strings.TrimSpace(stderr.String()))
		}
	}
	return true, ""
}

var updateCorpus = flag.Bool("update", false, "rewrite testdata/hostile/deb from the generator")

// corpusDir is where the CLI-level runner (make hostile) finds the corpus.
const corpusDir = "../../testdata/hostile/deb"

// TestHostileCorpusFiles: testdata/hostile/deb holds the generated corpus
// and VERDICTS.tsv, for a runner of the built binary (make hostile). Each
// committed file must get the verdict and message the table gives, and
// the names must be the generator's. The bytes are not compared: they
// depend on the compressors' versions; go test ./pkg/deb -run
// HostileCorpusFiles -update rewrites the folder.
func TestHostileCorpusFiles(t *testing.T) {
	cases := hostileCorpus(t)
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	var verdicts strings.Builder
	verdicts.WriteString("# file\tverdict\texit\tmessage part\tstricter than dpkg because\n")
	for _, tc := range cases {
		verdict, exit := "refuse", 2
		if tc.accept {
			verdict, exit = "accept", 0
		}
		fmt.Fprintf(&verdicts, "%s.deb\t%s\t%d\t%s\t%s\n", tc.name, verdict, exit, tc.want, tc.stricter)
	}
	if *updateCorpus {
		if err := os.RemoveAll(corpusDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(corpusDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			if err := os.WriteFile(filepath.Join(corpusDir, tc.name+".deb"), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(corpusDir, "VERDICTS.tsv"), []byte(verdicts.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const hint = " (run go test ./pkg/deb -run HostileCorpusFiles -update)"
	table, err := os.ReadFile(filepath.Join(corpusDir, "VERDICTS.tsv"))
	if err != nil {
		t.Fatal(err, hint)
	}
	if string(table) != verdicts.String() {
		t.Fatalf("VERDICTS.tsv differs from the generator's cases" + hint)
	}
	names, err := filepath.Glob(filepath.Join(corpusDir, "*.deb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(cases) {
		t.Fatalf("%d .deb files, the generator has %d cases"+hint, len(names), len(cases))
	}
	for _, tc := range cases {
		path := filepath.Join(corpusDir, tc.name+".deb")
		_, err := InspectFile(context.Background(), path, archive.Limits{})
		switch {
		case tc.accept && err != nil:
			t.Errorf("%s: refused: %v", path, err)
		case !tc.accept && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path)):
			t.Errorf("%s: %v; want an error naming the file and containing %q", path, err, tc.want)
		}
	}
}

// TestInspectBomb: the 1 GiB bomb is refused after at most its allowance
// of decompressed bytes, with bounded allocation.
func TestInspectBomb(t *testing.T) {
	bin := arMem{name: "debian-binary", data: []byte("2.0\n")}
	ctlM := arMem{name: "control.tar.gz", data: gz(t, hCtlTar(hostileControl))}
	bomb := buildAr(bin, ctlM, arMem{name: "data.tar.zst", data: bombZstd(t, 1<<30)})
	path := filepath.Join(t.TempDir(), "bomb.deb")
	if err := os.WriteFile(path, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := InspectFile(context.Background(), path, archive.Limits{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrMalformed) || !errors.Is(err, archive.ErrLimit) || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), "Limits.MaxRatio") {
		t.Fatalf("error %v: want ErrMalformed and archive.ErrLimit (MaxRatio) naming the file", err)
	}
	// The allocation does not grow with the bomb: buffers and one xz
	// dictionary, never the data.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d bytes refusing a %d-byte bomb; want under 64 MiB", alloc, len(bomb))
	}
	t.Logf("%d-byte bomb refused: %v", len(bomb), err)
}
