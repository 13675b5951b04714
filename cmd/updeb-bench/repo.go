package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/deb"
)

// repoSizes are the suite sizes (published package versions) measured.
var repoSizes = []int{10, 100, 1000, 10000}

// benchRepo measures, for each size N, updeb publishing N packages into a
// new suite, then one more into it, then a refresh, against apt-ftparchive
// and gpg producing the same files (Packages, .gz, .xz, Contents-amd64.gz,
// Release, InRelease, Release.gpg) from the same pool: with no cache (every
// .deb read and hashed) and with apt-ftparchive's --db cache warmed on the N
// packages. updeb renders Contents from the file lists it stored when each
// package was added, so one more publish reads one .deb.
func benchRepo(work string) ([]row, error) {
	for _, tool := range []string{"apt-ftparchive", "gpg", "gpgconf", "gzip", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is needed for the repository benchmark: %v", tool, err)
		}
	}
	key, gnupg, err := repoBenchKey(work)
	if err != nil {
		return nil, err
	}
	defer exec.Command("gpgconf", "--homedir", gnupg, "--kill", "gpg-agent").Run() //nolint:errcheck // best effort
	var rows []row
	for _, n := range repoSizes {
		fmt.Printf("repo: N = %d\n", n)
		r, err := benchRepoSize(work, n, key, gnupg)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

func benchRepoSize(work string, n int, key *repo.GeneratedKey, gnupg string) ([]row, error) {
	dir := filepath.Join(work, fmt.Sprint(n))
	debs, err := makeBenchDebs(filepath.Join(dir, "debs"), n+1)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "repo")
	keyFile := filepath.Join(work, "key.secret.asc")
	var rows []row
	add := func(name, ref string, cmd *exec.Cmd) error {
		cmd.Stdout = io.Discard
		r, err := measure(name, cmd)
		r.ref = ref
		rows = append(rows, r)
		return err
	}
	ftp := func(db bool) *exec.Cmd {
		return ftparchiveCmd(root, filepath.Join(dir, "ftparchive"), gnupg, key.Fingerprint, db)
	}
	label := func(what string, k int) string { return fmt.Sprintf("%s, N=%d", what, k) }
	refCold, refDB := label("apt-ftparchive+gpg, no cache", n), label("apt-ftparchive+gpg --db (N cached)", n+1)

	publishN, err := self("repo-publish", append([]string{root, keyFile}, debs[:n]...)...)
	if err != nil {
		return nil, err
	}
	if err := add(label("updeb publish all", n), refCold, publishN); err != nil {
		return nil, err
	}
	if out, err := ftp(true).CombinedOutput(); err != nil { // warm the cache on N
		return nil, fmt.Errorf("apt-ftparchive --db: %v\n%s", err, out)
	}
	if err := add(refCold, "", ftp(false)); err != nil {
		return nil, err
	}
	time.Sleep(time.Second) // a write in the same second as the last waits for the next: not measured here
	publishOne, err := self("repo-publish", root, keyFile, debs[n])
	if err != nil {
		return nil, err
	}
	if err := add(label("updeb publish 1 more", n), refDB, publishOne); err != nil {
		return nil, err
	}
	if err := add(refDB, "", ftp(true)); err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	refresh, err := self("repo-refresh", root, keyFile)
	if err != nil {
		return nil, err
	}
	if err := add(label("updeb repo refresh", n+1), refDB, refresh); err != nil {
		return nil, err
	}
	// The same publish against the reference without a cache.
	u := rowNamed(rows, "", label("updeb publish 1 more", n))
	u.name, u.ref = label("updeb publish 1 more, vs no cache", n), refCold
	rows = append(rows, u)
	return rows, nil
}

// repoBenchKey makes an Ed25519 signing key, writes it for updeb and imports
// it into a gpg home for the reference.
func repoBenchKey(work string) (*repo.GeneratedKey, string, error) {
	key, err := repo.GenerateKey("bench", "bench@updeb.invalid", repo.Ed25519, time.Unix(benchEpoch, 0), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	keyFile := filepath.Join(work, "key.secret.asc")
	if err := os.WriteFile(keyFile, key.SecretArmored, 0o600); err != nil {
		return nil, "", err
	}
	gnupg := filepath.Join(work, "gnupg")
	if err := os.MkdirAll(gnupg, 0o700); err != nil {
		return nil, "", err
	}
	if out, err := exec.Command("gpg", "--homedir", gnupg, "--batch", "--import", keyFile).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("gpg --import: %v\n%s", err, out)
	}
	return key, gnupg, nil
}

