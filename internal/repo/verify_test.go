package repo

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
	vopenpgp "github.com/updeb/updeb/pkg/verify/openpgp"
)

// verifyNow is after every Date testClock gives a short test.
var verifyNow = time.Date(2024, 8, 15, 0, 0, 0, 0, time.UTC)

// clientKeyring is the repository's key as its clients hold it.
func clientKeyring(t *testing.T, root string) *vopenpgp.Keyring {
	t.Helper()
	kr, err := vopenpgp.LoadKeyring(filepath.Join(root, "archive-keyring.gpg"))
	must(t, err)
	return kr
}

// wantFinding checks that checks hold exactly one finding, at path, saying
// says.
func wantFinding(t *testing.T, checks []SuiteCheck, path, says string) {
	t.Helper()
	var all []Finding
	for _, c := range checks {
		all = append(all, c.Findings...)
	}
	if len(all) != 1 || all[0].Path != path || !strings.Contains(all[0].Problem, says) {
		t.Fatalf("findings %+v, want one at %s saying %q", all, path, says)
	}
}

// TestVerifyIntact: what publish, promote and remove write verifies, in
// every suite, with the signer and the counts of what was read.
func TestVerifyIntact(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	ctx := context.Background()
	_, err := r.Publish(ctx, "s", "main", []Package{
		pkgOf(t, testDeb(t, dir, "aa", "1", "amd64", "a")),
		pkgOf(t, testDeb(t, dir, "bb", "1", "all", "b")),
	})
	must(t, err)
	_, err = r.Promote(ctx, Place{Suite: "s", Component: "main"}, Place{Suite: "p"}, nil)
	must(t, err)
	_, err = r.Remove(ctx, "s", "main", "aa", "", "")
	must(t, err)
	checks, err := r.Verify(ctx, "", clientKeyring(t, root), verifyNow)
	must(t, err)
	if len(checks) != 2 || checks[0].Suite != "p" || checks[1].Suite != "s" {
		t.Fatalf("checks %+v, want suites p and s", checks)
	}
	fpr := testSigner(t).Fingerprints()[0]
	// p: aa and bb (bb listed for amd64 and arm64, counted once); s: bb.
	for i, want := range []struct{ packages, pool int }{{2, 2}, {1, 1}} {
		c := checks[i]
		if len(c.Findings) != 0 || c.Signer != fpr || c.Packages != want.packages || c.PoolFiles != want.pool || c.Indexes == 0 || c.PoolBytes == 0 {
			t.Errorf("suite %s: %+v, want no findings, signer %s, %d packages in %d pool files", c.Suite, c, fpr, want.packages, want.pool)
		}
	}
}

