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
// The stand-in k9s release of the README's walk-through (a goreleaser layout
// under github.com/derailed/k9s) is made on its own, leaving the demo's files
// as they are:
//
//	go run ./testdata/demo/mkmirror k9s
//
// This is test tooling: it uses gpg, which the product itself never does.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"
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
	if len(os.Args) > 1 && os.Args[1] == "k9s" {
		k9s()
		return
	}
	gnupg, err := os.MkdirTemp("", "mkmirror-gnupg")
	check(err)
	defer os.RemoveAll(gnupg)
	importOrCreateKey(gnupg)

	helloDir := filepath.Join(base, "mirror", host, "hello", "v"+helloVer)
	pingdDir := filepath.Join(base, "mirror", host, "pingd", "v"+pingdVer)
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
	log.Printf("mirror written under %s/mirror; now update the digests in %s/recipes", base, base)
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
