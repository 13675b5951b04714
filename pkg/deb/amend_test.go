package deb

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/pkg/archive"
)

// TestAmend: Amend runs after every file's bytes went into data.tar (what
// it learns from them can decide a field) and before the control file is
// written; what it sets is checked as the rest of the control, and a
// refusal or an error leaves no package.
func TestAmend(t *testing.T) {
	p := samplePackage()
	read := false
	open := p.Entries[0].Open
	p.Entries[0].Open = func() (io.ReadCloser, error) { read = true; return open() }
	p.Amend = func(c *Control) error {
		if !read {
			t.Error("Amend ran before the files were read")
		}
		c.Depends = append(c.Depends, "libc6 (>= 2.34)")
		return nil
	}
	path, _ := writeTemp(t, p)
	info, err := InspectFile(context.Background(), path, archive.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Control.Value("Depends"); !strings.HasSuffix(got, "libc6 (>= 2.34)") {
		t.Errorf("Depends: %q", got)
	}
	for _, amend := range []func(c *Control) error{
		func(c *Control) error { c.Depends = []string{"libc6 (>= "}; return nil },
		func(c *Control) error { return errors.New("refused") },
	} {
		p := samplePackage()
		p.Amend = amend
		out := filepath.Join(t.TempDir(), "x.deb")
		if _, err := Write(context.Background(), out, p); err == nil {
			t.Error("Write took an Amend that failed or set a bad relation")
		}
		if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*")); len(m) > 0 {
			t.Errorf("left behind: %v", m)
		}
	}
}
