package realrecipes

import (
	"archive/tar"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/gate"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/sigstore"
	"github.com/updeb/updeb/pkg/verify/sigstore/sigstoretest"
)

// The stand-ins below are written from ARTIFACTS.md (the upstream release
// layouts), not from the recipes: a wrong URL template, archive path or
// checksum-file name in a recipe makes its build fail here.

// entry is one member of a stand-in archive; a name ending in / is a folder.
type entry struct {
	name   string
	target string // symlink target, for a symlink member
	mode   int64  // the member's mode (0: 0755)
}

// artifact is one stand-in upstream file at its real URL (amd64).
type artifact struct {
	url     string
	members []entry // nil: a raw binary
	sums    string  // URL of the checksum file that lists it ("" none)
	sumsFmt string  // "sha256sum" (hex  name), "onespace" (hex name), "bare" (hex only, of the algorithm the file name ends in), "clearsigned"
	sig     string  // URL of its detached signature ("" none)
	cosign  bool    // signed with cosign keyless: url.sig and url.cert, logged in Rekor
}

type standin struct {
	recipe  string
	keyring string // the recipe's keyring, replaced by the test key ("" none)
	// signature replaces the recipe's signature: block ("" keeps it): for
	// a form the stand-in mirror does not fake (GitHub attestations).
	signature string
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

func k8sNode() []entry {
	return []entry{{name: "kubernetes/"}, {name: "kubernetes/node/bin/kubelet"}, {name: "kubernetes/node/bin/kube-proxy"},
		{name: "kubernetes/node/bin/kubeadm"}, {name: "kubernetes/node/bin/kubectl"}, {name: "kubernetes/LICENSES/LICENSE"}}
}

var cniPlugins = []string{"bandwidth", "bridge", "dhcp", "dummy", "firewall", "host-device", "host-local", "ipvlan", "loopback", "macvlan", "portmap", "ptp", "sbr", "static", "tap", "tuning", "vlan", "vrf"}

// The signer of Kubernetes release artifacts (kubernetes/website, "Verify
// Signed Kubernetes Artifacts"); the stand-ins are signed as it by a test CA.
const (
	k8sIdentity = "krel-staging@k8s-releng-prod.iam.gserviceaccount.com"
	k8sIssuer   = "https://accounts.google.com"
)

func standins() []standin {
	const k8s = "https://dl.k8s.io/v1.36.0/"
	const k8s135 = "https://dl.k8s.io/v1.35.4/"
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
	containerd := gh + "containerd/containerd/releases/download/v2.3.4/containerd-2.3.4-linux-amd64.tar.gz"
	crictl := gh + "kubernetes-sigs/cri-tools/releases/download/v1.36.0/crictl-v1.36.0-linux-amd64.tar.gz"
	calico := gh + "projectcalico/calico/releases/download/v3.31.7/"
	cilium := gh + "cilium/cilium-cli/releases/download/v0.19.7/cilium-linux-amd64.tar.gz"
	helmfile := gh + "helmfile/helmfile/releases/download/v0.169.2/"
	cfssl := gh + "cloudflare/cfssl/releases/download/v1.6.5/"
	istioctl := gh + "istio/istio/releases/download/1.30.3/istioctl-1.30.3-linux-amd64.tar.gz"
	kustomize := gh + "kubernetes-sigs/kustomize/releases/download/kustomize%2Fv5.8.1/"
	return []standin{
		{
			recipe: "kubernetes-1.36",
			artifacts: []artifact{
				{url: k8s + "kubernetes-server-linux-amd64.tar.gz", members: k8sServer("1.36.0"), cosign: true,
					sums: k8s + "kubernetes-server-linux-amd64.tar.gz.sha512", sumsFmt: "bare"},
				{url: k8s + "kubernetes-node-linux-amd64.tar.gz", members: k8sNode(), cosign: true,
					sums: k8s + "kubernetes-node-linux-amd64.tar.gz.sha512", sumsFmt: "bare"},
			},
			installed: map[string]string{
				"/usr/bin/kube-apiserver":                      k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kube-apiserver",
				"/usr/bin/kube-controller-manager":             k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kube-controller-manager",
				"/usr/bin/kube-scheduler":                      k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kube-scheduler",
				"/usr/bin/kubectl":                             k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kubectl",
				"/usr/bin/kubectl-1.36":                        k8s + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kubectl",
				"/usr/bin/kubelet":                             k8s + "kubernetes-node-linux-amd64.tar.gz#kubernetes/node/bin/kubelet",
				"/usr/bin/kube-proxy":                          k8s + "kubernetes-node-linux-amd64.tar.gz#kubernetes/node/bin/kube-proxy",
				"/etc/default/kubelet":                         "",
				"/usr/lib/sysctl.d/60-kubernetes-node.conf":    "",
				"/usr/lib/modules-load.d/kubernetes-node.conf": "",
				"/lib/systemd/system/kube-apiserver.service":   "",
				"/var/lib/kubelet/":                            "",
			},
		},
		{
			recipe: "kubernetes-1.35",
			artifacts: []artifact{
				{url: k8s135 + "kubernetes-server-linux-amd64.tar.gz", members: k8sServer("1.35.4"), cosign: true,
					sums: k8s135 + "kubernetes-server-linux-amd64.tar.gz.sha512", sumsFmt: "bare"},
				{url: k8s135 + "kubernetes-node-linux-amd64.tar.gz", members: k8sNode(), cosign: true,
					sums: k8s135 + "kubernetes-node-linux-amd64.tar.gz.sha512", sumsFmt: "bare"},
			},
			installed: map[string]string{
				"/usr/bin/kubectl-1.35": k8s135 + "kubernetes-server-linux-amd64.tar.gz#kubernetes/server/bin/kubectl",
				"/usr/bin/kubelet":      k8s135 + "kubernetes-node-linux-amd64.tar.gz#kubernetes/node/bin/kubelet",
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
			recipe:    "containerd",
			signature: `{none: "stand-in: GitHub attestations are not faked here; trust = the pin, cross-checked against the .sha256sum"}`,
			artifacts: []artifact{{url: containerd, members: []entry{{name: "bin/"}, {name: "bin/containerd"}, {name: "bin/containerd-shim-runc-v2"},
				{name: "bin/containerd-stress"}, {name: "bin/ctr"}}, sums: containerd + ".sha256sum", sumsFmt: "sha256sum"}},
			installed: map[string]string{"/usr/bin/containerd": containerd + "#bin/containerd", "/usr/bin/ctr": containerd + "#bin/ctr",
				"/lib/systemd/system/containerd.service": "", "/etc/default/containerd": ""},
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
		{
			recipe:    "cri-tools-1.36",
			artifacts: []artifact{{url: crictl, members: []entry{{name: "crictl"}}, sums: crictl + ".sha256", sumsFmt: "bare"}},
			installed: map[string]string{"/usr/bin/crictl": crictl + "#crictl"},
		},
		{
			recipe:    "calicoctl",
			artifacts: []artifact{{url: calico + "calicoctl-linux-amd64", sums: calico + "SHA256SUMS", sumsFmt: "sha256sum"}},
			installed: map[string]string{"/usr/bin/calicoctl": calico + "calicoctl-linux-amd64"},
		},
		{
			recipe:    "cilium-cli",
			artifacts: []artifact{{url: cilium, members: []entry{{name: "cilium"}}, sums: cilium + ".sha256sum", sumsFmt: "sha256sum"}},
			installed: map[string]string{"/usr/bin/cilium": cilium + "#cilium"},
		},
		{
			recipe: "helmfile",
			artifacts: []artifact{{url: helmfile + "helmfile_0.169.2_linux_amd64.tar.gz",
				members: []entry{{name: "LICENSE", mode: 0o644}, {name: "README.md", mode: 0o644}, {name: "helmfile", mode: 0o644}},
				sums:    helmfile + "helmfile_0.169.2_checksums.txt", sumsFmt: "sha256sum"}},
			installed: map[string]string{"/usr/bin/helmfile": helmfile + "helmfile_0.169.2_linux_amd64.tar.gz#helmfile"},
		},
		{
			recipe:    "cfssl",
			artifacts: []artifact{{url: cfssl + "cfssl_1.6.5_linux_amd64", sums: cfssl + "cfssl_1.6.5_checksums.txt", sumsFmt: "sha256sum"}},
			installed: map[string]string{"/usr/bin/cfssl": cfssl + "cfssl_1.6.5_linux_amd64"},
		},
		{
			recipe:    "istioctl",
			artifacts: []artifact{{url: istioctl, members: []entry{{name: "istioctl"}}, sums: istioctl + ".sha256", sumsFmt: "onespace"}},
			installed: map[string]string{"/usr/bin/istioctl-1.30.3": istioctl + "#istioctl"},
		},
		{
			recipe: "kustomize",
			artifacts: []artifact{{url: kustomize + "kustomize_v5.8.1_linux_amd64.tar.gz", members: []entry{{name: "kustomize"}},
				sums: kustomize + "checksums.txt", sumsFmt: "sha256sum"}},
			installed: map[string]string{"/usr/bin/kustomize": kustomize + "kustomize_v5.8.1_linux_amd64.tar.gz#kustomize"},
		},
	}
}

// content is the stand-in bytes of one member (or raw artifact): a tiny shell
// script naming where it came from, so the installed file shows which member
// the recipe picked.
func content(id string) []byte { return []byte("#!/bin/sh\n# stand-in for " + id + "\nexit 0\n") }

// local maps an upstream URL to its path in the mirror folder, as the
// fetcher's file mirrors map it (an escaped / in kustomize's tag is a folder).
func local(mirror, url string) string {
	host, _, _ := strings.Cut(strings.TrimPrefix(url, "https://"), "/")
	name, err := fetch.MirrorFile(fetch.Mirror{Prefix: "https://" + host + "/", To: "file://" + mirror + "/" + host + "/"}, url)
	if err != nil {
		panic(err) // the stand-ins' own URLs
	}
	return filepath.Join(mirror, host, filepath.FromSlash(name))
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
		h := &tar.Header{Name: m.name, Mode: cmp.Or(m.mode, 0o755), ModTime: mtime, Typeflag: tar.TypeDir}
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

// mirrorSigners sign what upstream signs: OpenPGP with a test key (which
// replaces the recipe's keyring), cosign keyless with sigstore-go's test CA
// as the real signer (its Rekor entries published on rekor).
type mirrorSigners struct {
	pgp   *pgptest.Signer
	uid   string
	pub   string // the test key's public keyring
	vs    *sigstoretest.Sigstore
	rekor *sigstoretest.Rekor
}

func newMirrorSigners(t *testing.T, root string) *mirrorSigners {
	m := &mirrorSigners{pgp: pgptest.NewSigner(t), uid: "Stand-in Upstream <standin@example.org>", pub: filepath.Join(root, "standin.asc"), rekor: sigstoretest.NewRekor()}
	m.pgp.NewKey(m.uid, m.pub)
	var err error
	if m.vs, err = sigstoretest.New(); err != nil {
		t.Fatal(err)
	}
	return m
}

// standinMirror writes the stand-ins of sets under root/mirror, at their real
// URL paths, signed as upstream signs them, and copies the real recipes to
// root/recipes with their amd64 pins replaced by the stand-ins' digests (and
// keyrings by the test key). It returns the rewritten recipes.
func standinMirror(t *testing.T, root string, sets []standin, sg *mirrorSigners) []*recipe.Recipe {
	mirror := filepath.Join(root, "mirror")
	testenv.Run(t, "cp", "-a", recipesDir, filepath.Join(root, "recipes"))
	if err := os.MkdirAll(filepath.Join(root, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out []*recipe.Recipe
	for _, s := range sets {
		file := filepath.Join(root, "recipes", s.recipe+".yaml")
		orig, err := recipe.Load(filepath.Join(recipesDir, s.recipe+".yaml"), recipe.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := orig.Resolve("amd64", recipe.ResolveOptions{DefaultMaintainer: "t <t@example.org>"})
		if err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		yaml := string(text)
		if s.signature != "" {
			block := regexp.MustCompile(`(?m)^    signature:\n(?:      .*\n)+`)
			if len(block.FindAllString(yaml, -1)) != 1 {
				t.Fatalf("%s: not one signature: block to replace", s.recipe)
			}
			yaml = block.ReplaceAllLiteralString(yaml, "    signature: "+s.signature+"\n")
		}
		byURL := map[string]recipe.ResolvedSource{}
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
				line := got[digest.SHA256] + "  " + path.Base(a.url)
				switch a.sumsFmt {
				case "bare":
					line = got[digest.Algorithm(strings.TrimPrefix(path.Ext(a.sums), "."))]
				case "onespace":
					line = got[digest.SHA256] + " " + path.Base(a.url)
				}
				sums[a.sums] = append(sums[a.sums], line)
			}
			if a.sig != "" {
				if ps.Signature == nil || ps.Signature.URL != a.sig {
					t.Errorf("%s: source %s: signature %+v, upstream publishes %s", s.recipe, ps.Name, ps.Signature, a.sig)
				}
				if err := os.MkdirAll(filepath.Dir(local(mirror, a.sig)), 0o755); err != nil {
					t.Fatal(err)
				}
				sg.pgp.Sign(sg.uid, p, local(mirror, a.sig))
			}
			if a.cosign {
				want := recipe.ResolvedSigstore{SigURL: a.url + ".sig", CertURL: a.url + ".cert", Identity: k8sIdentity, Issuer: k8sIssuer}
				if ps.Sigstore == nil || !reflect.DeepEqual(*ps.Sigstore, want) {
					t.Errorf("%s: source %s: Sigstore %+v, upstream publishes %+v", s.recipe, ps.Name, ps.Sigstore, want)
				}
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				sig, err := sg.vs.Sign(k8sIdentity, k8sIssuer, data)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, local(mirror, a.url+".sig"), sig.Sig)
				writeFile(t, local(mirror, a.url+".cert"), sig.Cert)
				answer, err := sg.vs.Answer(sig.Entry)
				if err != nil {
					t.Fatal(err)
				}
				sg.rekor.Publish(sig.Entry.UUID(), answer)
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
				sg.pgp.Clearsign(sg.uid, plain, local(mirror, a.sums))
				continue
			}
			writeFile(t, local(mirror, a.sums), body)
		}
		if s.keyring != "" {
			testenv.Run(t, "cp", sg.pub, filepath.Join(root, s.keyring))
		}
		writeFile(t, file, []byte(yaml))
		r, err := recipe.Load(file, recipe.LoadOptions{})
		if err != nil {
			t.Fatalf("rewritten %s: %v", s.recipe, err)
		}
		out = append(out, r)
	}
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// standinFetcher fetches from the stand-in mirror, and asks the fake Rekor
// (for https://rekor.sigstore.dev/, as a mirrors: entry would) through squid.
func standinFetcher(t *testing.T, root, cache, rekor string) *fetch.Fetcher {
	mirror := filepath.Join(root, "mirror")
	o := fetch.Options{Retries: -1, Mirrors: []fetch.Mirror{
		{Prefix: "https://dl.k8s.io/", To: "file://" + mirror + "/dl.k8s.io/"},
		{Prefix: "https://get.helm.sh/", To: "file://" + mirror + "/get.helm.sh/"},
		{Prefix: gh, To: "file://" + mirror + "/github.com/"},
		{Prefix: "https://rekor.sigstore.dev/", To: rekor + "/"},
	}}
	if sq != nil {
		u, err := url.Parse(sq.URL)
		if err != nil {
			t.Fatal(err)
		}
		o.Proxy = u
	}
	f, err := fetch.New(cache, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// sigstoreVerifier trusts the test CA's root, read as the config names it
// (sigstore: trusted-root:), and asks Rekor through the fetcher.
func sigstoreVerifier(t *testing.T, root string, sg *mirrorSigners, f *fetch.Fetcher) *sigstore.Verifier {
	writeFile(t, filepath.Join(root, "sigstore", "trusted_root.json"), sg.vs.TrustedRoot())
	cfgFile := filepath.Join(root, "updeb.yaml")
	writeFile(t, cfgFile, []byte("sigstore:\n  trusted-root: sigstore/trusted_root.json\n"))
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sigstore.LoadTrustedRoot(cfg.Sigstore.TrustedRoot)
	if err != nil {
		t.Fatal(err)
	}
	v, err := sigstore.New(tr, sigstore.Options{HTTPClient: &http.Client{Transport: f.Transport()}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// without returns sets but those of the named recipes.
func without(sets []standin, names ...string) []standin {
	var out []standin
	for _, s := range sets {
		if !slices.Contains(names, s.recipe) {
			out = append(out, s)
		}
	}
	return out
}

// buildStandins builds the real recipes of sets for amd64 from their
// stand-ins (standinMirror) under root and returns the .deb files.
func buildStandins(t *testing.T, root string, sets []standin) []string {
	t.Helper()
	sg := newMirrorSigners(t, root)
	var jobs []pipeline.Job
	for _, r := range standinMirror(t, root, sets, sg) {
		jobs = append(jobs, pipeline.Job{Recipe: r, Arch: "amd64"})
	}
	rekor := httptest.NewServer(sg.rekor)
	t.Cleanup(rekor.Close)
	f := standinFetcher(t, root, t.TempDir(), rekor.URL)

	out := filepath.Join(root, "out")
	res, err := pipeline.Run(context.Background(), jobs, pipeline.Options{
		Source: source.Options{Fetcher: f, Sigstore: sigstoreVerifier(t, root, sg, f), Now: time.Now, Logger: slog.New(slog.DiscardHandler)},
		OutDir: out, UpdebVersion: "test",
		ResolveOptions: recipe.ResolveOptions{DefaultMaintainer: "updeb tests <tests@example.org>"}, Parallel: 2,
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
	return debs
}

// TestRealRecipesFromStandInMirror builds every real recipe but
// kubernetes-1.35 (the same packages as kubernetes-1.36) for amd64 from
// stand-in artifacts at their real URL
// paths (through mirrors), with the real recipes' pins replaced by the
// stand-ins' digests, the upstream keyrings by a test key, and Kubernetes'
// cosign signer by sigstore-go's test CA, and checks the packages with
// lintian and by unpacking them with dpkg.
func TestRealRecipesFromStandInMirror(t *testing.T) {
	testenv.RequireTool(t, "lintian", "dpkg")
	root := t.TempDir()
	sets := without(standins(), "kubernetes-1.35") // the same packages as 1.36: not unpacked together
	debs := buildStandins(t, root, sets)
	// 4 kubernetes (master, node, client, client136), helm3, runc, containerd, cni-plugins, etcd-server, etcd-client,
	// cri-tools, calicoctl, cilium-cli, helmfile, cfssl, istioctl-1.30.3, kustomize
	if len(debs) != 17 {
		t.Errorf("built %d packages, want 17: %v", len(debs), debs)
	}

	testenv.Lintian(t, map[string]string{
		"package-contains-no-arch-dependent-files": "the stand-ins for upstream binaries are shell scripts",
	}, debs...)

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
				// A command is executable whatever mode the archive stored (helmfile's 0644).
				if fi, err := os.Stat(p); err == nil && strings.Contains(dest, "bin/") && fi.Mode().Perm() != 0o755 {
					t.Errorf("%s: %s: mode %v, want 0755", s.recipe, dest, fi.Mode())
				}
			}
		}
	}
}

// sq is the squid every fake service of these tests is asked through (nil
// without squid: RequireTool fails the tests that need it under CI).
var sq *squid.Squid

func TestMain(m *testing.M) {
	if s, err := squid.Start(); err == nil {
		sq = s
	}
	code := m.Run()
	if sq != nil {
		sq.Stop()
	}
	os.Exit(code)
}

// TestRealKubernetesRecipesVerify runs updeb verify's gate on the real
// kubernetes-1.35 and -1.36 recipes over the stand-in mirror: the signature
// check passes (not skipped) with the real identity and issuer and the log
// index of the fake Rekor, asked through squid; a stand-in signed by anyone
// else fails it, naming the certificate's URL and both identities.
func TestRealKubernetesRecipesVerify(t *testing.T) {
	testenv.RequireTool(t, "squid")
	if sq == nil {
		t.Fatal("squid did not start")
	}
	root := t.TempDir()
	sg := newMirrorSigners(t, root)
	var sets []standin
	for _, s := range standins() {
		if strings.HasPrefix(s.recipe, "kubernetes-") {
			sets = append(sets, s)
		}
	}
	recipes := standinMirror(t, root, sets, sg)
	rekor := httptest.NewServer(sg.rekor)
	t.Cleanup(rekor.Close)
	f := standinFetcher(t, root, t.TempDir(), rekor.URL)
	opts := gate.Options{
		Build: pipeline.Options{Source: source.Options{Fetcher: f, Sigstore: sigstoreVerifier(t, root, sg, f), Now: time.Now, Logger: slog.New(slog.DiscardHandler)},
			UpdebVersion: "test", ResolveOptions: recipe.ResolveOptions{DefaultMaintainer: "updeb tests <tests@example.org>"}, Parallel: 2},
		Arches: []string{"amd64"}, TempDir: t.TempDir(),
	}
	rep, err := gate.Run(context.Background(), recipes, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 {
		t.Fatalf("verify failed: %+v", rep)
	}
	for _, r := range rep.Recipes {
		var sig []gate.Result
		for _, x := range r.Results {
			if x.Check == "signature" {
				sig = append(sig, x)
			}
			// dl.k8s.io publishes FILE.sha512 beside each tarball: the
			// pins are cross-checked against it, not skipped.
			if x.Check == "cross-check" && (x.Status != gate.Pass || !strings.HasSuffix(x.Detail, ": server; node")) {
				t.Errorf("%s: cross-check %+v, want a PASS against the server and node tarballs' .sha512", r.Recipe, x)
			}
		}
		if len(sig) != 1 || sig[0].Status != gate.Pass {
			t.Errorf("%s: signature checks %+v, want one PASS", r.Recipe, sig)
			continue
		}
		for _, src := range []string{"server", "node"} {
			want := src + " (amd64: " + k8sIdentity + " issuer=" + k8sIssuer + " rekor="
			if !strings.Contains(sig[0].Detail, want) {
				t.Errorf("%s: %q does not name %q", r.Recipe, sig[0].Detail, want)
			}
		}
		t.Logf("%s: PASS %s", r.Recipe, sig[0].Detail)
	}
	if log := sq.Log(); !strings.Contains(log, rekor.URL+"/api/v1/log/entries/") {
		t.Errorf("Rekor was not asked through squid:\n%s", log)
	}

	// The 1.36 server tarball signed by someone else (logged, with a valid
	// certificate from the same CA): refused, nothing built.
	p := local(filepath.Join(root, "mirror"), "https://dl.k8s.io/v1.36.0/kubernetes-server-linux-amd64.tar.gz")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	other, err := sg.vs.Sign("attacker@example.com", k8sIssuer, data)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p+".sig", other.Sig)
	writeFile(t, p+".cert", other.Cert)
	answer, _ := sg.vs.Answer(other.Entry)
	sg.rekor.Publish(other.Entry.UUID(), answer)
	opts.TempDir = t.TempDir()
	opts.Build.Source.Fetcher = standinFetcher(t, root, t.TempDir(), rekor.URL) // a cold cache: the cached .sig and .cert would be used again
	rep, err = gate.Run(context.Background(), recipes[:1], opts)
	if err != nil {
		t.Fatal(err)
	}
	var failed []gate.Result
	for _, x := range rep.Recipes[0].Results {
		if x.Status == gate.Fail {
			failed = append(failed, x)
		}
	}
	if rep.Recipes[0].Recipe != "kubernetes-1.36" || len(failed) != 1 || failed[0].Check != "signature" ||
		!strings.Contains(failed[0].Detail, `certificate identity "attacker@example.com", want "`+k8sIdentity+`"`) ||
		!strings.Contains(failed[0].Detail, "https://dl.k8s.io/v1.36.0/kubernetes-server-linux-amd64.tar.gz.cert") {
		t.Errorf("another signer: %+v", rep.Recipes[0].Results)
	}
}

// overlaps are packages of Debian 12 and of the apt repositories operators
// install Kubernetes tools from that install a path a real recipe's package
// installs too (read from their .debs: containernetworking-plugins
// 1.1.1+ds1-3+b5 installs /usr/lib/cni/bandwidth ... vrf, golang-cfssl
// 1.2.0+git20160825.89.7fb22c8-3.1+b11 /usr/bin/cfssl; as
// packages.cloud.google.com and pkgs.k8s.io name them, kubectl
// /usr/bin/kubectl, kubelet /usr/bin/kubelet and kubernetes-cni the plugins
// in /opt/cni/bin).
// Where one is installed, dpkg refuses the recipe's package ("trying to
// overwrite '/usr/lib/cni/bridge', which is also in package
// containernetworking-plugins"), and apt stops half-way, unless the package
// conflicts with and replaces it (Debian policy 7.6.2).
var overlaps = []struct{ recipe, pkg, other, path string }{
	{"cni-plugins", "cni-plugins", "containernetworking-plugins", "/usr/lib/cni/bridge"},
	{"cni-plugins", "cni-plugins", "kubernetes-cni", "/opt/cni/bin/bridge"},
	{"cfssl", "cfssl", "golang-cfssl", "/usr/bin/cfssl"},
	{"kubernetes-1.36", "kubernetes-client", "kubectl", "/usr/bin/kubectl"},
	{"kubernetes-1.35", "kubernetes-client", "kubectl", "/usr/bin/kubectl"},
	{"kubernetes-1.36", "kubernetes-node", "kubelet", "/usr/bin/kubelet"},
	{"kubernetes-1.35", "kubernetes-node", "kubelet", "/usr/bin/kubelet"},
}

// TestRealRecipesTakeOverOtherPackages installs each other package of
// overlaps (a stand-in with the shared path) into a throwaway root, then
// the real recipe's package over it with dpkg -i: it takes the
// other package's place (dpkg removes it) instead of being refused.
func TestRealRecipesTakeOverOtherPackages(t *testing.T) {
	testenv.RequireTool(t, "dpkg", "dpkg-deb", "dpkg-query")
	for _, o := range overlaps {
		t.Run(o.recipe+"/"+o.other, func(t *testing.T) {
			root := t.TempDir()
			sets := slices.DeleteFunc(standins(), func(s standin) bool { return s.recipe != o.recipe })
			debs := buildStandins(t, root, sets)
			i := slices.IndexFunc(debs, func(d string) bool { return strings.HasPrefix(filepath.Base(d), o.pkg+"_") })
			if i < 0 {
				t.Fatalf("no package %s built: %v", o.pkg, debs)
			}
			tree := filepath.Join(root, o.other)
			writeFile(t, filepath.Join(tree, "DEBIAN", "control"), []byte("Package: "+o.other+"\nVersion: 1.0-1\nArchitecture: amd64\n"+
				"Maintainer: Other <other@example.org>\nDescription: stand-in for "+o.other+"\n It installs "+o.path+".\n"))
			writeFile(t, filepath.Join(tree, filepath.FromSlash(o.path)), []byte("the other package's\n"))
			got := testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null "$@"; }
dpkg-deb --root-owner-group -b "$TREE" "$TREE.deb" >/dev/null
dpkg -i "$TREE.deb" >/dev/null
dpkg -i "$DEB" 2>&1 | grep -o "trying to overwrite.*" || true
for p in "$PKG" "$OTHER"; do dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f '${Package} ${db:Status-Abbrev}\n' "$p"; done
`, "ROOT="+testenv.DpkgRoot(t), "TREE="+tree, "DEB="+debs[i], "PKG="+o.pkg, "OTHER="+o.other, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
			if want := o.pkg + " ii \n" + o.other + " un \n"; string(got) != want {
				t.Errorf("%s installed over %s:\n%s\nwant:\n%s", filepath.Base(debs[i]), o.other, got, want)
			}
		})
	}
}