// TestVerifyNamesASuiteWhoseLinkIsLost: a suite whose link dists/SUITE is
// lost (a copy that leaves symbolic links out) is a finding, with the
// ln -sfn that restores it, whether verify checks every suite or names it:
// every client gets 404 for it (apt: no Release file), and verify of the
// whole repository said nothing of it (exit 0, the monitoring check
// passing), verify of the suite that there is no such suite.
func TestVerifyNamesASuiteWhoseLinkIsLost(t *testing.T) {
	dir, root := testDirs(t)
	r, ctx := testRepo(t, root), context.Background()
	deb := pkgOf(t, testDeb(t, dir, "aa", "1", "amd64", "a"))
	for _, suite := range []string{"s", "t"} {
		_, err := r.Publish(ctx, suite, "main", []Package{deb})
		must(t, err)
	}
	_, err := r.Refresh(ctx, []string{"t"})
	must(t, err)
	link := filepath.Join(root, "dists", "t")
	must(t, os.Remove(link))
	a := newAptClient(t, root, "t", "main")
	if out, err := a.run("apt-get", "update", "-q"); err == nil && !strings.Contains(out, "E: ") {
		t.Fatalf("apt-get update of a suite without its link passed:\n%s", out)
	}
	restore := "ln -sfn .gen/t/2 " + link
	for _, suite := range []string{"", "t"} {
		checks, err := r.Verify(ctx, suite, clientKeyring(t, root), verifyNow)
		must(t, err)
		wantFinding(t, checks, "dists/t", restore)
		if c := checks[len(checks)-1]; c.Suite != "t" || c.Generation != 2 {
			t.Errorf("verify %q: the last check is of suite %s generation %d, want t generation 2", suite, c.Suite, c.Generation)
		}
	}
	// dists/t a copy of the generation (cp -L), no link: no suite of
	// updeb's, left out of the check of every suite as before.
	testenv.Run(t, "cp", "-rL", filepath.Join(root, "dists/.gen/t/2"), link)
	checks, err := r.Verify(ctx, "", clientKeyring(t, root), verifyNow)
	must(t, err)
	if len(checks) != 1 || checks[0].Suite != "s" || len(checks[0].Findings) != 0 {
		t.Fatalf("with dists/t a folder: %+v", checks)
	}
	must(t, os.RemoveAll(link))
	must(t, os.Symlink(".gen/t/2", link))
	checks, err = r.Verify(ctx, "", clientKeyring(t, root), verifyNow)
	must(t, err)
	if len(checks) != 2 || len(checks[0].Findings)+len(checks[1].Findings) != 0 {
		t.Fatalf("after the ln -sfn: %+v", checks)
	}
	a.update()
	a.install("aa", "1", "a")
}

// TestVerifyFindsWhatAptRefuses: each change to a published suite that apt
// refuses is a finding naming the file, and a suite that is changed nowhere
// else has no other finding. apt-get is the referee.
func TestVerifyFindsWhatAptRefuses(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	const deb = "pool/main/o/oo/oo_1_amd64.deb"
	flip := func(name string) func(t *testing.T, root, live string) {
		return func(t *testing.T, root, live string) {
			name := filepath.Join(root, name)
			data, err := os.ReadFile(name)
			must(t, err)
			data[len(data)/2] ^= 1
			must(t, os.Chmod(name, 0o644))
			must(t, os.WriteFile(name, data, 0o644))
		}
	}
	for _, tc := range []struct {
		name    string
		tamper  func(t *testing.T, root, live string)
		path    string // of the finding
		says    string
		aptStep string // the apt-get command that fails
	}{
		{"pool file changed", flip(deb), deb, "Hash Sum mismatch", "install"},
		{"pool file truncated", func(t *testing.T, root, _ string) {
			must(t, os.Truncate(filepath.Join(root, deb), 100))
		}, deb, "100 bytes", "install"},
		{"pool file missing", func(t *testing.T, root, _ string) {
			must(t, os.Remove(filepath.Join(root, deb)))
		}, deb, "missing", "install"},
		{"Packages.xz changed", func(t *testing.T, _, live string) {
			// A new file: its by-hash links keep the signed bytes.
			name := filepath.Join(live, "main/binary-amd64/Packages.xz")
			data, err := os.ReadFile(name)
			must(t, err)
			data[len(data)/2] ^= 1
			must(t, os.Remove(name))
			must(t, os.WriteFile(name, data, 0o644))
		}, "dists/s/main/binary-amd64/Packages.xz", "Hash Sum mismatch", ""},
		{"by-hash name missing", func(t *testing.T, _, live string) {
			idx, err := os.ReadFile(filepath.Join(live, "main/binary-amd64/Packages.xz"))
			must(t, err)
			sum := sha512.Sum512(idx) // apt fetches by the strongest
			must(t, os.Remove(filepath.Join(live, "main/binary-amd64/by-hash/SHA512", hex.EncodeToString(sum[:]))))
		}, "", "missing: apt fetches the index by this name", ""}, // apt falls back to the plain name
		{"Release.gpg of other text", func(t *testing.T, _, live string) {
			sig, err := testSigner(t).DetachSign([]byte("other text\n"), verifyNow)
			must(t, err)
			must(t, os.WriteFile(filepath.Join(live, "Release.gpg"), sig, 0o644))
		}, "dists/s/Release.gpg", "clients that fetch Release and Release.gpg refuse the suite", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, root, r := repoWithOne(t, "main")
			live, err := filepath.EvalSymlinks(filepath.Join(root, "dists/s"))
			must(t, err)
			tc.tamper(t, root, live)
			checks, err := r.Verify(context.Background(), "s", clientKeyring(t, root), verifyNow)
			must(t, err)
			path := tc.path
			if path == "" && len(checks) == 1 && len(checks[0].Findings) == 1 {
				path = checks[0].Findings[0].Path // by-hash: the name depends on the bytes
				if !strings.HasPrefix(path, "dists/s/main/binary-amd64/by-hash/SHA512/") {
					t.Fatalf("finding at %s, want a by-hash name", path)
				}
			}
			wantFinding(t, checks, path, tc.says)
			if tc.aptStep == "" {
				return
			}
			a := newAptClient(t, root, "s", "main")
			out, err := a.run("apt-get", "update", "-q")
			if tc.aptStep == "install" {
				if err != nil {
					t.Fatalf("apt-get update: %v\n%s", err, out)
				}
				out, err = a.run("apt-get", "install", "-y", "-q", "oo=1")
			}
			if err == nil {
				t.Fatalf("apt-get %s succeeded on a repository with a finding:\n%s", tc.aptStep, out)
			}
		})
	}
}

