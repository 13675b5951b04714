package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/digest"
)

// Only recipe-folder files and raw sources get their packaged sha256 taken:
// the two uses writePackage has for it. A raw source's packaged bytes are
// checked against the sha256 of the bytes verified, whatever vouched for
// them (a sha256 pin, a sha512 pin, a signature alone).
func TestRawPackagedSHA256(t *testing.T) {
	empty := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" // sha256 of nothing
	other := "a665a45920422f9d417e4867efdc4fb8a04a1f3fff1fa07e998e86f7f7a27ae3"
	verified := func(kind string, pins digest.Set) *source.Verified {
		return &source.Verified{
			Source:   recipe.ResolvedSource{Kind: kind, URL: "https://example.org/" + kind, Pinned: pins},
			Artifact: &fetch.Result{Digests: digest.Set{digest.SHA256: empty}},
		}
	}
	srcs := map[string]*source.Verified{
		"raw256":    verified("raw", digest.Set{digest.SHA256: empty}),
		"raw512":    verified("raw", digest.Set{digest.SHA512: "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"}),
		"rawSigned": verified("raw", nil),
		"tar":       verified("tar.gz", digest.Set{digest.SHA256: empty}),
	}
	for _, c := range []struct {
		f    recipe.ResolvedFile
		want bool
	}{
		{recipe.ResolvedFile{LocalPath: "/r/recipes/x/x.service", Dest: "/lib/systemd/system/x.service"}, true},
		{recipe.ResolvedFile{Source: "raw256", Dest: "/usr/bin/a"}, true},
		{recipe.ResolvedFile{Source: "raw512", Dest: "/usr/bin/b"}, true},
		{recipe.ResolvedFile{Source: "rawSigned", Dest: "/usr/bin/c"}, true},
		{recipe.ResolvedFile{Source: "tar", Path: "x/x", Dest: "/usr/bin/d"}, false},
		{recipe.ResolvedFile{Source: "unknown", Dest: "/usr/bin/e"}, false},
	} {
		if got := needsSHA256(c.f, srcs); got != c.want {
			t.Errorf("needsSHA256(%+v) = %v, want %v", c.f, got, c.want)
		}
	}

	pp := &recipe.ResolvedPackage{Files: []recipe.ResolvedFile{
		{Source: "raw256", Dest: "/usr/bin/a"}, {Source: "raw512", Dest: "/usr/bin/b"}, {Source: "rawSigned", Dest: "/usr/bin/c"},
		{Source: "tar", Path: "x/x", Dest: "/usr/bin/d"},
	}}
	files := []deb.FileResult{{Path: "/usr/bin/a", SHA256: empty}, {Path: "/usr/bin/b", SHA256: empty}, {Path: "/usr/bin/c", SHA256: empty}, {Path: "/usr/bin/d"}}
	if err := checkRawPackaged(pp, srcs, files); err != nil {
		t.Fatalf("the verified bytes packaged: %v", err)
	}
	for i := range 3 { // each raw source's bytes changed after verification
		changed := append([]deb.FileResult(nil), files...)
		changed[i].SHA256 = other
		var me *digest.MismatchError
		if err := checkRawPackaged(pp, srcs, changed); !errors.As(err, &me) || me.Got != other || me.Want != empty {
			t.Errorf("%s changed: %v, want a mismatch naming both digests", files[i].Path, err)
		}
	}
}

// A raw source is packaged from the cache file itself, not read through
// archive.Select, yet the limit for one file holds for it as for an
// archive's member (and for the raw artifact Select would be given): a
// file updeb publish could not read back (deb.Inspect's limit) is refused
// before the package is written, naming the source, its URL and the dest.
func TestRawSourceOverFileLimit(t *testing.T) {
	limit := archive.DefaultLimits().MaxFileSize
	for _, c := range []struct {
		size int64
		lim  archive.Limits
		ok   bool
	}{
		{limit, archive.Limits{}, true},
		{limit + 1, archive.Limits{}, false},
		{11, archive.Limits{MaxFileSize: 10}, false},
	} {
		srcs := map[string]*source.Verified{"big": {
			Source:   recipe.ResolvedSource{Kind: "raw", URL: "https://example.org/big"},
			Artifact: &fetch.Result{Path: "/cache/sha256/ab/abcd", Size: c.size},
		}}
		plan := &recipe.Resolved{Packages: []recipe.ResolvedPackage{{Name: "big", Files: []recipe.ResolvedFile{{Source: "big", Dest: "/usr/bin/big"}}}}}
		_, err := newMembers(plan, srcs, t.TempDir(), c.lim, nil)
		if c.ok {
			if err != nil {
				t.Errorf("size %d: %v", c.size, err)
			}
			continue
		}
		want := fmt.Sprintf("source big (https://example.org/big) for /usr/bin/big: archive /cache/sha256/ab/abcd: size %d bytes is above the", c.size)
		if !errors.Is(err, archive.ErrLimit) || !strings.Contains(err.Error(), want) {
			t.Errorf("size %d over the limit: %v, want ErrLimit with %q", c.size, err, want)
		}
	}
}

// A source whose URL's name ends in no suffix updeb reads, and whose
// recipe says no kind, is packaged as it is (kind raw): when its bytes
// are an archive (a release served as /download?os=linux, its name only
// in Content-Disposition), the build is refused, naming the format and
// the kind to write, instead of installing the tarball as /usr/bin/tool.
// A kind: raw the recipe writes packages the bytes as they are.
func TestRawSourceThatIsAnArchive(t *testing.T) {
	testenv.RequireTool(t, "tar")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "tar", "-C", dir, "-czf", filepath.Join(dir, "release"), "tool")
	elf := filepath.Join(dir, "elf")
	if err := os.WriteFile(elf, append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 100)...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, kind string
		want       string // "" for none
	}{
		{"release", "", "source tool (https://example.org/download?os=linux) for /usr/bin/tool: the file is gzip data, an archive or compressed file, and the recipe says no kind: its URL's name ends in no suffix updeb reads as an archive, so it would be packaged as it is: write kind: tar.gz and the path of the file inside it, or kind: raw to package these bytes as they are"},
		{"release", "raw", ""},
		{"elf", "", ""},
	} {
		srcs := map[string]*source.Verified{"tool": {
			Source:   recipe.ResolvedSource{Name: "tool", Kind: "raw", KindFromURL: c.kind == "", URL: "https://example.org/download?os=linux"},
			Artifact: &fetch.Result{Path: filepath.Join(dir, c.file), Size: 10},
		}}
		plan := &recipe.Resolved{Packages: []recipe.ResolvedPackage{{Name: "tool", Files: []recipe.ResolvedFile{{Source: "tool", Dest: "/usr/bin/tool"}}}}}
		_, err := newMembers(plan, srcs, t.TempDir(), archive.Limits{}, nil)
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && got != c.want {
			t.Errorf("%s, kind %q:\n got %v\nwant %s", c.file, c.kind, err, c.want)
		}
	}
}
