package main

import (
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/digest"
)

// twoSources is a recipe with sources server and node for amd64 and arm64.
func twoSources(t testing.TB) *recipe.Recipe {
	t.Helper()
	r, err := recipe.Parse("recipes/k.yaml", []byte(`name: k8
version: 1.0.0
release-date: 2026-01-02
license: Apache-2.0
copyright: x
architectures: [amd64, arm64]
sources:
  - {name: server, url: "https://x/s-{{.Arch}}", sha256: {amd64: `+strings.Repeat("a", 64)+`, arm64: `+strings.Repeat("b", 64)+`}, signature: {none: x}}
  - {name: node, url: https://x/n, sha256: `+strings.Repeat("c", 64)+`, signature: {none: x}}
packages:
  - {name: k8, summary: x, description: x, section: admin, files: [{source: node, dest: /usr/bin/n}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOperatorDigests(t *testing.T) {
	r := twoSources(t)
	hex := strings.Repeat("d", 64)
	got := map[string]map[string]digest.Set{}
	if err := operatorDigests(r, digest.SHA256, []string{"server:amd64=" + strings.ToUpper(hex), "node:" + hex}, got); err != nil {
		t.Fatal(err)
	}
	if got["server"]["amd64"][digest.SHA256] != hex || got["server"]["arm64"] != nil || got["node"]["amd64"][digest.SHA256] != hex || got["node"]["arm64"][digest.SHA256] != hex {
		t.Errorf("parsed %v", got)
	}
	for spec, want := range map[string]string{
		"amd64=" + hex:              "k8 has sources server, node: say which",
		"etcd:amd64=" + hex:         `k8 has no source "etcd"`,
		"server:i386=" + hex:        `k8 has no architecture "i386"`,
		"server:amd64=xyz":          "server:amd64=xyz",
		"server:amd64=" + hex:       "given twice",
		"server:amd64=":             "server:amd64=",
		"server:amd64=" + hex + "0": "server:amd64=",
	} {
		err := operatorDigests(r, digest.SHA256, []string{spec}, got)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
		if code, _ := exitStatus(err); code != exitUsage {
			t.Errorf("%q: exit %d", spec, code)
		}
	}
}

// FuzzOperatorDigests: any flag value is accepted with a well-formed digest
// for a source and architecture of the recipe, or refused as usage; never a
// panic.
func FuzzOperatorDigests(f *testing.F) {
	f.Add("server:amd64=" + strings.Repeat("a", 64))
	f.Add("node:" + strings.Repeat("a", 128))
	f.Add(":=")
	f.Add("a:b:c=d=e")
	r := twoSources(f)
	f.Fuzz(func(t *testing.T, spec string) {
		got := map[string]map[string]digest.Set{}
		for _, alg := range []digest.Algorithm{digest.SHA256, digest.SHA512} {
			err := operatorDigests(r, alg, []string{spec}, got)
			if err != nil {
				if code, _ := exitStatus(err); code != exitUsage {
					t.Fatalf("%q: exit %d for %v", spec, code, err)
				}
				continue
			}
			for src, arches := range got {
				for arch, ds := range arches {
					if _, err := digest.New(alg, ds[alg]); err != nil || (src != "server" && src != "node") || (arch != "amd64" && arch != "arm64") {
						t.Fatalf("%q: accepted %s %s %v", spec, src, arch, ds)
					}
				}
			}
		}
	})
}
