package pipeline

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/dsse"
	"github.com/updeb/updeb/pkg/provenance"
	"github.com/updeb/updeb/pkg/verify/openpgp"
)

// readRecord reads a provenance record: its envelope and statement.
func readRecord(t testing.TB, path string) (*provenance.Statement, *dsse.Envelope) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env, err := dsse.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	st, err := provenance.FromEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	return st, env
}

// testKey makes a provenance signing key the way `updeb keys generate`
// does, and returns it with its armored public key.
func testKey(t testing.TB, kind repo.KeyType) (*signkey.Key, *repo.GeneratedKey) {
	t.Helper()
	g, err := repo.GenerateKey("updeb tests", "tests@example.org", kind, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := signkey.Read(bytes.NewReader(g.SecretArmored), "test key")
	if err != nil {
		t.Fatal(err)
	}
	return k, g
}

// inputs maps each dependency's URI or name to its digest and annotations.
func inputs(st *provenance.Statement) map[string]provenance.Dependency {
	m := map[string]provenance.Dependency{}
	for _, d := range st.Predicate.BuildDefinition.ResolvedDependencies {
		m[d.URI+d.Name] = d
	}
	return m
}

// The record names the recipe, its folder's files and the keyrings with the
// digests of their bytes, and is signed with the configured key: gpgv
// agrees on the signature over the PAE, and pkg/provenance's Verify on all.
func TestSignedProvenanceRecord(t *testing.T) {
	testenv.RequireTool(t, "gpgv")
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	key, pub := testKey(t, repo.Ed25519)
	opts.ProvenanceKey = key
	if _, err := Run(context.Background(), jobs(t, root, "arm64", "pingd"), opts); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(out, "pingd_0.9.1-1_arm64.deb")
	st, env := readRecord(t, deb+ProvenanceSuffix)
	in := inputs(st)
	for name, want := range map[string]string{
		"recipes/pingd.yaml":          "recipe",
		"recipes/pingd/pingd.service": "recipe-file",
		"recipes/pingd/pingd.default": "recipe-file",
		"keys/demo-upstream.asc":      "keyring",
	} {
		d, ok := in[name]
		if !ok || d.Annotations["role"] != want || d.Digest["sha256"] != sha256File(t, filepath.Join(root, name)) {
			t.Errorf("input %s: %+v, want role %s and the file's sha256", name, d, want)
		}
	}
	if _, ok := in["recipes/pingd.yaml"].Annotations["gitState"]; ok {
		t.Errorf("a recipe outside git has a git state: %+v", in["recipes/pingd.yaml"])
	}
	cross := in["https://releases.example.org/pingd/v0.9.1/pingd.arm64"].Annotations["verifiedBy"]
	if b, _ := json.Marshal(cross); !strings.Contains(string(b), "openpgp-clearsigned-checksums:BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B") {
		t.Errorf("the source's verifiers: %s", b)
	}
	if len(env.Signatures) != 1 || env.Signatures[0].KeyID != pub.Fingerprint {
		t.Fatalf("signatures %+v, want one by %s", env.Signatures, pub.Fingerprint)
	}

	// The referee: gpgv checks the signature over the PAE bytes, computed here
	// from the protocol's definition, not by pkg/dsse.
	dir := t.TempDir()
	raw, _ := os.ReadFile(deb + ProvenanceSuffix)
	var j struct {
		PayloadType string
		Payload     string
		Signatures  []struct{ Sig string }
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(j.Payload)
	sig, _ := base64.StdEncoding.DecodeString(j.Signatures[0].Sig)
	pae := append([]byte("DSSEv1 28 application/vnd.in-toto+json "+itoa(len(payload))+" "), payload...)
	os.WriteFile(filepath.Join(dir, "pae"), pae, 0o644)
	os.WriteFile(filepath.Join(dir, "sig"), sig, 0o644)
	os.WriteFile(filepath.Join(dir, "pub.gpg"), pub.PublicBinary, 0o644)
	testenv.Run(t, "gpgv", "--keyring", filepath.Join(dir, "pub.gpg"), filepath.Join(dir, "sig"), filepath.Join(dir, "pae"))

	kr, err := openpgp.ParseKeyring(bytes.NewReader(pub.PublicArmored), "pub.asc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provenance.Verify(env, kr, openpgp.Policy{Now: time.Now()}, filepath.Base(deb), sha256File(t, deb)); err != nil {
		t.Fatal(err)
	}

	// A forced rebuild gives the same record, signature included.
	opts.Force = true
	if _, err := Run(context.Background(), jobs(t, root, "arm64", "pingd"), opts); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(deb + ProvenanceSuffix); !bytes.Equal(raw, again) {
		t.Fatalf("a rebuild changed the signed record:\n%s\n%s", raw, again)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// What only the record depends on (the key, the recipe's comments, its git
// commit) is brought up to date without rebuilding the package, to exactly
// the bytes a fresh build writes.
func TestUpToDateRecordsFollowKeyRecipeAndCommit(t *testing.T) {
	testenv.RequireTool(t, "git")
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	deb := filepath.Join(out, "hello_1.2.0-1_amd64.deb")
	record := deb + ProvenanceSuffix
	run := func(force bool) []byte {
		t.Helper()
		o := opts
		o.Force = force
		res, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), o)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Skipped == force {
			t.Fatalf("skipped %v with force %v", res[0].Skipped, force)
		}
		data, _ := os.ReadFile(record)
		return data
	}
	// fresh returns what a build from scratch writes now, in another folder.
	fresh := func() []byte {
		t.Helper()
		o := opts
		o.OutDir = filepath.Join(t.TempDir(), "fresh")
		if _, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), o); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(o.OutDir, filepath.Base(record)))
		return data
	}
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), opts); err != nil {
		t.Fatal(err)
	}
	debStat, _ := os.Stat(deb)

	key, _ := testKey(t, repo.Ed25519)
	opts.ProvenanceKey = key
	if got := run(false); !bytes.Equal(got, fresh()) || !bytes.Contains(got, []byte(`"keyid":"`+key.Fingerprint())) {
		t.Fatalf("after a key was configured the record is\n%s", got)
	}

	recipeFile := filepath.Join(root, "recipes", "hello.yaml")
	f, _ := os.OpenFile(recipeFile, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("# a comment changes the recipe's digest, not its plan\n")
	f.Close()
	if got := run(false); !bytes.Equal(got, fresh()) {
		t.Fatalf("after a comment the record is\n%s\nnot\n%s", got, fresh())
	}

	gitIn := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	gitIn("init", "-q")
	gitIn("add", "recipes", "keys")
	gitIn("commit", "-q", "-m", "recipes")
	commit := gitIn("rev-parse", "HEAD")
	got := run(false)
	st, _ := readRecord(t, record)
	rec := inputs(st)["recipes/hello.yaml"]
	if rec.Annotations["gitCommit"] != commit || rec.Annotations["gitState"] != "clean" || rec.Annotations["gitPath"] != "recipes/hello.yaml" || !bytes.Equal(got, fresh()) {
		t.Fatalf("in a git checkout the recipe is %+v, want commit %s", rec, commit)
	}
	os.WriteFile(recipeFile, append(must(os.ReadFile(recipeFile)), "# uncommitted\n"...), 0o644)
	run(false)
	st, _ = readRecord(t, record)
	rec = inputs(st)["recipes/hello.yaml"]
	if _, ok := rec.Annotations["gitCommit"]; ok || rec.Annotations["gitState"] != "modified" {
		t.Fatalf("a modified recipe is recorded as %+v", rec)
	}
	if now, _ := os.Stat(deb); !os.SameFile(now, debStat) || !now.ModTime().Equal(debStat.ModTime()) {
		t.Fatal("the package was rewritten, though only its record changed")
	}

	// A damaged record is not patched: the job is rebuilt.
	os.WriteFile(record, []byte("{"), 0o644)
	if got := run(true); !bytes.Equal(got, fresh()) {
		t.Fatal("a rebuild after a damaged record")
	}
	os.WriteFile(record, []byte("{"), 0o644)
	res, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), opts)
	if err != nil || res[0].Skipped {
		t.Fatalf("a damaged record did not cause a rebuild: %v %+v", err, res)
	}
	if got, _ := os.ReadFile(record); !bytes.Equal(got, fresh()) {
		t.Fatal("the rebuilt record differs from a fresh one")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// An up-to-date job's record is brought up to date only where a fresh build
// would write it otherwise (the recipe input, the signature): a record
// whose other statements were changed since it was written (an input's
// digest here, its signature left as it was, so that it no longer
// verifies) is not signed again as it stands, which would make the change
// pass `updeb verify-provenance`: the job is rebuilt.
func TestUpToDateChangedRecordIsNotResigned(t *testing.T) {
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	key, _ := testKey(t, repo.Ed25519)
	opts.ProvenanceKey = key
	record := filepath.Join(out, "hello_1.2.0-1_amd64.deb") + ProvenanceSuffix
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), opts); err != nil {
		t.Fatal(err)
	}
	built, _ := os.ReadFile(record)

	st, env := readRecord(t, record)
	changed := false
	for i, d := range st.Predicate.BuildDefinition.ResolvedDependencies {
		if d.URI != "" && d.Digest["sha256"] != "" {
			st.Predicate.BuildDefinition.ResolvedDependencies[i].Digest["sha256"] = strings.Repeat("0", 64)
			changed = true
			break
		}
	}
	if !changed {
		t.Fatal("the record has no download to change")
	}
	payload, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env.Payload = payload
	data, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(record, data, 0o644)

	res, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(record); res[0].Skipped || !bytes.Equal(got, built) {
		t.Fatalf("a changed record was kept as up to date (skipped %v) and signed again: it is not what the build wrote", res[0].Skipped)
	}
}