// TestVerifySignatures: a keyring without the signing key finds both
// signatures refused; InRelease and Release.gpg are named.
func TestVerifySignatures(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	_, _, r := repoWithOne(t, "main")
	other := newSigner(t, "other")
	bin, _, err := other.PublicKey()
	must(t, err)
	kr, err := vopenpgp.ParseKeyring(bytes.NewReader(bin), "other key")
	must(t, err)
	checks, err := r.Verify(context.Background(), "s", kr, verifyNow)
	must(t, err)
	if c := checks[0]; c.Signer != "" || len(c.Findings) != 2 || c.Findings[0].Path != "dists/s/InRelease" || c.Findings[1].Path != "dists/s/Release.gpg" ||
		!strings.Contains(c.Findings[0].Problem, "unknown signer") {
		t.Fatalf("verified with another key: %+v", c)
	}
}

// TestVerifyDates: a Release past its Valid-Until, or dated ahead of the
// clock, is a finding (apt refuses both); within them it is not.
func TestVerifyDates(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	change := testSettings("amd64")
	change.ValidFor = ptr(24 * time.Hour)
	r := Open(root, Options{Settings: change, Signer: testSigner(t), Now: testClock()})
	_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "oo", "1", "amd64", "o"))})
	must(t, err)
	date := time.Date(2024, 8, 14, 12, 2, 0, 0, time.UTC) // testClock's second: the first is the check that the key can sign
	for _, tc := range []struct {
		now  time.Time
		says string
	}{
		{date.Add(time.Hour), ""},
		{date.Add(25 * time.Hour), "expired: Valid-Until 2024-08-15T12:02:00Z has passed"},
		{date.Add(-time.Hour), "ahead of this machine's clock"},
	} {
		checks, err := r.Verify(context.Background(), "s", clientKeyring(t, root), tc.now)
		must(t, err)
		if tc.says == "" {
			if len(checks[0].Findings) != 0 {
				t.Errorf("at %s: %+v", tc.now, checks[0].Findings)
			}
			continue
		}
		if tc.now.Before(date) {
			// The signatures are dated after the clock too: refused as well.
			var found bool
			for _, f := range checks[0].Findings {
				found = found || f.Path == "dists/s/Release" && strings.Contains(f.Problem, tc.says)
			}
			if !found {
				t.Errorf("at %s: %+v, want a finding saying %q", tc.now, checks[0].Findings, tc.says)
			}
			continue
		}
		wantFinding(t, checks, "dists/s/Release", tc.says)
	}
}

