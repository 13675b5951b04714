// Command mkmirror regenerates the demo's fixture mirror (testdata/demo/mirror)
// from the Go sources in testdata/demo/src: static binaries for amd64 and arm64,
// deterministic tarballs, checksum files, and OpenPGP signatures by the demo's
// fixture upstream key (testdata/demo/keys, created with gpg on first run).
//
// The mirror is committed, because Go binaries differ between Go releases and the
// demo recipes pin their digests. Run it only to change the demo, then update the
// digests in testdata/demo/recipes:
//
//	go run ./testdata/demo/mkmirror
//
// pingd's binaries also carry Sigstore bundles (pingd.ARCH.sigstore.json), made
// with sigstore-go's test CA as the demo's release workflow, and the test CA's
// trusted root is testdata/demo/sigstore/trusted_root.json, which the demo's
// config selects. The CA's keys are thrown away, so a bundle that still
// verifies for its binary is kept byte for byte; when one does not (a rebuilt
// binary), a new CA signs them all and replaces the root. To make only that
// step, keeping every other file:
//
//	go run ./testdata/demo/mkmirror -sigstore
//
// The stand-in k9s release of the README's walk-through (a goreleaser layout
// under github.com/derailed/k9s) is made on its own too, leaving the demo's
// files as they are:
//
//	go run ./testdata/demo/mkmirror -k9s
//
// This is test tooling: it uses gpg, which the product itself never does.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/sigstore"
	"github.com/updeb/updeb/pkg/verify/sigstore/sigstoretest"
)

const (
	base     = "testdata/demo"
	host     = "releases.example.org"
	helloVer = "1.2.0"
	pingdVer = "0.9.1"
	keyUID   = "updeb demo upstream (fixture key, test only) <demo-upstream@example.org>"
)

var (
	arches = []string{"amd64", "arm64"}
	epoch  = time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
)

func main() {
	log.SetFlags(0)
	sigstoreOnly := flag.Bool("sigstore", false, "only make pingd's Sigstore bundles (where they no longer verify) and the test trusted root")
	k9sOnly := flag.Bool("k9s", false, "only make the README walk-through's stand-in k9s release")
	flag.Parse()
	if *k9sOnly {
		k9s()
		return
	}
	pingdDir := filepath.Join(base, "mirror", host, "pingd", "v"+pingdVer)
	if *sigstoreOnly {
		sigstoreBundles(pingdDir)
		return
	}
	gnupg, err := os.MkdirTemp("", "mkmirror-gnupg")
	check(err)
	defer os.RemoveAll(gnupg)
	importOrCreateKey(gnupg)

	helloDir := filepath.Join(base, "mirror", host, "hello", "v"+helloVer)
	check(os.MkdirAll(helloDir, 0o755))
	check(os.MkdirAll(pingdDir, 0o755))

	var sums bytes.Buffer
	for _, arch := range arches {
		// hello: a tarball with the binary and a LICENSE, signed detached (like Helm).
		bin := goBuild("hello", arch, helloVer)
		name := fmt.Sprintf("hello-v%s-linux-%s.tar.gz", helloVer, arch)
		tgz := tarGz(fmt.Sprintf("linux-%s/", arch), []file{
			{"LICENSE", []byte("Demo fixture for updeb. Licensed under the Apache License, Version 2.0.\n"), 0o644},
			{"hello", bin, 0o755},
		})
		path := filepath.Join(helloDir, name)
		check(os.WriteFile(path, tgz, 0o644))
		check(os.WriteFile(path+".sha256sum", []byte(sha(tgz)+"  "+name+"\n"), 0o644))
		gpg(gnupg, "--yes", "--armor", "--detach-sign", "--output", path+".asc", path)

		// pingd: a raw binary listed in a clearsigned SHA256SUMS (like runc).
		pbin := goBuild("pingd", arch, pingdVer)
		pname := "pingd." + arch
		check(os.WriteFile(filepath.Join(pingdDir, pname), pbin, 0o644))
		fmt.Fprintf(&sums, "%s  %s\n", sha(pbin), pname)
	}
	plain := filepath.Join(pingdDir, "pingd.sha256sum.txt")
	check(os.WriteFile(plain, sums.Bytes(), 0o644))
	gpg(gnupg, "--yes", "--clearsign", "--output", filepath.Join(pingdDir, "pingd.sha256sum"), plain)
	check(os.Remove(plain))
	sigstoreBundles(pingdDir)
	log.Printf("mirror written under %s/mirror; now update the digests in %s/recipes", base, base)
}

// The demo's release workflow, as pingd's recipe names it.
const (
	workflowIdentity = "https://github.com/updeb-demo/pingd/.github/workflows/release.yml@refs/tags/v" + pingdVer
	workflowIssuer   = "https://token.actions.githubusercontent.com"
)

