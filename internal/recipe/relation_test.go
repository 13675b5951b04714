package recipe

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A recipe's relations are checked by pkg/deb's grammar, the one Write checks
// the package with: what lint accepts, the build accepts, and what the build
// would refuse, lint already names at its line.
func TestRelationsUseDebsGrammar(t *testing.T) {
	const at = "    section: admin\n"
	for _, tt := range []struct {
		name, fields string
		want         string // "" for none
	}{
		{"exact and ranges", "    depends: [\"libc6 (>= 2.36)\", \"iptables (>= 1.8) | nftables\", \"passwd:any\"]\n    provides: [\"xv (= 1.0)\"]\n", ""},
		{"syntax", "    depends: [\"libc6 (> 2)\"]\n", `recipes/x.yaml:17:15: depends: "libc6 (> 2)": not NAME [(OP VERSION)] [| ...] (e.g. "libc6 (>= 2.34)")`},
		{"architecture list (source packages only)", "    depends: [\"libc6 [amd64]\"]\n", `recipes/x.yaml:17:15: depends: "libc6 [amd64]": not NAME [(OP VERSION)]`},
		{"alternatives in conflicts", "    conflicts: [\"a1 | b1\"]\n", `recipes/x.yaml:17:17: conflicts: "a1 | b1": alternatives (|) are not allowed, found "a1 | b1"`},
		{"provides a range", "    provides: [\"xv (>= 1)\"]\n", `recipes/x.yaml:17:16: provides: "xv (>= 1)": "xv (>= 1)": only an exact version (=) may be provided, found >=`},
		{"native qualifier (Build-Depends only)", "    depends: [\"libc6:native\"]\n", `recipes/x.yaml:17:15: depends: "libc6:native": "libc6:native": architecture qualifier native: belongs to a source package's Build-Depends`},
		{"bad version", "    recommends: [\"xv (>= v1)\"]\n", `recipes/x.yaml:17:18: recommends: "xv (>= v1)": "xv (>= v1)": version "v1": upstream version "v1" must start with a digit`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := loadFindings(t, strings.Replace(baseRecipe, at, at+tt.fields, 1))
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("findings:\n%s", strings.Join(got, "\n"))
			case tt.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tt.want)):
				t.Errorf("findings:\n%s\nwant one starting:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

// addRelation finds a name among the alternatives, qualified or versioned.
func TestAddRelation(t *testing.T) {
	for _, tt := range []struct {
		list []string
		name string
		want []string
	}{
		{nil, "adduser", []string{"adduser"}},
		{[]string{"passwd | adduser (>= 3)"}, "adduser", []string{"passwd | adduser (>= 3)"}},
		{[]string{"libc6:any"}, "libc6", []string{"libc6:any"}},
		{[]string{"libc6-dev"}, "libc6", []string{"libc6-dev", "libc6"}},
	} {
		if got := addRelation(slices.Clone(tt.list), tt.name); !slices.Equal(got, tt.want) {
			t.Errorf("addRelation(%q, %q) = %q, want %q", tt.list, tt.name, got, tt.want)
		}
	}
}

// The control texts a recipe writes (summary, description, relations,
// maintainer, homepage) are checked at their line as pkg/deb's Write checks
// them: a control character or a line break where the control file takes one
// line is lint's finding, not a build that fails naming no recipe line.
func TestControlTextsCheckedAsWriteDoes(t *testing.T) {
	for _, tt := range []struct{ name, old, new, want string }{
		{"control character in the summary", "summary: X tool", `summary: "X\x01tool"`, `recipes/x.yaml:14:14: summary: "X\x01tool" must not hold the control character '\x01'`},
		{"DEL in the description", "description: The X tool.", `description: "The X\x7ftool."`, `recipes/x.yaml:15:18: description: must not hold the control character '\x7f'`},
		// dpkg takes the line; lintian, and so Write, read it as the blank line that ends the control file.
		{"a line of no-break spaces in the description", "description: The X tool.", `description: "The X tool.\n\u00a0\u00a0\nMore."`, `recipes/x.yaml:15:18: description: line 2 holds only white space ("\u00a0\u00a0"), which lintian reads as a blank line that ends the control file: leave the line empty for a paragraph break`},
		{"newline in a relation", "    section: admin\n", "    section: admin\n    depends: [\"libc6\\n(>= 2.36)\"]\n", `recipes/x.yaml:17:15: depends: "libc6\n(>= 2.36)": must be a single line`},
		{"carriage return after a relation", "    section: admin\n", "    section: admin\n    suggests: [\"libc6\\r\"]\n", `recipes/x.yaml:17:16: suggests: "libc6\r": must not hold the control character '\r'`},
		{"carriage return in the maintainer", "copyright: X Authors\n", "copyright: X Authors\nmaintainer: \"X\\r <x@example.org>\"\n", `recipes/x.yaml:6:13: maintainer: "X\r <x@example.org>" is not "Full Name <email@address>"`},
		{"newline in the homepage", "copyright: X Authors\n", "copyright: X Authors\nhomepage: \"https://example.org/x\\ny\"\n", `recipes/x.yaml:6:11: homepage: "https://example.org/x\ny" is not an http(s) URL`},
		{"space in the homepage", "copyright: X Authors\n", "copyright: X Authors\nhomepage: \"https://example.org/x \"\n", `recipes/x.yaml:6:11: homepage: "https://example.org/x " is not an http(s) URL`},
		{"homepage without a host", "copyright: X Authors\n", "copyright: X Authors\nhomepage: \"https://\"\n", `recipes/x.yaml:6:11: homepage: "https://" is not an http(s) URL`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(baseRecipe, tt.old) {
				t.Fatalf("base recipe lacks %q", tt.old)
			}
			got := loadFindings(t, strings.Replace(baseRecipe, tt.old, tt.new, 1))
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
	if err := CheckDefaultMaintainer("X\x01Y <x@example.org>"); err == nil {
		t.Error("CheckDefaultMaintainer takes a control character")
	}
}

// A package whose name, version and architecture make a .deb file name
// longer than 255 bytes is refused by lint at the name, as Write refuses it.
func TestPackageFileNameTooLong(t *testing.T) {
	long := strings.Repeat("x", 238) // NAME_1.0.0-1_amd64.deb: 238+18 = 256 bytes
	got := loadFindings(t, strings.Replace(baseRecipe, "  - name: xx\n", "  - name: "+long+"\n", 1))
	if len(got) != 2 || !strings.HasPrefix(got[0], "recipes/x.yaml:13:11: package name: ") || !strings.HasSuffix(got[0], `version "1.0.0-1" and architecture "amd64" make a file name longer than 255 bytes: shorten the name`) {
		t.Errorf("findings:\n%s", strings.Join(got, "\n"))
	}
	// The build writes NAME_1.0.0-1_amd64.deb.intoto.json beside it: 12
	// bytes more, so 225 is the longest name (237 passed, and every build
	// of it failed on the record's name).
	for _, n := range []int{237, 226} {
		got := loadFindings(t, strings.Replace(baseRecipe, "  - name: xx\n", "  - name: "+long[:n]+"\n", 1))
		want := fmt.Sprintf(".deb.intoto.json, is a file name of %d bytes, more than the 255 a file system takes: shorten the name", n+30)
		// One finding for each architecture (amd64 and arm64), as for the .deb.
		if len(got) != 2 || !strings.HasPrefix(got[0], "recipes/x.yaml:13:11: package name: the provenance record the build writes beside the package, ") || !strings.HasSuffix(got[0], want) {
			t.Errorf("a name of %d: findings:\n%s", n, strings.Join(got, "\n"))
		}
	}
	if got := loadFindings(t, strings.Replace(baseRecipe, "  - name: xx\n", "  - name: "+long[:225]+"\n", 1)); got != nil {
		t.Errorf("a name of 225 (a record's file name of 255 bytes): findings:\n%s", strings.Join(got, "\n"))
	}
}

// A package whose control file would be larger than Write takes (a
// description of 300 KiB) is refused by lint at the description, not by a
// build that fails after the downloads, naming no recipe line.
func TestControlFileTooLarge(t *testing.T) {
	block := func(size int) string {
		line := "A line of a very long description."
		return "description: |" + strings.Repeat("\n      "+line, size/len(line))
	}
	got := loadFindings(t, strings.Replace(baseRecipe, "description: The X tool.", block(300<<10), 1))
	want := "recipes/x.yaml:15:18: package xx: its control file would be larger than the 262144 bytes a control file may have (apt refuses a whole Packages index with a stanza near 1 MiB); its Description field alone has"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("findings:\n%s\nwant one starting:\n%s", strings.Join(got, "\n"), want)
	}
	// A relation as long is refused at its field.
	long := "    section: admin\n    depends: [" + strings.Repeat("a", 300<<10) + "]\n"
	got = loadFindings(t, strings.Replace(baseRecipe, "    section: admin\n", long, 1))
	if len(got) != 1 || got[0] != "recipes/x.yaml:17:14: package xx: its control file would be larger than the 262144 bytes a control file may have (apt refuses a whole Packages index with a stanza near 1 MiB); its Depends field alone has 307210: shorten it" {
		t.Errorf("findings:\n%s", strings.Join(got, "\n"))
	}
	// One of 200 KiB is not refused: Write takes it.
	if got := loadFindings(t, strings.Replace(baseRecipe, "description: The X tool.", block(200<<10), 1)); got != nil {
		t.Errorf("a description of 200 KiB: findings:\n%s", strings.Join(got, "\n"))
	}
}

// A value of 200 KB is quoted in its finding, and in its warning,
// by its start and its end, not whole: a line of that size is no message.
func TestHugeValueQuotedShort(t *testing.T) {
	huge := strings.Repeat("a", 200000) // under what a control file may hold
	got := loadFindings(t, strings.Replace(baseRecipe, "copyright: X Authors\n", "copyright: X Authors\nhomepage: \"https://example.org/"+huge+" \"\n", 1))
	if len(got) != 1 || len(got[0]) > 2200 || !strings.HasPrefix(got[0], `recipes/x.yaml:6:11: homepage: "https://example.org/aaa`) || !strings.HasSuffix(got[0], `aaa " is not an http(s) URL`) {
		t.Errorf("%d findings, the first of %d bytes", len(got), len(got[0]))
	}
	// A description line read as a control statement (".aaa...") is quoted in a warning.
	warnings := loadWarnings(t, strings.Replace(baseRecipe, "description: The X tool.", `description: "The X tool.\n.`+huge+`"`, 1), nil)
	for _, w := range warnings {
		if len(w) > 2200 {
			t.Errorf("a warning of %d bytes: %.80s", len(w), w)
		}
	}
	if len(warnings) == 0 {
		t.Error("no warning about the description's line 2")
	}
}

// A lintian override with a control character (a "\r" from an escape) can
// match no tag lintian reports (lintian 2.116: mismatched-override, the tag
// left as it was): lint refuses it, not updeb verify failing on the tag.
func TestOverrideWithControlCharacter(t *testing.T) {
	at := "    section: admin\n"
	got := loadFindings(t, strings.Replace(baseRecipe, at, at+`    lintian-overrides: ["no-manual-page [usr/bin/x]\r"]`+"\n", 1))
	want := `recipes/x.yaml:17:25: lintian-overrides: "no-manual-page [usr/bin/x]\r" holds a control character (U+000D), which no context of a lintian tag holds: the override would never apply; remove it`
	if len(got) != 1 || got[0] != want {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if got := loadFindings(t, strings.Replace(baseRecipe, at, at+"    lintian-overrides: [\"no-manual-page [usr/bin/x]\"]\n", 1)); got != nil {
		t.Errorf("findings:\n%s", strings.Join(got, "\n"))
	}
}