// TestVerifyCompressedIndexAgrees: a Packages.gz that decompresses to other
// stanzas than the Packages beside it, both listed and signed, is a finding:
// clients that fetch one or the other would see other packages.
func TestVerifyCompressedIndexAgrees(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	_, root, r := repoWithOne(t, "main")
	live, err := filepath.EvalSymlinks(filepath.Join(root, "dists/s"))
	must(t, err)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	fmt.Fprint(w, "Package: other\n")
	must(t, w.Close())
	const rel = "main/binary-amd64/Packages.gz"
	must(t, os.Remove(filepath.Join(live, rel)))
	must(t, os.WriteFile(filepath.Join(live, rel), gz.Bytes(), 0o644))
	// List and sign it as a repository writer that got it wrong would.
	release, err := os.ReadFile(filepath.Join(live, "Release"))
	must(t, err)
	s256, s512 := sha256.Sum256(gz.Bytes()), sha512.Sum512(gz.Bytes())
	var lines []string
	for _, line := range strings.Split(string(release), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == rel {
			sum := hex.EncodeToString(s256[:])
			if len(f[0]) == 128 {
				sum = hex.EncodeToString(s512[:])
			}
			line = fmt.Sprintf(" %s %16d %s", sum, gz.Len(), rel)
			must(t, os.MkdirAll(filepath.Join(live, "main/binary-amd64/by-hash", map[bool]string{true: "SHA512", false: "SHA256"}[len(f[0]) == 128]), 0o755))
			must(t, os.WriteFile(filepath.Join(live, "main/binary-amd64/by-hash", map[bool]string{true: "SHA512", false: "SHA256"}[len(f[0]) == 128], sum), gz.Bytes(), 0o644))
		}
		lines = append(lines, line)
	}
	release = []byte(strings.Join(lines, "\n"))
	signer := testSigner(t)
	in, err := signer.ClearSign(release, verifyNow.Add(-time.Hour))
	must(t, err)
	sig, err := signer.DetachSign(release, verifyNow.Add(-time.Hour))
	must(t, err)
	for name, data := range map[string][]byte{"Release": release, "InRelease": in, "Release.gpg": sig} {
		must(t, os.Remove(filepath.Join(live, name)))
		must(t, os.WriteFile(filepath.Join(live, name), data, 0o644))
	}
	checks, err := r.Verify(context.Background(), "s", clientKeyring(t, root), verifyNow)
	must(t, err)
	wantFinding(t, checks, "dists/s/"+rel, "decompresses to 15 bytes, the Release lists")
}

