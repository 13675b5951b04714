package pipeline

import (
	"testing"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/digest"
)

// Only recipe-folder files and raw sources pinned by sha256 get their
// packaged sha256 taken: the two uses writePackage has for it.
func TestNeedsSHA256(t *testing.T) {
	pin := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	srcs := map[string]*source.Verified{
		"raw256": {Source: recipe.ResolvedSource{Kind: "raw", Pinned: map[digest.Algorithm]string{digest.SHA256: pin}}},
		"raw512": {Source: recipe.ResolvedSource{Kind: "raw", Pinned: map[digest.Algorithm]string{digest.SHA512: pin + pin}}},
		"tar":    {Source: recipe.ResolvedSource{Kind: "tar.gz", Pinned: map[digest.Algorithm]string{digest.SHA256: pin}}},
	}
	for _, c := range []struct {
		f    recipe.ResolvedFile
		want bool
	}{
		{recipe.ResolvedFile{LocalPath: "/r/recipes/x/x.service", Dest: "/lib/systemd/system/x.service"}, true},
		{recipe.ResolvedFile{Source: "raw256", Dest: "/usr/bin/x"}, true},
		{recipe.ResolvedFile{Source: "raw512", Dest: "/usr/bin/x"}, false},
		{recipe.ResolvedFile{Source: "tar", Path: "x/x", Dest: "/usr/bin/x"}, false},
		{recipe.ResolvedFile{Source: "unknown", Dest: "/usr/bin/x"}, false},
	} {
		if got := needsSHA256(c.f, srcs); got != c.want {
			t.Errorf("needsSHA256(%+v) = %v, want %v", c.f, got, c.want)
		}
	}
}
