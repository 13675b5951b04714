package realrecipes

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/build"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/pgptest"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testenv"
	"github.com/updeb/updeb/pkg/digest"
)

// The stand-ins below are written from ARTIFACTS.md (the upstream release
// layouts), not from the recipes: a wrong URL template, archive path or
// checksum-file name in a recipe makes its build fail here.

// entry is one member of a stand-in archive; a name ending in / is a folder.
type entry struct {
	name   string
	target string // symlink target, for a symlink member
}

// artifact is one stand-in upstream file at its real URL (amd64).
type artifact struct {
	url     string
	members []entry // nil: a raw binary
	sums    string  // URL of the checksum file that lists it ("" none)
	sumsFmt string  // "sha256sum" (hex  name), "bare" (hex only), "clearsigned"
	sig     string  // URL of its detached signature ("" none)
}

type standin struct {
	recipe    string
	keyring   string // the recipe's keyring, replaced by the test key ("" none)
	artifacts []artifact
	installed map[string]string // installed path -> the member (URL#name) it must hold, or "-> target" for a symlink
}

const gh = "https://github.com/"

func k8sServer(v string) []entry {
	var es []entry
	es = append(es, entry{name: "kubernetes/"}, entry{name: "kubernetes/server/"}, entry{name: "kubernetes/server/bin/"},
		entry{name: "kubernetes/LICENSES/LICENSE"}, entry{name: "kubernetes/addons/"}, entry{name: "kubernetes/kubernetes-src.tar.gz"})
	for _, b := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubeadm", "kubectl", "kubelet", "kube-log-runner", "mounter"} {
		es = append(es, entry{name: "kubernetes/server/bin/" + b})
	}
	for _, img := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		es = append(es, entry{name: "kubernetes/server/bin/" + img + ".tar"}, entry{name: "kubernetes/server/bin/" + img + ".docker_tag"})
	}
	return es
}

var cniPlugins = []string{"bandwidth", "bridge", "dhcp", "dummy", "firewall", "host-device", "host-local", "ipvlan", "loopback", "macvlan", "portmap", "ptp", "sbr", "static", "tap", "tuning", "vlan", "vrf"}

func standins() []standin {
	const k8s = "https://dl.k8s.io/v1.36.0/"
	cni := gh + "containernetworking/plugins/releases/download/v1.9.1/cni-plugins-linux-amd64-v1.9.1.tgz"
	cniMembers := []entry{{name: "./"}, {name: "./LICENSE"}, {name: "./README.md"}}
	cniInstalled := map[string]string{}
	for _, p := range cniPlugins {
		cniMembers = append(cniMembers, entry{name: "./" + p})
		cniInstalled["/usr/lib/cni/"+p] = cni + "#./" + p
		cniInstalled["/opt/cni/bin/"+p] = "-> /usr/lib/cni/" + p
	}
	etcd := gh + "etcd-io/etcd/releases/download/v3.6.14/etcd-v3.6.14-linux-amd64.tar.gz"
	etcdDir := "etcd-v3.6.14-linux-amd64/"
	helm := "https://get.helm.sh/helm-v3.21.4-linux-amd64.tar.gz"
	runc := gh + "opencontainers/runc/releases/download/v1.4.3/"
	return []standin{
		{
			recipe: "kubernetes-1.36",
			artifacts: []artifact{
				{url: k8s + "kubernetes-server-linux-amd64.tar.gz", members: k8sServer("1.36.0")},
				{url: k8s + "kubernetes-node-linux-amd64.tar.gz", members: []entry{{name: "kubernetes/"}, {name: "kubernetes/node/bin/kubelet"},
					{name: "kubernetes/node/bin/kube-proxy"}, {name: "kubernetes/node/bin/kubeadm"}, {name: "kubernetes/node/bin/kubectl"}, {name: "kubernetes/LICENSES/LICENSE"}}},
			},
			installed: map[string]string{
				"/usr/bin/kube-apiserver":                    k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kube-apiserver",
				"/usr/bin/kube-controller-manager":           k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kube-controller-manager",
				"/usr/bin/kube-scheduler":                    k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kube-scheduler",
				"/usr/bin/kubectl":                           k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kubectl",
				"/usr/bin/kubectl-1.36":                      k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kubectl",
				"/usr/bin/kubelet":                           k8s + "kubernetes-node-linux-amd64.tar.gz#kubernetes/node/bin/kubelet",
				"/usr/bin/kube-proxy":                        k8s + "kubernetes-node-linux-amd64.tar.gz#kubernetes/node/bin/kube-proxy",
				"/etc/default/kubelet":                       "",
				"/lib/systemd/system/kube-apiserver.service": "",
				"/var/lib/kubelet/":                          "",
			},
		},
		{
			recipe:  "helm",
			keyring: "keys/helm.asc",
			artifacts: []artifact{{url: helm, members: []entry{{name: "linux-amd64/"}, {name: "linux-amd64/helm"}, {name: "linux-amd64/LICENSE"}, {name: "linux-amd64/README.md"}},
				sums: helm + ".sha256sum", sumsFmt: "sha256sum", sig: gh + "helm/helm/releases/download/v3.21.4/helm-v3.21.4-linux-amd64.tar.gz.asc"}},
			installed: map[string]string{"/usr/bin/helm3": helm + "#linux-amd64/helm", "/usr/share/doc/helm3/LICENSE": helm + "#linux-amd64/LICENSE"},
		},
		{
			recipe:    "runc",
			keyring:   "keys/runc.asc",
			artifacts: []artifact{{url: runc + "runc.amd64", sums: runc + "runc.sha256sum", sumsFmt: "clearsigned", sig: runc + "runc.amd64.asc"}},
			installed: map[string]string{"/usr/sbin/runc": runc + "runc.amd64"},
		},
		{
			recipe:    "cni-plugins",
			artifacts: []artifact{{url: cni, members: cniMembers, sums: cni + ".sha256", sumsFmt: "sha256sum"}},
			installed: cniInstalled,
		},
		{
			recipe: "etcd",
			artifacts: []artifact{{url: etcd, members: []entry{{name: etcdDir}, {name: etcdDir + "etcd"}, {name: etcdDir + "etcdctl"}, {name: etcdDir + "etcdutl"},
				{name: etcdDir + "README.md"}, {name: etcdDir + "Documentation/"}, {name: etcdDir + "Documentation/README.md"}},
				sums: gh + "etcd-io/etcd/releases/download/v3.6.14/SHA256SUMS", sumsFmt: "sha256sum"}},
			installed: map[string]string{"/usr/bin/etcd": etcd + "#" + etcdDir + "etcd", "/usr/bin/etcdctl": etcd + "#" + etcdDir + "etcdctl",
				"/usr/bin/etcdutl": etcd + "#" + etcdDir + "etcdutl", "/etc/default/etcd": "", "/var/lib/etcd/": ""},
		},
	}
}