// TestPublishRestoresDamagedPoolFile: publishing the same .deb again puts
// back a pool file that was changed, truncated or removed outside updeb
// (what repo verify tells the operator to do), without a new generation;
// apt installs it again. It used to say "unchanged" and leave it broken. So
// it does for a package promoted into another component, whose suite lists
// its source's pool file (pool/main/... for component extra), published
// again into that suite and component: its own pool path (pool/extra/...)
// is not the file the suite lists, and that one stayed damaged, the
// package taken as unchanged (its folder, removed too, is made again).
func TestPublishRestoresDamagedPoolFile(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	const rel = "pool/main/o/oo/oo_1_amd64.deb"
	for name, damage := range map[string]func(string) error{
		"changed":   func(f string) error { return os.WriteFile(f, []byte("not a deb"), 0o644) },
		"truncated": func(f string) error { return os.Truncate(f, 10) },
		"missing":   os.Remove,
		"folder":    func(f string) error { return os.RemoveAll(filepath.Dir(filepath.Dir(f))) },
	} {
		for _, promoted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/promoted=%v", name, promoted), func(t *testing.T) {
				dir := t.TempDir()
				root := filepath.Join(dir, "repo")
				r := testRepo(t, root)
				deb := testDeb(t, dir, "oo", "1", "amd64", "o")
				ctx := context.Background()
				first, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, deb)})
				must(t, err)
				suite, comp, generation := "s", "main", first.Generation
				if promoted {
					suite, comp = "prod", "extra"
					res, err := r.Promote(ctx, Place{Suite: "s"}, Place{Suite: suite, Component: comp}, nil)
					must(t, err)
					generation = res.Generation
					_, err = r.Remove(ctx, "s", "main", "oo", "", "")
					must(t, err)
				}
				pool := filepath.Join(root, rel)
				os.Chmod(pool, 0o644)
				must(t, damage(pool))
				res, err := r.Publish(ctx, suite, comp, []Package{pkgOf(t, deb)})
				must(t, err)
				if len(res.Restored) != 1 || res.Restored[0].Filename != rel || len(res.Unchanged) != 1 || len(res.Added) != 0 || res.Generation != generation {
					t.Fatalf("publish of the same .deb over a %s pool file: restored %d (want %s), unchanged %d, added %d, generation %d (want %d)",
						name, len(res.Restored), rel, len(res.Unchanged), len(res.Added), res.Generation, generation)
				}
				if _, err := os.Stat(filepath.Join(root, "pool", comp)); comp != "main" && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the publish into %s left pool/%s (%v)", comp, comp, err)
				}
				checks, err := r.Verify(ctx, suite, clientKeyring(t, root), verifyNow)
				must(t, err)
				if len(checks[0].Findings) != 0 {
					t.Fatalf("after the restore: %+v", checks[0].Findings)
				}
				again, err := r.Publish(ctx, suite, comp, []Package{pkgOf(t, deb)})
				must(t, err)
				if len(again.Restored) != 0 {
					t.Fatalf("an intact pool file restored: %+v", again)
				}
				a := newAptClient(t, root, suite, comp)
				a.update()
				a.install("oo", "1", "o")
			})
		}
	}
}

// TestVerifyCarriedByHash: the earlier generations' indexes a generation
// serves by hash (updeb-by-hash-kept), which a client that read an earlier
// InRelease fetches in the middle of an update, are checked against their
// names: one changed or removed is a finding.
func TestVerifyCarriedByHash(t *testing.T) {
	dir, root := testDirs(t)
	r, ctx := testRepo(t, root), context.Background()
	for _, v := range []string{"1", "2"} {
		_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", v, "amd64", v))})
		must(t, err)
	}
	kept := readByHashKept(filepath.Join(root, "dists", "s"))
	var carried string // the first generation's Packages.xz, which the second does not list
	for rel := range kept {
		if strings.HasPrefix(rel, "main/binary-amd64/by-hash/SHA256/") {
			if data, err := os.ReadFile(filepath.Join(root, "dists", "s", rel)); err == nil && bytes.HasPrefix(data, []byte("\xfd7zXZ")) &&
				!strings.Contains(string(mustRead(t, filepath.Join(root, "dists", "s", "Release"))), filepath.Base(rel)) {
				carried = rel
			}
		}
	}
	if carried == "" {
		t.Fatalf("no carried Packages.xz among %v", kept)
	}
	checks, err := r.Verify(ctx, "s", clientKeyring(t, root), verifyNow)
	must(t, err)
	if len(checks) != 1 || len(checks[0].Findings) != 0 {
		t.Fatalf("intact: %+v", checks)
	}
	name := filepath.Join(root, "dists", "s", carried)
	must(t, os.Remove(name)) // a hard link of the first generation's file
	must(t, os.WriteFile(name, []byte("not the index"), 0o644))
	checks, err = r.Verify(ctx, "s", clientKeyring(t, root), verifyNow)
	must(t, err)
	wantFinding(t, checks, "dists/s/"+carried, "updeb-by-hash-kept lists it")
	must(t, os.Remove(name))
	checks, err = r.Verify(ctx, "s", clientKeyring(t, root), verifyNow)
	must(t, err)
	wantFinding(t, checks, "dists/s/"+carried, "missing")
}