// ftparchiveCmd is the reference publish: apt-ftparchive indexes the pool
// (with a cache database when db is set), gzip and xz compress the index,
// apt-ftparchive writes the Release and gpg signs it twice.
func ftparchiveCmd(root, out, gnupg, fpr string, db bool) *exec.Cmd {
	dbFlag := ""
	if db {
		dbFlag = "--db " + filepath.Join(out, "..", "ftparchive.db")
	}
	script := fmt.Sprintf(`set -e
mkdir -p %[1]s/main/binary-amd64
cd %[2]s
apt-ftparchive %[3]s packages pool > %[1]s/main/binary-amd64/Packages
gzip -n -k -f %[1]s/main/binary-amd64/Packages
xz -k -f %[1]s/main/binary-amd64/Packages
apt-ftparchive %[3]s contents pool | gzip -n > %[1]s/main/Contents-amd64.gz
apt-ftparchive -o APT::FTPArchive::Release::Suite=bench release %[1]s > %[1]s/../Release.new
mv %[1]s/../Release.new %[1]s/Release
gpg --homedir %[4]s --batch --yes --local-user %[5]s --clearsign -o %[1]s/InRelease %[1]s/Release
gpg --homedir %[4]s --batch --yes --local-user %[5]s -abs -o %[1]s/Release.gpg %[1]s/Release
`, out, root, dbFlag, gnupg, fpr)
	return exec.Command("sh", "-c", script)
}

// makeBenchDebs writes n small packages (kubectl-like names and
// descriptions, a few hundred bytes of payload) with pkg/deb.
func makeBenchDebs(dir string, n int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	names := []string{"kubectl", "kubelet", "kubeadm", "cri-tools", "kubernetes-cni", "helm", "etcd-server", "containerd"}
	var out []string
	for i := range n {
		name := names[i%len(names)]
		version := fmt.Sprintf("1.%d.%d-1", i/100, i%100)
		payload := bytes.Repeat([]byte(fmt.Sprintf("%s %s\n", name, version)), 20)
		p := filepath.Join(dir, fmt.Sprintf("%s_%s_amd64.deb", name, version))
		_, err := deb.Write(context.Background(), p, &deb.Package{
			Control: deb.Control{Package: name, Version: version, Architecture: "amd64", Maintainer: "Kubernetes packagers <k8s@updeb.invalid>",
				Section: "admin", Priority: "optional", Homepage: "https://kubernetes.io", Depends: []string{"libc6 (>= 2.34)"},
				Summary:     name + " for the bench repository",
				Description: "A package of the repository benchmark, with a description about as long\nas the real ones, so that the index has realistic stanzas."},
			Entries: []deb.Entry{
				{Path: "/usr/bin/" + name, Type: deb.TypeFile, Mode: 0o755, Size: int64(len(payload)), Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }},
				{Path: "/usr/share/doc/" + name + "/version", Type: deb.TypeFile, Mode: 0o644, Size: int64(len(payload)), Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }},
				{Path: "/usr/share/doc/" + name + "/" + version + ".txt", Type: deb.TypeFile, Mode: 0o644, Size: int64(len(payload)), Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }},
			},
			SourceDateEpoch: time.Unix(benchEpoch, 0),
			Compression:     "gzip",
		})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// repoChild opens the repository ROOT with the key KEYFILE on the real clock.
func repoChild(root, keyFile string) (*repo.Repo, error) {
	f, err := os.Open(keyFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	signer, err := repo.ReadSigner(f, keyFile)
	if err != nil {
		return nil, err
	}
	return repo.Open(root, repo.Options{Settings: repo.SettingsChange{Origin: ptr("bench"), Architectures: []string{"amd64"}},
		Signer: signer, Logger: slog.New(slog.DiscardHandler)}), nil
}

func ptr[T any](v T) *T { return &v }

// childRepoPublish publishes DEB... into suite bench of ROOT, as
// `updeb publish` does (control read with deb.InspectFile).
func childRepoPublish(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: -child repo-publish ROOT KEYFILE DEB [DEB]")
	}
	r, err := repoChild(args[0], args[1])
	if err != nil {
		return err
	}
	var pkgs []repo.Package
	for _, p := range args[2:] {
		info, err := deb.InspectFile(context.Background(), p, archive.Limits{})
		if err != nil {
			return err
		}
		pkgs = append(pkgs, repo.Package{Path: p, Control: info.Control, Contents: repo.ContentsOf(info)})
	}
	res, err := r.Publish(context.Background(), "bench", "main", pkgs)
	if err == nil && len(res.Added) != len(pkgs) {
		err = fmt.Errorf("published %d of %d packages", len(res.Added), len(pkgs))
	}
	return err
}

// childRepoRefresh refreshes every suite of ROOT.
func childRepoRefresh(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: -child repo-refresh ROOT KEYFILE")
	}
	r, err := repoChild(args[0], args[1])
	if err != nil {
		return err
	}
	_, err = r.Refresh(context.Background(), nil)
	return err
}
