package main

import (
	"bytes"
	"context"
	"crypto/sha512"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/updeb/updeb/cmd/updeb-bench/fetchbench"
	"github.com/updeb/updeb/internal/testkit/squid"
)

const (
	tarballName = "go-bench-1.0-linux-amd64.tar.gz"
	// reversedName holds the same files in reverse name order: a package
	// written from it cannot take its members as they stream, and spools them.
	reversedName = "go-bench-1.0-linux-amd64-reversed.tar.gz"
	benchHost    = "https://bench.updeb.invalid/"
)

// upstream makes (once) the release an upstream would publish: a tarball of
// the payload's amd64 part (the toolchain's own binaries, 86 MiB: the size of
// a Kubernetes server tarball's binaries for one architecture is 4 times that,
// but dpkg-deb -Zxz would then take minutes in this section too), the same in
// reverse order, and their SHA512SUMS, in .bench/upstream-GOVERSION.
func upstream(payloadDir string) (string, error) {
	dir := filepath.Join(filepath.Dir(payloadDir), "upstream-"+strings.TrimPrefix(filepath.Base(payloadDir), "payload-"))
	if _, err := os.Stat(filepath.Join(dir, "SHA512SUMS")); err == nil {
		return dir, nil
	}
	fmt.Printf("making the upstream tarballs in %s (once)\n", dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	amd64 := filepath.Join(payloadDir, "amd64")
	files, err := payloadFiles(amd64)
	if err != nil {
		return "", err
	}
	slices.Reverse(files)
	var list strings.Builder
	for _, f := range files {
		list.WriteString("./" + filepath.ToSlash(f) + "\n")
	}
	var sums strings.Builder
	for _, t := range []struct {
		name string
		args []string
	}{
		{tarballName, []string{"--sort=name", "--exclude=.complete", "."}},
		{reversedName, []string{"--no-recursion", "-T", "-"}},
	} {
		tgz := filepath.Join(dir, t.name)
		cmd := exec.Command("tar", append([]string{"--owner=0", "--group=0", "--transform", "s,^\\.,go-bench-1.0,", "-czf", tgz, "-C", amd64}, t.args...)...)
		cmd.Stdin = strings.NewReader(list.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("tar: %v\n%s", err, out)
		}
		sum, err := hashFile(tgz, sha512.New())
		if err != nil {
			return "", err
		}
		sums.WriteString(sum + "  " + t.name + "\n")
	}
	return dir, os.WriteFile(filepath.Join(dir, "SHA512SUMS"), []byte(sums.String()), 0o644)
}

// signer makes a throwaway gpg key in work and signs files (detached,
// armored). It returns the armored public key and the binary keyring for
// gpgv, and the fingerprint.
func signer(work string, files ...string) (asc, keyring, fpr string, err error) {
	home := filepath.Join(work, "gnupg")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", "", "", err
	}
	gpg := func(args ...string) ([]byte, error) {
		cmd := exec.Command("gpg", append([]string{"--homedir", home, "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("gpg %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out, nil
	}
	if _, err := gpg("--quick-gen-key", "bench upstream <bench@updeb.invalid>", "ed25519", "sign", "never"); err != nil {
		return "", "", "", err
	}
	out, err := gpg("--with-colons", "--list-keys")
	if err != nil {
		return "", "", "", err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Split(l, ":"); f[0] == "fpr" && fpr == "" {
			fpr = f[9]
		}
	}
	asc, keyring = filepath.Join(work, "bench.asc"), filepath.Join(work, "bench.gpg")
	if _, err := gpg("--armor", "--output", asc, "--export"); err != nil {
		return "", "", "", err
	}
	if _, err := gpg("--output", keyring, "--export"); err != nil {
		return "", "", "", err
	}
	for _, f := range files {
		if _, err := gpg("--armor", "--detach-sign", "--output", f+".asc", f); err != nil {
			return "", "", "", err
		}
	}
	return asc, keyring, fpr, nil
}

// benchPipeline: the operators' shell pipeline against `updeb build` on the
// same release served through the same squid, then a no-op rebuild.
func benchPipeline(work string) ([]row, error) {
	pdir, _, err := payload()
	if err != nil {
		return nil, err
	}
	up, err := upstream(pdir)
	if err != nil {
		return nil, err
	}
	// The served folder: the cached tarball (hardlinked), SHA512SUMS, and a
	// signature by this run's key.
	serve := filepath.Join(work, "upstream")
	if err := os.MkdirAll(serve, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{tarballName, reversedName, "SHA512SUMS"} {
		if err := os.Link(filepath.Join(up, f), filepath.Join(serve, f)); err != nil {
			return nil, err
		}
	}
	asc, keyring, fpr, err := signer(work, filepath.Join(serve, tarballName), filepath.Join(serve, reversedName))
	if err != nil {
		return nil, err
	}
	tgzSize, err := fileSize(filepath.Join(serve, tarballName))
	if err != nil {
		return nil, err
	}
	fmt.Printf("tarball: %.1f MiB (%s), signed by %s\n", float64(tgzSize)/(1<<20), tarballName, fpr)
	srv := httptest.NewServer(http.FileServer(http.Dir(serve)))
	defer srv.Close()
	sq, err := squid.Start()
	if err != nil {
		return nil, err
	}
	defer sq.Stop()

	shellDir := filepath.Join(work, "shell")
	if err := os.MkdirAll(shellDir, 0o755); err != nil {
		return nil, err
	}
	script := fmt.Sprintf(`set -e
for f in %[1]s %[1]s.asc SHA512SUMS; do curl -sS --fail -x "$PROXY" -O "$URL/$f"; done
sha512sum --quiet --ignore-missing -c SHA512SUMS
gpgv --quiet --keyring "$KEYRING" %[1]s.asc %[1]s 2>/dev/null
mkdir x && tar -xzf %[1]s -C x
mkdir -p tree/usr/lib tree/DEBIAN && mv x/go-bench-1.0 tree/usr/lib/go-bench-amd64
printf 'Package: go-bench\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: bench <bench@updeb.invalid>\nDescription: bench\n bench\n' > tree/DEBIAN/control
dpkg-deb --root-owner-group -Zxz --build tree go-bench_1.0-1_amd64.deb >/dev/null
`, tarballName)
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = shellDir
	cmd.Env = append(os.Environ(), "PROXY="+sq.URL, "URL="+srv.URL, "KEYRING="+keyring, fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
	const ref = "shell: curl, sha512sum -c, gpgv, tar -x, dpkg-deb -Zxz"
	var rows []row
	r, err := measureDisk(ref, cmd, shellDir)
	if err != nil {
		return nil, err
	}
	if r.outSize, err = fileSize(filepath.Join(shellDir, "go-bench_1.0-1_amd64.deb")); err != nil {
		return nil, err
	}
	rows = append(rows, r)

	updeb, err := buildUpdeb(work)
	if err != nil {
		return nil, err
	}
	cfg, err := benchProject(work, pdir, srv.URL, sq.URL, asc, fpr, filepath.Join(up, "SHA512SUMS"))
	if err != nil {
		return nil, err
	}
	proj := filepath.Join(work, "project")
	for _, b := range []struct{ name, recipe, deb string }{
		{"updeb build", "go-bench", "go-bench_1.0.0-1_amd64.deb"},
		{"updeb build (no-op rebuild)", "go-bench", "go-bench_1.0.0-1_amd64.deb"},
		{"updeb build, tarball in reverse order (members spooled)", "go-bench-reversed", "go-bench-reversed_1.0.0-1_amd64.deb"},
	} {
		cmd := exec.Command(updeb, "-q", "--config", cfg, "--recipes", filepath.Join(proj, "recipes"), "build", b.recipe)
		r, err := measureDisk(b.name, cmd, proj)
		if err != nil {
			return nil, err
		}
		if r.outSize, err = fileSize(filepath.Join(proj, "out", b.deb)); err != nil {
			return nil, err
		}
		r.ref = ref
		rows = append(rows, r)
	}
	return rows, nil
}

// buildUpdeb builds the updeb binary into work.
func buildUpdeb(work string) (string, error) {
	bin := filepath.Join(work, "updeb")
	if out, err := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/updeb").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/updeb: %v\n%s", err, out)
	}
	return bin, nil
}

// benchProject writes an updeb project (config, keyring, and for each
// tarball a recipe that ships every file of it) and returns the config's path.
func benchProject(work, payloadDir, serverURL, proxy, asc, fpr, sums string) (string, error) {
	proj := filepath.Join(work, "project")
	for _, d := range []string{"recipes", "keys"} {
		if err := os.MkdirAll(filepath.Join(proj, d), 0o755); err != nil {
			return "", err
		}
	}
	if err := os.Rename(asc, filepath.Join(proj, "keys", "bench.asc")); err != nil {
		return "", err
	}
	sumsData, err := os.ReadFile(sums)
	if err != nil {
		return "", err
	}
	sha512 := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(sumsData)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			sha512[f[1]] = f[0]
		}
	}
	files, err := payloadFiles(filepath.Join(payloadDir, "amd64"))
	if err != nil {
		return "", err
	}
	for _, t := range []struct{ name, tarball string }{{"go-bench", tarballName}, {"go-bench-reversed", reversedName}} {
		var b strings.Builder
		fmt.Fprintf(&b, `name: %[5]s
version: 1.0.0
revision: "1"
release-date: 2024-08-14
homepage: https://bench.updeb.invalid/
license: Apache-2.0 # a stand-in: Go is BSD-3-Clause, which needs license-text
copyright: The updeb benchmark
architectures: {amd64: amd64}
repo: {component: main}
sources:
  - name: go-bench
    url: %[1]s%[2]s
    sha512: %[3]s
    signature:
      url: %[1]s%[2]s.asc
      keyring: keys/bench.asc
      signers: [%[4]s]
    checksums:
      url: %[1]sSHA512SUMS
packages:
  - name: %[5]s
    summary: Go binaries for the updeb benchmark
    description: |
      The Go toolchain's binaries for several architectures.
    section: devel
    files:
`, benchHost, t.tarball, sha512[t.tarball], fpr, t.name)
		for _, f := range files {
			fmt.Fprintf(&b, "      - {source: go-bench, path: %q, dest: %q, mode: \"0755\"}\n", "go-bench-1.0/"+f, "/usr/lib/go-bench-amd64/"+f)
		}
		if err := os.WriteFile(filepath.Join(proj, "recipes", t.name+".yaml"), []byte(b.String()), 0o644); err != nil {
			return "", err
		}
	}
	cfg := fmt.Sprintf(`proxy: %s
mirrors:
  - {prefix: %q, to: %q}
cache: cache
out: out
build:
  maintainer: bench <bench@updeb.invalid>
`, proxy, benchHost, serverURL+"/")
	p := filepath.Join(proj, "updeb.yaml")
	return p, os.WriteFile(p, []byte(cfg), 0o644)
}

// benchFetch runs fetchbench (200 MB, median of 3) and prints its own table.
// fetchRuns and fetchAlso are the fetch section's flags (-fetch-runs,
// -fetch-also).
var (
	fetchRuns = 7
	fetchAlso []fetchbench.Binary
)

func benchFetch(work string) ([]row, error) {
	updeb, err := buildUpdeb(work)
	if err != nil {
		return nil, err
	}
	fmt.Println()
	return nil, fetchbench.Run(context.Background(), os.Stdout, fetchbench.Config{Updeb: updeb, Size: 200e6, Runs: fetchRuns, Others: fetchAlso})
}
