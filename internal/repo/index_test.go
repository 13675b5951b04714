package repo

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/xzpar"
)

// packagesText is a Packages file of n stanzas shaped like real ones.
func packagesText(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "Package: kube%d\nArchitecture: amd64\nVersion: 1.%d.%d-1\nMaintainer: K <k@example.org>\nInstalled-Size: %d\nFilename: pool/main/k/kube%d/kube%d_1.%d.%d-1_amd64.deb\nSize: %d\nSHA256: %064x\nDescription: Kubernetes\n kubectl controls the Kubernetes cluster manager.\n",
			i%8, i/100, i%100, 40000+i*7, i%8, i%8, i/100, i%100, 12000000+i*13, uint64(i)*0x9e3779b97f4a7c15)
	}
	return b.Bytes()
}

// Packages.xz is one block per chunk of stanzas: the same bytes whether its
// blocks are compressed anew or taken from the index before, xz decodes it
// to the Packages file, and a change of one stanza recompresses one block.
func TestPackagesXZReusesUnchangedBlocks(t *testing.T) {
	testenv.RequireTool(t, "xz")
	before := packagesText(3000)
	files, err := compressed("main/binary-amd64", before, nil)
	must(t, err)
	prev := &prevIndex{plain: before, xz: files[2].data}
	old, err := xzpar.Blocks(prev.xz)
	must(t, err)
	if len(old) < 10 {
		t.Fatalf("%d blocks for 3000 stanzas, want about 3000/%d", len(old), chunkMask+1)
	}

	// One stanza more in the middle.
	i := len(before)/2 + bytes.Index(before[len(before)/2:], []byte("\n\nPackage: ")) + 2
	after := append(append(append([]byte(nil), before[:i]...), []byte("Package: new\nArchitecture: amd64\nVersion: 1\nFilename: x\nSize: 1\nSHA256: 00\n\n")...), before[i:]...)
	fresh, err := compressed("main/binary-amd64", after, nil)
	must(t, err)
	reused, err := compressed("main/binary-amd64", after, prev)
	must(t, err)
	if !bytes.Equal(fresh[2].data, reused[2].data) {
		t.Fatal("reusing blocks changed the bytes of Packages.xz")
	}
	if got := testenv.Run(t, "xz", "-dc", writeTemp(t, reused[2].data)); !bytes.Equal(got, after) {
		t.Fatalf("xz -dc gives %d bytes, want the %d of Packages", len(got), len(after))
	}
	_, encoded, err := xzIndex(after, prev)
	must(t, err)
	blocks, err := xzpar.Blocks(reused[2].data)
	must(t, err)
	if encoded > 2 {
		t.Fatalf("%d of %d blocks compressed again after adding one stanza, want 1 or 2", encoded, len(blocks))
	}
	if _, encoded, _ := xzIndex(after, nil); encoded != len(blocks) {
		t.Fatalf("with no earlier index %d of %d blocks compressed", encoded, len(blocks))
	}
	// A damaged earlier index is not reused: compressed anew, still right.
	bad := &prevIndex{plain: before, xz: append([]byte(nil), prev.xz[:len(prev.xz)-1]...)}
	again, err := compressed("main/binary-amd64", after, bad)
	must(t, err)
	if !bytes.Equal(again[2].data, fresh[2].data) {
		t.Fatal("a damaged earlier Packages.xz changed the new one")
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := t.TempDir() + "/Packages.xz"
	must(t, os.WriteFile(p, data, 0o644))
	return p
}

// Every gzip index (Packages.gz, Contents-ARCH.gz) has no name and no
// timestamp in its header, as gzip -n writes it: read with the standard
// library's reader, which leaves ModTime zero only for an mtime of 0.
func TestGzipIndexesHaveNoTimestamp(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	_, err := r.Publish(context.Background(), "s", "main", []Package{
		pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1")), pkgOf(t, testDeb(t, dir, "doc", "1.0-1", "all", "d"))})
	must(t, err)
	names, err := filepath.Glob(filepath.Join(root, "dists/s/main/*/Packages.gz"))
	must(t, err)
	more, err := filepath.Glob(filepath.Join(root, "dists/s/main/Contents-*.gz"))
	must(t, err)
	if names = append(names, more...); len(names) != 6 { // binary-{all,amd64,arm64}, Contents-{all,amd64,arm64}
		t.Fatalf("gzip indexes %q, want 6", names)
	}
	for _, name := range names {
		f, err := os.Open(name)
		must(t, err)
		zr, err := gzip.NewReader(f)
		must(t, err)
		if !zr.ModTime.IsZero() || zr.Name != "" || zr.Comment != "" || zr.Extra != nil {
			t.Errorf("%s: gzip header has mtime %v, name %q, comment %q, extra %q; want none", name, zr.ModTime.UTC(), zr.Name, zr.Comment, zr.Extra)
		}
		f.Close()
	}
}

// TestFindManyPackages: looking up each package of a publish or a promotion
// in a component looks at the packages of its name only: 100,000 lookups in
// a component of 100,000 packages, half of them of a version spelled
// otherwise (1.00 for 1.0, found) and half of names it does not list, take
// well under a second; looking through the whole component for each would
// take 10¹⁰ steps, minutes.
func TestFindManyPackages(t *testing.T) {
	const n = 100000
	c := component{}
	for i := range n {
		e := Entry{Package: fmt.Sprintf("p%06d", i), Version: "1.0", Architecture: "amd64", SHA256: fmt.Sprint(i)}
		c[e.key()] = e
	}
	start := time.Now()
	f := c.finder()
	for i := range n {
		name := fmt.Sprintf("p%06d", i/2)
		if i%2 == 1 {
			name = fmt.Sprintf("q%06d", i)
		}
		e, ok := f.find(key{name, "1.00", "amd64"})
		if ok != (i%2 == 0) || ok && e.SHA256 != fmt.Sprint(i/2) {
			t.Fatalf("find %s 1.00: %+v %v", name, e, ok)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("%d lookups in %d packages: %v; each looks through the whole component", n, n, d)
	}
}
