package digest

import (
	"errors"
	"strings"
	"testing"
)

var (
	h256  = strings.Repeat("ab", 32)
	h256b = strings.Repeat("cd", 32)
	h512  = strings.Repeat("ef", 64)
)

func TestParseChecksums(t *testing.T) {
	cases := []struct {
		name, in, lookup string
		want             Set
	}{
		{"bare hex", h256 + "\n", "anything.tar.gz", Set{SHA256: h256}},
		{"bare sha512 uppercase", strings.ToUpper(h512), "x", Set{SHA512: h512}},
		{"two spaces", h256 + "  helm-v3.15.4-linux-amd64.tar.gz\n", "helm-v3.15.4-linux-amd64.tar.gz", Set{SHA256: h256}},
		{"one space", h256 + " istioctl-1.22.3-linux-amd64.tar.gz\n", "istioctl-1.22.3-linux-amd64.tar.gz", Set{SHA256: h256}},
		{"binary mode", h256 + " *runc.amd64\n", "runc.amd64", Set{SHA256: h256}},
		{"tab", h256 + "\trunc.amd64\n", "runc.amd64", Set{SHA256: h256}},
		{"goreleaser", h256b + "  helmfile_0.169.2_darwin_amd64.tar.gz\n" + h256 + "  helmfile_0.169.2_linux_amd64.tar.gz\n", "helmfile_0.169.2_linux_amd64.tar.gz", Set{SHA256: h256}},
		{"base name", h256 + "  ./bin/runc.arm64\n" + h256b + "  runc.amd64\n", "runc.arm64", Set{SHA256: h256}},
		{"exact beats base name", h256 + "  runc.amd64\n" + h256b + "  old/runc.amd64\n", "runc.amd64", Set{SHA256: h256}},
		{"bsd", "SHA256 (etcd.tar.gz) = " + h256 + "\nSHA512 (etcd.tar.gz) = " + h512 + "\n", "etcd.tar.gz", Set{SHA256: h256, SHA512: h512}},
		{"comments and blanks", "# sums\n\n" + h256 + "  a\n", "a", Set{SHA256: h256}},
		{"crlf", h256 + "  a\r\n", "a", Set{SHA256: h256}},
		{"space in name", h256 + "  my file.tgz\n", "my file.tgz", Set{SHA256: h256}},
		// " (" in a name is not a BSD-style line, and must not spoil the others.
		{"parenthesis in name", h256 + "  tool (1).tgz\n" + h256b + "  tool.tgz\n", "tool (1).tgz", Set{SHA256: h256}},
		{"parenthesis in another name", h256 + "  tool (1).tgz\n" + h256b + "  tool.tgz\n", "tool.tgz", Set{SHA256: h256b}},
		{"./ is the same name", h256 + "  ./runc.amd64\n" + h256 + "  runc.amd64\n" + h256b + "  old/runc.amd64\n", "runc.amd64", Set{SHA256: h256}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs, err := ParseChecksums(strings.NewReader(c.in), "sums.txt")
			if err != nil {
				t.Fatal(err)
			}
			got, err := cs.Lookup(c.lookup)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) || got[SHA256] != c.want[SHA256] || got[SHA512] != c.want[SHA512] {
				t.Fatalf("Lookup = %v, want %v", got, c.want)
			}
		})
	}
}

func TestParseChecksumsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "sums.txt: no checksum in it"},
		{"# only a comment\n", "sums.txt: no checksum in it"},
		{h256 + "\n" + h256b + "  b\n", "sums.txt:1: a digest without a file name is only allowed as the file's single entry"},
		{"d41d8cd98f00b204e9800998ecf8427e  a\n", "sums.txt:1: 32 hex digits is an MD5 or SHA-1 digest"},
		{h256 + "  a\nzz  b\n", `sums.txt:2: "zz" is not a sha256`},
		{"MD5 (a) = d41d8cd98f00b204e9800998ecf8427e\n", `sums.txt:1: algorithm "MD5" is not accepted`},
		{"SHA256 (a) " + h256 + "\n", `sums.txt:1: BSD-style line`},
		{strings.Repeat("g", 64) + "  a\n", "not hexadecimal"},
		{"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n", "verify it first"},
	} {
		_, err := ParseChecksums(strings.NewReader(c.in), "sums.txt")
		if !errors.Is(err, ErrChecksums) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseChecksums(%q) = %v, want %q", c.in, err, c.want)
		}
	}
	cs, _ := ParseChecksums(strings.NewReader(h256+"  a/runc\n"+h256b+"  b/runc\n"+h256+"  x\n"+h256b+"  x\n"+h256+"  y\n"+h256b+" *./y\n"), "https://example/SHA256SUMS")
	for name, want := range map[string]string{
		"runc":  "https://example/SHA256SUMS: lines 1 and 2 give different sha256 digests for \"runc\"",
		"x":     "lines 3 and 4 give different",
		"y":     "lines 5 and 6 give different", // ./y is y: two digests for one file
		"other": "https://example/SHA256SUMS has no entry for \"other\" (6 entries)",
	} {
		if _, err := cs.Lookup(name); !errors.Is(err, ErrChecksums) || !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(%q) = %v, want %q", name, err, want)
		}
	}
	one, _ := ParseChecksums(strings.NewReader(h256+"  a\n"), "a.sha256")
	if _, err := one.Lookup("b"); err == nil || !strings.HasSuffix(err.Error(), `has no entry for "b" (1 entry)`) {
		t.Errorf("Lookup in a file of one entry: %v", err)
	}
}

func FuzzParseChecksums(f *testing.F) {
	f.Add(h256 + "  a\n")
	f.Add("SHA512 (b) = " + h512 + "\n")
	f.Add(h256 + " *c\n# x\n\n" + h256b + "  ./d/c\n")
	f.Fuzz(func(t *testing.T, in string) {
		cs, err := ParseChecksums(strings.NewReader(in), "f")
		if err != nil {
			if !errors.Is(err, ErrChecksums) {
				t.Fatalf("error does not wrap ErrChecksums: %v", err)
			}
			return
		}
		for _, e := range cs.Entries {
			if e.Digest.Algorithm.Size()*2 != len(e.Digest.Hex) {
				t.Fatalf("entry %+v has a digest of the wrong length", e)
			}
			set, err := cs.Lookup(e.Name)
			if err == nil && set[e.Digest.Algorithm] == "" {
				t.Fatalf("Lookup(%q) = %v lacks %s", e.Name, set, e.Digest.Algorithm)
			}
		}
	})
}
