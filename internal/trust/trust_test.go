package trust

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// The evidence names the log entry that vouched, or, under a trusted root of
// a timestamp authority alone, the verified RFC 3161 timestamp: never a
// Rekor index the material does not have. (Real bundles; SOURCES.md.)
func TestSigstoreEvidence(t *testing.T) {
	testdata := filepath.Join("..", "..", "pkg", "verify", "sigstore", "testdata")
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	publicGood, err := sigstore.PublicGood()
	if err != nil {
		t.Fatal(err)
	}
	tsaOnly, err := sigstore.LoadTrustedRoot(filepath.Join(testdata, "trusted_root_public_key_validity.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := digest.NewHasher()
	h.Write(read("public-key-validity.artifact.txt"))
	for _, c := range []struct {
		root        *sigstore.TrustedRoot
		bundle, key string
		types       []string // the statement's predicate type, where not SLSA provenance
		artifact    digest.Set
		want        string
	}{
		{publicGood, "bundle-publish.json", "publish_key.pub", []string{"https://github.com/npm/attestation/tree/main/specs/publish/v0.1"},
			digest.Set{digest.SHA512: "76176ffa33808b54602c7c35de5c6e9a4deb96066dba6533f50ac234f4f1f4c6b3527515dc17c06fbe2860030f410eee69ea20079bd3a2c6f3dcf3b329b10751"},
			"sigstore:public-key=SHA256:HpCKVUWf5t2sHMvBN+qGMe6DcDL+wqLMxSizjYHxcQg= rekor=18300940"},
		{tsaOnly, "public-key-validity.sigstore.json", "public-key-validity.pem", nil, h.Sum(),
			"sigstore:public-key=SHA256:IpekKjxVkmTfB4YqY8q5sGEAeVtF9x3m7jHdhAxpgjQ= timestamp=2026-06-04T17:43:29Z"},
	} {
		v, err := sigstore.New(c.root, sigstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := v.VerifyBundle(context.Background(), sigstore.Policy{PublicKey: read(c.key), PredicateTypes: c.types}, c.artifact, read(c.bundle), c.bundle)
		if err != nil {
			t.Fatal(err)
		}
		if got := SigstoreEvidence(res); got != c.want {
			t.Errorf("%s: evidence %q, want %q", c.bundle, got, c.want)
		}
	}
}

// A source's signature is checked over the whole file, which may be
// gigabytes: the reading stops at once when the build's context is done (a
// signal), with the context's error, which the command maps to exit 130,
// instead of hashing on to the end of the file first.
func TestVerifySignatureStopsWithContext(t *testing.T) {
	f := pgptest.Get(t)
	s := &recipe.ResolvedSignature{KeyringPath: f.Keyring}
	if _, err := VerifySignature(context.Background(), f.Data, f.Path("ed.asc"), s, time.Now()); err != nil {
		t.Fatalf("good signature refused: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := VerifySignature(ctx, f.Data, f.Path("ed.asc"), s, time.Now())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("with the context done: %v, %v; want context.Canceled", res, err)
	}
}