// TestVerifyWhileSwitched: a publish that switches the suite while verify
// checks it, and prunes the generation being checked (keep 1), is no
// finding: verify checks the new live generation instead of reporting the
// removed one's files as missing.
func TestVerifyWhileSwitched(t *testing.T) {
	dir, root, r := keepOneRepo(t)
	ctx := context.Background()
	checker := testRepo(t, root)
	done := publishAt(t, checker, "verify", r, "main", pkgOf(t, testDeb(t, dir, "aa", "3", "amd64", "3")))
	checks, err := checker.Verify(ctx, "s", clientKeyring(t, root), verifyNow)
	must(t, err)
	done()
	if len(checks) != 1 || len(checks[0].Findings) != 0 || checks[0].Generation != 3 || checks[0].Packages != 3 {
		t.Fatalf("checks %+v, want generation 3 with its 3 packages and no findings", checks)
	}
}

// TestContentsWhileSwitched: a publish between Contents' read of the suites
// and of their packages is read again: the suite's generation is the one
// whose packages are listed, with the component the publish added.
func TestContentsWhileSwitched(t *testing.T) {
	dir, root := testDirs(t)
	r, ctx := testRepo(t, root), context.Background()
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", "1", "amd64", "1"))})
	must(t, err)
	reader := testRepo(t, root)
	done := publishAt(t, reader, "suites", r, "extra", pkgOf(t, testDeb(t, dir, "bb", "1", "amd64", "2")))
	suites, entries, err := reader.Contents()
	must(t, err)
	done()
	if len(suites) != 1 || suites[0].Generation != 2 || strings.Join(suites[0].Components, " ") != "extra main" || len(entries) != 2 {
		t.Fatalf("suites %+v, entries %+v: want generation 2, components extra and main, and its 2 packages", suites, entries)
	}
}

// TestListWhileSwitched: a publish that switches the suite and removes the
// generation a reader has just found live (keep 1), before the reader reads
// it ("live") or after its Release and before its packages ("read"), is no
// error and no generation "removed outside updeb": the reader reads the new
// live one.
func TestListWhileSwitched(t *testing.T) {
	for _, step := range []string{"live", "read"} {
		dir, root, r := keepOneRepo(t)
		reader := testRepo(t, root)
		done := publishAt(t, reader, step, r, "main", pkgOf(t, testDeb(t, dir, "aa", "3", "amd64", "3")))
		entries, err := reader.List("")
		must(t, err)
		done()
		if len(entries) != 3 {
			t.Fatalf("at %s: entries %+v, want the 3 versions of the new live generation", step, entries)
		}
	}
}

// keepOneRepo is a repository whose suite s keeps 1 generation, at its
// second (aa 1 and 2 published one by one).
func keepOneRepo(t *testing.T) (dir, root string, r *Repo) {
	dir, root = testDirs(t)
	r = testRepo(t, root)
	one := 1
	r.opts.Settings.Keep = &one
	for _, v := range []string{"1", "2"} {
		_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", v, "amd64", v))})
		must(t, err)
	}
	return dir, root, r
}

// publishAt makes reader's first step named step publish p into suite s,
// component comp, through writer. The function it returns fails the test
// when the step never came.
func publishAt(t *testing.T, reader *Repo, step string, writer *Repo, comp string, p Package) func() {
	t.Helper()
	published := false
	reader.opts.Hook = func(at string) {
		if at == step && !published {
			published = true
			_, err := writer.Publish(context.Background(), "s", comp, []Package{p})
			must(t, err)
		}
	}
	return func() {
		if !published {
			t.Fatalf("no publish at step %s", step)
		}
	}
}

