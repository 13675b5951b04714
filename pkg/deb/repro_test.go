package deb

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMain lets the test binary act as a build process for TestReproducible:
// with UPDEB_DEB_BUILD_TREE set it packs that tree and exits.
func TestMain(m *testing.M) {
	if tree := os.Getenv("UPDEB_DEB_BUILD_TREE"); tree != "" {
		t := &testing.T{}
		p := samplePackage()
		p.Entries = treeEntries(t, tree)
		p.Conffiles = nil
		if _, err := Write(context.Background(), os.Getenv("UPDEB_DEB_BUILD_OUT"), p); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Two builds in separate processes with a different TZ, umask, working
// directory, locale and file creation order give the same bytes. (The
// modes are the Package's, written exactly, so the tree has the same ones.)
func TestReproducible(t *testing.T) {
	files := []string{"usr/bin/a", "usr/bin/b", "usr/share/doc/x/copyright", "usr/lib/x/z/deep", "etc/x.conf", "usr/lib/x/A"}
	var outs [][]byte
	for i, env := range []struct{ tz, umask, lang string }{
		{"UTC", "022", "C"}, {"Pacific/Kiritimati", "077", "tr_TR.UTF-8"},
	} {
		dir := t.TempDir()
		tree := filepath.Join(dir, "tree")
		order := files
		if i == 1 {
			order = nil
			for j := len(files) - 1; j >= 0; j-- {
				order = append(order, files[j])
			}
		}
		for _, f := range order {
			writeFile(t, filepath.Join(tree, f), "content of "+f+"\n")
		}
		if err := os.Chmod(filepath.Join(tree, "usr/bin/a"), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("a", filepath.Join(tree, "usr/bin/c")); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out.deb")
		cmd := exec.Command("sh", "-c", "umask "+env.umask+" && exec \"$0\" -test.run=^$", os.Args[0])
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "UPDEB_DEB_BUILD_TREE="+tree, "UPDEB_DEB_BUILD_OUT="+out,
			"TZ="+env.tz, "LANG="+env.lang, "LC_ALL="+env.lang)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %d: %v\n%s", i, err, b)
		}
		outs = append(outs, mustRead(t, out))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("builds differ: %d and %d bytes", len(outs[0]), len(outs[1]))
	}
}
