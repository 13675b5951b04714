package repo

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/updeb/updeb/internal/testenv"
)

func TestPublishTwoVersionsInstallWithApt(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	ctx := context.Background()
	v1 := testDeb(t, dir, "hello", "1.0-1", "amd64", "one")
	v2 := testDeb(t, dir, "hello", "1:2.0~rc.1-1", "amd64", "two")
	doc := testDeb(t, dir, "hello-doc", "1.0-1", "all", "doc")
	res, err := r.Publish(ctx, "bookworm-test", "component/k8s131", []Package{pkgOf(t, v1), pkgOf(t, doc)})
	must(t, err)
	if len(res.Added) != 2 || res.Generation != 1 {
		t.Fatalf("first publish: %+v", res)
	}
	res, err = r.Publish(ctx, "bookworm-test", "component/k8s131", []Package{pkgOf(t, v2)})
	must(t, err)
	if len(res.Added) != 1 || res.Generation != 2 {
		t.Fatalf("second publish: %+v", res)
	}
	a := newAptClient(t, root, "bookworm-test", "component/k8s131")
	a.update()
	a.install("hello", "1.0-1", "one")
	a.install("hello", "1:2.0~rc.1-1", "two")
	a.install("hello", "1.0-1", "one")
	a.install("hello-doc", "1.0-1", "doc")
}