// Interrupted while it checks the pool, Verify opens no more pool files:
// each would only fail on the done context, and the files of a suite of
// 200,000 packages took seconds to get through after the signal.
func TestVerifyStopsOpeningPoolFiles(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	var pkgs []Package
	for i := range 12 {
		pkgs = append(pkgs, pkgOf(t, testDeb(t, dir, fmt.Sprintf("p%d", i), "1", "amd64", "x")))
	}
	_, err := testRepo(t, root).Publish(context.Background(), "s", "main", pkgs)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := 0
	r := Open(root, Options{Signer: testSigner(t), Now: testClock(), Logger: slog.New(slog.DiscardHandler), Hook: func(step string) {
		if step == "pool" {
			started++
			cancel() // the signal comes as the first pool file is checked
		}
	}})
	if _, err := r.Verify(ctx, "s", clientKeyring(t, root), verifyNow); !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify: %v, want context.Canceled", err)
	}
	if started != 1 {
		t.Errorf("%d pool files checked after the interrupt came at the first, want none", started-1)
	}
}

// TestVerifySharedPoolReadOnce: suites that list the same pool files (a
// staging suite and the ones promoted from it) had each file read and
// hashed once per suite, and verify of 30 suites sharing a pool read it 30
// times. Each is read once now; a file whose bytes differ from what a later
// suite lists is read again, so that its finding comes from its bytes.
func TestVerifySharedPoolReadOnce(t *testing.T) {
	const suites, n = 5, 4
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	var pkgs []Package
	for i := range n {
		pkgs = append(pkgs, pkgOf(t, testDeb(t, dir, fmt.Sprintf("p%d", i), "1", "amd64", "x")))
	}
	w := testRepo(t, root)
	ctx := context.Background()
	_, err := w.Publish(ctx, "s0", "main", pkgs)
	must(t, err)
	for i := 1; i < suites; i++ {
		_, err := w.Promote(ctx, Place{Suite: "s0"}, Place{Suite: fmt.Sprintf("s%d", i)}, nil)
		must(t, err)
	}
	reads := 0
	r := Open(root, Options{Signer: testSigner(t), Now: testClock(), Logger: slog.New(slog.DiscardHandler), Hook: func(step string) {
		if step == "pool" {
			reads++
		}
	}})
	checks, err := r.Verify(ctx, "", clientKeyring(t, root), verifyNow)
	must(t, err)
	if len(checks) != suites {
		t.Fatalf("%d suites checked", len(checks))
	}
	for _, c := range checks {
		if len(c.Findings) != 0 || c.PoolFiles != n || c.PoolBytes != checks[0].PoolBytes || c.PoolBytes == 0 {
			t.Errorf("%s: %d pool files, %d bytes, findings %v", c.Suite, c.PoolFiles, c.PoolBytes, c.Findings)
		}
	}
	if reads != n {
		t.Errorf("%d pool files read for %d suites listing the same %d", reads, suites, n)
	}
	// A damaged pool file is found in each suite that lists it, each time
	// from its bytes: read again for each suite after the first.
	debs, err := filepath.Glob(filepath.Join(root, "pool", "main", "p", "p0", "*.deb"))
	must(t, err)
	if len(debs) != 1 {
		t.Fatalf("pool files of p0: %q", debs)
	}
	must(t, os.WriteFile(debs[0], []byte("damaged"), 0o644))
	reads = 0
	checks, err = r.Verify(ctx, "", clientKeyring(t, root), verifyNow)
	must(t, err)
	for _, c := range checks {
		if len(c.Findings) != 1 || !strings.Contains(c.Findings[0].Problem, "apt refuses it (File has unexpected size)") {
			t.Errorf("%s: findings %v", c.Suite, c.Findings)
		}
	}
	if reads != n+suites-1 {
		t.Errorf("%d pool files read for %d suites listing the same %d, one damaged", reads, suites, n)
	}
}