// content is the stand-in bytes of one member (or raw artifact): a tiny shell
// script naming where it came from, so the installed file shows which member
// the recipe picked.
func content(id string) []byte { return []byte("#!/bin/sh\n# stand-in for " + id + "\nexit 0\n") }

// local maps an upstream URL to its path in the mirror folder.
func local(mirror, url string) string {
	return filepath.Join(mirror, filepath.FromSlash(strings.TrimPrefix(url, "https://")))
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTarGz writes a stand-in tarball with the members in order.
func writeTarGz(t *testing.T, p, url string, members []entry) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	mtime := time.Date(2026, 4, 22, 0, 0, 0, 0, time.UTC)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Mode: 0o755, ModTime: mtime, Typeflag: tar.TypeDir}
		var body []byte
		switch {
		case m.target != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, m.target
		case !strings.HasSuffix(m.name, "/"):
			body = content(url + "#" + m.name)
			h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, zw, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func fileDigests(t *testing.T, p string) digest.Set {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s256, s512 := sha256.Sum256(data), sha512.Sum512(data)
	return digest.Set{digest.SHA256: hex.EncodeToString(s256[:]), digest.SHA512: hex.EncodeToString(s512[:])}
}

// TestRealRecipesFromStandInMirror builds kubernetes-1.36, helm, runc,
// cni-plugins and etcd for amd64 from stand-in artifacts at their real URL
// paths (through mirrors), with the real recipes' pins replaced by the
// stand-ins' digests and the upstream keyrings by a test key, and checks the
// packages with lintian and by unpacking them with dpkg.
func TestRealRecipesFromStandInMirror(t *testing.T) {
	testenv.RequireTool(t, "lintian", "dpkg")
	signer := pgptest.NewSigner(t)
	const uid = "Stand-in Upstream <standin@example.org>"
	root := t.TempDir()
	mirror := filepath.Join(root, "mirror")
	pub := filepath.Join(root, "standin.asc")
	signer.NewKey(uid, pub)
	testenv.Run(t, "cp", "-a", recipesDir, filepath.Join(root, "recipes"))
	if err := os.MkdirAll(filepath.Join(root, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}

	var jobs []build.Job
	sets := standins()
	for _, s := range sets {
		file := filepath.Join(root, "recipes", s.recipe+".yaml")
		orig, err := recipe.Load(filepath.Join(recipesDir, s.recipe+".yaml"), recipe.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := orig.Plan("amd64", recipe.PlanOptions{DefaultMaintainer: "t <t@example.org>"})
		if err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		yaml := string(text)
		byURL := map[string]recipe.PlannedSource{}
		for _, ps := range plan.Sources {
			byURL[ps.URL] = ps
		}
		sums := map[string][]string{}
		for _, a := range s.artifacts {
			ps, ok := byURL[a.url]
			if !ok {
				t.Errorf("%s: no source has the upstream URL %s", s.recipe, a.url)
				continue
			}
			p := local(mirror, a.url)
			if a.members == nil {
				writeFile(t, p, content(a.url))
			} else {
				writeTarGz(t, p, a.url, a.members)
			}
			got := fileDigests(t, p)
			// Keep the recipe as it is but for its amd64 pins.
			for alg, real := range ps.Pinned {
				if strings.Count(yaml, real) != 1 {
					t.Fatalf("%s: pin %s appears %d times", s.recipe, real, strings.Count(yaml, real))
				}
				yaml = strings.Replace(yaml, real, got[alg], 1)
			}
			if a.sums != "" {
				if ps.Checksums == nil || ps.Checksums.URL != a.sums {
					t.Errorf("%s: source %s: checksum file %+v, upstream publishes %s", s.recipe, ps.Name, ps.Checksums, a.sums)
				}
				sums[a.sums] = append(sums[a.sums], got[digest.SHA256]+"  "+path.Base(a.url))
			}
			if a.sig != "" {
				if ps.Signature == nil || ps.Signature.URL != a.sig {
					t.Errorf("%s: source %s: signature %+v, upstream publishes %s", s.recipe, ps.Name, ps.Signature, a.sig)
				}
				if err := os.MkdirAll(filepath.Dir(local(mirror, a.sig)), 0o755); err != nil {
					t.Fatal(err)
				}
				signer.Sign(uid, p, local(mirror, a.sig))
			}
		}
		for _, a := range s.artifacts {
			lines, ok := sums[a.sums]
			if !ok {
				continue
			}
			delete(sums, a.sums)
			body := []byte(strings.Join(lines, "\n") + "\n")
			if a.sumsFmt == "clearsigned" {
				plain := filepath.Join(root, "plain-sums")
				writeFile(t, plain, body)
				signer.Clearsign(uid, plain, local(mirror, a.sums))
				continue
			}
			writeFile(t, local(mirror, a.sums), body)
		}
		if s.keyring != "" {
			testenv.Run(t, "cp", pub, filepath.Join(root, s.keyring))
		}
		writeFile(t, file, []byte(yaml))
		r, err := recipe.Load(file, recipe.LoadOptions{})
		if err != nil {
			t.Fatalf("rewritten %s: %v", s.recipe, err)
		}
		jobs = append(jobs, build.Job{Recipe: r, Arch: "amd64"})
	}
	if t.Failed() {
		t.FailNow()
	}

	f, err := fetch.New(filepath.Join(root, "cache"), fetch.Options{Retries: -1, Mirrors: []fetch.Mirror{
		{Prefix: "https://dl.k8s.io/", To: "file://" + mirror + "/dl.k8s.io/"},
		{Prefix: "https://get.helm.sh/", To: "file://" + mirror + "/get.helm.sh/"},
		{Prefix: gh, To: "file://" + mirror + "/github.com/"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	res, err := build.Run(context.Background(), jobs, build.Options{
		Fetcher: f, OutDir: out, Now: time.Now, UpdebVersion: "test", Logger: slog.New(slog.DiscardHandler),
		PlanOptions: recipe.PlanOptions{DefaultMaintainer: "updeb tests <tests@example.org>"}, Parallel: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	var debs []string
	for _, r := range res {
		for _, o := range r.Outputs {
			debs = append(debs, filepath.Join(out, o.File))
		}
	}
	if len(debs) != 9 { // 4 kubernetes (master, node, client, client136), helm3, runc, cni-plugins, etcd-server, etcd-client
		t.Errorf("built %d packages, want 9: %v", len(debs), debs)
	}

	lint := exec.Command("lintian", append([]string{"--fail-on", "error", "--no-tag-display-limit"}, debs...)...)
	if b, err := lint.CombinedOutput(); err != nil {
		t.Errorf("lintian --fail-on error: %v\n%s", err, b)
	}

	// Unpack into a throwaway root. --unpack, not -i: the postinst would run
	// adduser and update-alternatives on this machine (chrootless).
	dpkgRoot := filepath.Join(root, "dpkg-root")
	admin := filepath.Join(dpkgRoot, "var/lib/dpkg")
	for _, d := range []string{"updates", "info", "triggers"} {
		if err := os.MkdirAll(filepath.Join(admin, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(admin, "status"), nil)
	testenv.Run(t, "dpkg", append([]string{"--root=" + dpkgRoot, "--admindir=" + admin, "--force-script-chrootless", "--force-not-root",
		"--force-depends", "--log=/dev/null", "--unpack"}, debs...)...)
	for _, s := range sets {
		for dest, want := range s.installed {
			p := filepath.Join(dpkgRoot, dest)
			switch {
			case strings.HasPrefix(want, "-> "):
				got, err := os.Readlink(p)
				if err != nil || got != strings.TrimPrefix(want, "-> ") {
					t.Errorf("%s: %s is a link to %q (%v), want %s", s.recipe, dest, got, err, want)
				}
			case want == "" && strings.HasPrefix(dest, "/etc/"):
				// An unpacked, not yet configured conffile waits as .dpkg-new.
				if _, err := os.Stat(p + ".dpkg-new"); err != nil {
					t.Errorf("%s: conffile %s not unpacked: %v", s.recipe, dest, err)
				}
			case want == "":
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s: %s not installed: %v", s.recipe, dest, err)
				}
			default:
				got, err := os.ReadFile(p)
				if err != nil || string(got) != string(content(want)) {
					t.Errorf("%s: %s holds %q (%v), want the stand-in of %s", s.recipe, dest, got, err, want)
				}
			}
		}
	}
}