// A release-date ahead of the clock dates the record's signature in the
// future, which pkg/verify/openpgp (and so updeb verify-provenance) refuses:
// the build said "built" and left a record no verifier took. It is refused,
// naming the release date, and leaves no package behind.
func TestSignedRecordFromTheFutureRefused(t *testing.T) {
	root, mirror := project(t)
	p := filepath.Join(root, "recipes", "pingd.yaml")
	data, _ := os.ReadFile(p)
	now := time.Date(2027, 6, 1, 12, 0, 0, 0, time.UTC)
	os.WriteFile(p, bytes.Replace(data, []byte("release-date: 2026-03-14"), []byte("release-date: 2027-06-02"), 1), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	opts.Source.Now = func() time.Time { return now }
	opts.ProvenanceKey, _ = testKey(t, repo.Ed25519)
	_, err := Run(context.Background(), jobs(t, root, "arm64", "pingd"), opts)
	if !errors.Is(err, recipe.ErrInvalid) || !strings.Contains(err.Error(), "release-date 2027-06-02T00:00:00Z is in the future") {
		t.Fatalf("err = %v, want the future release-date refused", err)
	}
	if d := debs(t, out); len(d) != 0 {
		t.Fatalf("packages left behind: %v", d)
	}
	// Within verify's clock skew it signs, and verifies.
	opts.Source.Now = func() time.Time { return time.Date(2027, 6, 1, 23, 56, 0, 0, time.UTC) }
	if _, err := Run(context.Background(), jobs(t, root, "arm64", "pingd"), opts); err != nil {
		t.Fatal(err)
	}
}

// TestArchitectureAllRecordSameFromEveryArchitecture: an Architecture: all
// package, and its record, are the same whichever architecture's build wrote
// them (build --arch amd64 on one machine, --arch arm64 on another), and the
// record names architecture all.
func TestArchitectureAllRecordSameFromEveryArchitecture(t *testing.T) {
	root, mirror := project(t)
	rp := filepath.Join(root, "recipes", "hello.yaml")
	text, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	text = append(text, "  - name: hello-doc\n    architecture: all\n    summary: documentation of hello\n    description: The guide to hello.\n    section: doc\n    files: [{file: guide.txt, dest: /usr/share/doc/hello-doc/guide.txt}]\n"...)
	if err := os.WriteFile(rp, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "recipes", "hello"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "recipes", "hello", "guide.txt"), []byte("Run hello.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const doc = "hello-doc_1.2.0-1_all.deb"
	var outs []string
	for _, arch := range []string{"amd64", "arm64"} {
		out := filepath.Join(t.TempDir(), arch)
		if _, err := Run(context.Background(), jobs(t, root, arch, "hello"), options(t, mirror, out)); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	for _, f := range []string{doc, doc + ProvenanceSuffix} {
		if sha256File(t, filepath.Join(outs[0], f)) != sha256File(t, filepath.Join(outs[1], f)) {
			t.Errorf("%s differs between the amd64 and the arm64 build", f)
		}
	}
	st, _ := readRecord(t, filepath.Join(outs[1], doc+ProvenanceSuffix))
	if got := st.Predicate.BuildDefinition.ExternalParameters["architecture"]; got != "all" {
		t.Errorf("the record of %s says architecture %v, want all", doc, got)
	}
	if got := st.Predicate.RunDetails.Metadata.InvocationID; got != "hello/1.2.0-1/all" {
		t.Errorf("the record of %s has invocation id %s, want hello/1.2.0-1/all", doc, got)
	}
}
