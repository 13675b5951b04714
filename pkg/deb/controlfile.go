package deb

import (
	"archive/tar"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/updeb/updeb/pkg/control"
)

// fieldOrder is dpkg's order for DEBIAN/control (Dpkg::Control::FieldsCore,
// CTRL_PKG_DEB). Fields not listed here follow, in the order given.
var fieldOrder = []string{"Package", "Package-Type", "Source", "Version", "Kernel-Version",
	"Built-For-Profiles", "Auto-Built-Package", "Architecture", "Subarchitecture", "Installer-Menu-Item",
	"Build-Essential", "Essential", "Protected", "Origin", "Bugs", "Maintainer", "Installed-Size",
	"Pre-Depends", "Depends", "Recommends", "Suggests", "Enhances", "Conflicts", "Breaks", "Replaces",
	"Provides", "Built-Using", "Static-Built-Using", "Section", "Priority", "Multi-Arch", "Homepage",
	"Description", "Tag", "Task"}

type relation struct {
	name   string
	values []string
}

func (c *Control) relations() []relation {
	return []relation{{"Pre-Depends", c.PreDepends}, {"Depends", c.Depends}, {"Recommends", c.Recommends},
		{"Suggests", c.Suggests}, {"Enhances", c.Enhances}, {"Conflicts", c.Conflicts}, {"Breaks", c.Breaks},
		{"Replaces", c.Replaces}, {"Provides", c.Provides}}
}

// description folds Summary and the extended Description into the field value:
// trailing spaces and leading/trailing blank lines dropped, inner blank lines ".".
func (c *Control) description() string {
	var lines []string
	for _, l := range strings.Split(c.Description, "\n") {
		lines = append(lines, strings.TrimRight(l, " \t"))
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if l == "" {
			lines[i] = "."
		}
	}
	return strings.Join(append([]string{strings.TrimSpace(c.Summary)}, lines...), "\n")
}

// Paragraph returns DEBIAN/control as Write writes it, with the given
// Installed-Size (KiB). Empty fields are left out.
func (c *Control) Paragraph(installedSize int64) control.Paragraph {
	var fields []control.Field
	add := func(name, value string) {
		if value != "" {
			fields = append(fields, control.Field{Name: name, Value: value})
		}
	}
	add("Package", c.Package)
	add("Version", c.Version)
	add("Architecture", c.Architecture)
	add("Maintainer", c.Maintainer)
	add("Installed-Size", strconv.FormatInt(installedSize, 10))
	for _, r := range c.relations() {
		add(r.name, strings.Join(r.values, ", "))
	}
	add("Section", c.Section)
	add("Priority", c.Priority)
	add("Multi-Arch", c.MultiArch)
	add("Homepage", c.Homepage)
	add("Description", c.description())
	fields = append(fields, c.Extra...)
	rank := func(name string) int {
		for i, f := range fieldOrder {
			if strings.EqualFold(f, name) {
				return i
			}
		}
		return len(fieldOrder)
	}
	sort.SliceStable(fields, func(i, j int) bool { return rank(fields[i].Name) < rank(fields[j].Name) })
	return control.Paragraph{Fields: fields}
}

// controlTar builds control.tar (uncompressed; it is small) with "./" first and
// the members sorted by name, as dpkg-deb's walk of DEBIAN/ gives them.
func controlTar(p *Package, installedSize int64, files []FileResult) ([]byte, error) {
	type member struct {
		name    string
		mode    int64
		content []byte
	}
	para := p.Control.Paragraph(installedSize)
	members := []member{{"control", 0o644, para.Bytes()}}
	// As dh_md5sums: every regular file except the conffiles (dpkg records
	// their digests itself).
	conffile := map[string]bool{}
	for _, c := range p.Conffiles {
		conffile[c] = true
	}
	var sorted []FileResult
	for _, f := range files {
		if !conffile[f.Path] {
			sorted = append(sorted, f)
		}
	}
	if len(sorted) > 0 {
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
		var b bytes.Buffer
		for _, f := range sorted {
			fmt.Fprintf(&b, "%s  %s\n", f.MD5, f.Path[1:])
		}
		members = append(members, member{"md5sums", 0o644, b.Bytes()})
	}
	if len(p.Conffiles) > 0 {
		members = append(members, member{"conffiles", 0o644, []byte(strings.Join(p.Conffiles, "\n") + "\n")})
	}
	if p.Triggers != "" {
		t := p.Triggers
		if !strings.HasSuffix(t, "\n") {
			t += "\n"
		}
		members = append(members, member{"triggers", 0o644, []byte(t)})
	}
	for _, s := range p.Scripts {
		members = append(members, member{s.Name, int64(scriptMode(s)), s.Content})
	}
	sort.Slice(members, func(i, j int) bool { return members[i].name < members[j].name })

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := p.SourceDateEpoch
	hdr := func(name string, typ byte, mode, size int64) *tar.Header {
		return &tar.Header{Name: name, Typeflag: typ, Mode: mode, Size: size, Uname: "root", Gname: "root",
			ModTime: mtime, Format: tar.FormatGNU}
	}
	if err := tw.WriteHeader(hdr("./", tar.TypeDir, 0o755, 0)); err != nil {
		return nil, err
	}
	for _, m := range members {
		if err := tw.WriteHeader(hdr("./"+m.name, tar.TypeReg, m.mode, int64(len(m.content)))); err != nil {
			return nil, fmt.Errorf("control.tar: %s: %w", m.name, err)
		}
		if _, err := tw.Write(m.content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
