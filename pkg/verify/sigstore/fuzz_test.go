package sigstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/updeb/updeb/pkg/digest"
)

func FuzzParseSignatureFile(f *testing.F) {
	f.Add([]byte("MEUCIQDE5tO4PaZvAiEAkuJcU5oZZYglfT/amZagr8cB0ZzuKGJQ8OFJrMugCfw=\n"))
	f.Add([]byte("-----BEGIN CERTIFICATE-----"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sig, err := parseSignatureFile(b)
		if err == nil && (len(sig) < 8 || len(sig) > maxSignature) {
			t.Fatalf("accepted a %d-byte signature", len(sig))
		}
	})
}

func FuzzParseCertificateFile(f *testing.F) {
	for _, s := range []string{"", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := parseCertificateFile(b); err == nil && c == nil {
			t.Fatal("no certificate and no error")
		}
	})
}

func FuzzParseRekorEntries(f *testing.F) {
	f.Add([]byte(`{"x":{"body":"e30=","integratedTime":1,"logID":"c0d23d6ad406973f9559f3ba2d1ca01f84147d8ffc5b8445c224f98b9591801d","logIndex":1,"verification":{"signedEntryTimestamp":"AA=="}}}`))
	f.Add([]byte(`{"x":{"body":"eyJhcGlWZXJzaW9uIjoiMC4wLjEiLCJraW5kIjoiaGFzaGVkcmVrb3JkIn0=","integratedTime":1,"logID":"c0d23d6ad406973f9559f3ba2d1ca01f84147d8ffc5b8445c224f98b9591801d","logIndex":1,"verification":{"inclusionProof":{"checkpoint":"c","hashes":["c0d23d6ad406973f9559f3ba2d1ca01f84147d8ffc5b8445c224f98b9591801d"],"logIndex":0,"rootHash":"c0d23d6ad406973f9559f3ba2d1ca01f84147d8ffc5b8445c224f98b9591801d","treeSize":1}}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := parseRekorEntries(b)
		if err != nil {
			return
		}
		for _, e := range entries {
			if len(e.CanonicalizedBody) == 0 || e.LogId == nil || (e.InclusionPromise == nil && e.InclusionProof == nil) {
				t.Fatalf("accepted an incomplete entry %v", e)
			}
			// What parses must not make the bundle assembly panic.
			_, _ = matchingEntry(entries, e.CanonicalizedBody)
		}
	})
}

// Any bytes given as a bundle are refused or verified, never a panic.
func FuzzVerifyBundle(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	tr, err := PublicGood()
	if err != nil {
		f.Fatal(err)
	}
	v, err := New(tr, Options{})
	if err != nil {
		f.Fatal(err)
	}
	pol := Policy{IdentityRegexp: ".*", Issuer: "https://github.com/login/oauth"}
	art := digest.Set{digest.SHA256: "732112270d7e59418a8c080b134b24cabd67d250d0d0147a97ed95ba5c280aa4"}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := v.VerifyBundle(context.Background(), pol, art, b, "fuzz")
		if err == nil && res.Identity == "" {
			t.Fatal("verified without an identity")
		}
	})
}

func FuzzDecodeBundleBlob(f *testing.F) {
	f.Add([]byte("{}"))
	f.Add([]byte("\xff\x06\x00\x00sNaPpY"))
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x08})
	f.Fuzz(func(t *testing.T, b []byte) {
		if out, err := decodeBundleBlob(b); err == nil && len(out) > maxBundleSize {
			t.Fatalf("decoded %d bytes", len(out))
		}
	})
}

func FuzzParseTrustedRoot(f *testing.F) {
	f.Add(publicGoodJSON)
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ParseTrustedRoot("fuzz", b)
		if err != nil {
			return
		}
		_ = tr.Authorities()
		if _, err := New(tr, Options{}); err != nil {
			t.Fatalf("a root that parses makes no verifier: %v", err)
		}
	})
}