// sigstoreBundles makes pingd.ARCH.sigstore.json beside each pingd binary and
// the test trusted root that verifies them, keeping what still verifies.
func sigstoreBundles(pingdDir string) {
	rootFile := filepath.Join(base, "sigstore", "trusted_root.json")
	bundleFile := func(arch string) string { return filepath.Join(pingdDir, "pingd."+arch+".sigstore.json") }
	binary := func(arch string) []byte {
		b, err := os.ReadFile(filepath.Join(pingdDir, "pingd."+arch))
		check(err)
		return b
	}
	if stillVerify(rootFile, bundleFile, binary) {
		log.Printf("Sigstore bundles and %s kept: they verify", rootFile)
		return
	}
	vs, err := sigstoretest.New()
	check(err)
	for _, arch := range arches {
		b, err := vs.Bundle(workflowIdentity, workflowIssuer, binary(arch))
		check(err)
		check(os.WriteFile(bundleFile(arch), b, 0o644))
	}
	check(os.MkdirAll(filepath.Dir(rootFile), 0o755))
	check(os.WriteFile(rootFile, vs.TrustedRoot(), 0o644))
	log.Printf("new Sigstore bundles, and a new test trusted root in %s", rootFile)
}

// stillVerify reports whether every bundle verifies for its binary with the
// committed root.
func stillVerify(rootFile string, bundleFile func(string) string, binary func(string) []byte) bool {
	tr, err := sigstore.LoadTrustedRoot(rootFile)
	if err != nil {
		return false
	}
	v, err := sigstore.New(tr, sigstore.Options{})
	check(err)
	for _, arch := range arches {
		b, err := os.ReadFile(bundleFile(arch))
		if err != nil {
			return false
		}
		h := digest.NewHasher()
		h.Write(binary(arch))
		pol := sigstore.Policy{Identity: workflowIdentity, Issuer: workflowIssuer}
		if _, err := v.VerifyBundle(context.Background(), pol, h.Sum(), b, bundleFile(arch)); err != nil {
			log.Printf("%v", err)
			return false
		}
	}
	return true
}

func goBuild(tool, arch, version string) []byte {
	out := filepath.Join(os.TempDir(), "mkmirror-"+tool+"-"+arch)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -buildid= -X main.version="+version, "-o", out, "./"+base+"/src/"+tool)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	cmd.Stderr = os.Stderr
	check(cmd.Run())
	b, err := os.ReadFile(out)
	check(err)
	os.Remove(out)
	return b
}

// file is one member of a fixture tarball.
type file struct {
	name string
	data []byte
	mode int64
}

// tarGz writes a deterministic GNU tarball: the folder prefix (none when
// ""), then files in order, with fixed owner and mtime.
func tarGz(prefix string, files []file) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	if prefix != "" {
		check(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: prefix, Mode: 0o755, ModTime: epoch, Format: tar.FormatGNU}))
	}
	for _, f := range files {
		check(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: prefix + f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch, Format: tar.FormatGNU}))
		_, err := tw.Write(f.data)
		check(err)
	}
	check(tw.Close())
	check(zw.Close())
	return buf.Bytes()
}

// k9s writes the walk-through's stand-in k9s release: k9s_Linux_ARCH.tar.gz
// (LICENSE, README.md, k9s at the top) and checksums.sha256, as goreleaser
// publishes them, at the real URL path under github.com.
func k9s() {
	const ver = "0.50.16"
	dir := filepath.Join(base, "mirror", "github.com", "derailed", "k9s", "releases", "download", "v"+ver)
	check(os.MkdirAll(dir, 0o755))
	var sums bytes.Buffer
	for _, arch := range arches {
		name := "k9s_Linux_" + arch + ".tar.gz"
		tgz := tarGz("", []file{
			{"LICENSE", []byte("Stand-in for k9s in updeb's walk-through. Licensed under the Apache License, Version 2.0.\n"), 0o644},
			{"README.md", []byte("# k9s stand-in\n\nNot k9s: a fixture for updeb's README walk-through.\n"), 0o644},
			{"k9s", goBuild("k9s", arch, ver), 0o755},
		})
		check(os.WriteFile(filepath.Join(dir, name), tgz, 0o644))
		fmt.Fprintf(&sums, "%s  %s\n", sha(tgz), name)
	}
	check(os.WriteFile(filepath.Join(dir, "checksums.sha256"), sums.Bytes(), 0o644))
	log.Printf("k9s stand-in written under %s:\n%s", dir, sums.String())
}

func importOrCreateKey(gnupg string) {
	secret := filepath.Join(base, "keys", "demo-upstream-secret.asc")
	public := filepath.Join(base, "keys", "demo-upstream.asc")
	if _, err := os.Stat(secret); err == nil {
		gpg(gnupg, "--import", secret)
		return
	}
	check(os.MkdirAll(filepath.Dir(secret), 0o755))
	gpg(gnupg, "--passphrase", "", "--quick-gen-key", keyUID, "ed25519", "sign", "never")
	gpg(gnupg, "--yes", "--armor", "--output", public, "--export", keyUID)
	gpg(gnupg, "--yes", "--armor", "--output", secret, "--export-secret-keys", keyUID)
}

func gpg(home string, args ...string) {
	cmd := exec.Command("gpg", append([]string{"--homedir", home, "--batch", "--pinentry-mode", "loopback", "--quiet"}, args...)...)
	cmd.Stderr = os.Stderr
	check(cmd.Run())
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
