package sigstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/digest"
)

var artifact = []byte("kubernetes-server-linux-amd64.tar.gz, or any bytes\n")

// setup signs artifact as Kubernetes does and serves its Rekor entry.
func setup(t *testing.T, proof bool) (*virtual, *signed, *fakeRekor, *Verifier) {
	v := newVirtual(t)
	s := v.sign(k8sIdentity, k8sIssuer, artifact, time.Now().Add(5*time.Minute))
	rk := newFakeRekor(t)
	e := v.signSET(s.entry())
	e.proof = proof
	rk.serve(s.body, v.answer(e))
	return v, s, rk, newVerifier(t, v.root, Options{RekorURL: rk.srv.URL})
}

// The canonical body computed here is byte for byte the one the Rekor server
// logs (rekor's entry code, then RFC 8785), so the entry's UUID is found
// without a search. TestVerifyDetachedRealEntry checks a real server's body.
func TestCanonicalBodyMatchesRekor(t *testing.T) {
	v := newVirtual(t)
	for i := range 5 {
		a := bytes.Repeat([]byte{byte(i)}, i*1000)
		s := v.sign(k8sIdentity, k8sIssuer, a, time.Now().Add(5*time.Minute))
		sum, _ := hex.DecodeString(s.digests[digest.SHA256])
		if got := canonicalBody(hex.EncodeToString(sum), s.sig, s.cert); !bytes.Equal(got, s.body) {
			t.Fatalf("canonical body differs from rekor's:\n got %s\nwant %s", got, s.body)
		}
	}
}

func TestVerifyDetached(t *testing.T) {
	for _, proof := range []bool{false, true} {
		_, s, rk, ver := setup(t, proof)
		res, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
		if err != nil {
			t.Fatalf("proof=%v: %v", proof, err)
		}
		want := rk.srv.URL + "/api/v1/log/entries/" + entryUUID(s.body)
		if res.Shape != ShapeDetached || res.Identity != k8sIdentity || res.Issuer != k8sIssuer ||
			res.LogIndex != s.logIndex || res.LogID != s.logID || res.Source != want ||
			res.IntegratedTime.Unix() != s.integratedTime || res.LogURL != "https://rekor.localhost" {
			t.Errorf("proof=%v: result %+v", proof, res)
		}
		if !strings.Contains(res.TrustedRoot, "virtual trusted root") {
			t.Errorf("TrustedRoot %q", res.TrustedRoot)
		}
		// The kept bundle re-verifies offline.
		again, err := ver.VerifyBundle(ctx(t), k8sPolicy, s.digests, res.Bundle, "kept.sigstore.json")
		if err != nil {
			t.Fatalf("proof=%v: the bundle kept from a detached verification: %v", proof, err)
		}
		if again.LogIndex != s.logIndex || again.Identity != k8sIdentity {
			t.Errorf("re-verified %+v", again)
		}
	}
}

// Plain PEM certificates and wrapped base64 are accepted as well.
func TestVerifyDetachedFileForms(t *testing.T) {
	_, s, _, ver := setup(t, true)
	d := s.detached()
	d.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cert.Raw})
	if _, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, d); err != nil {
		t.Errorf("plain PEM certificate: %v", err)
	}
	d = s.detached()
	c := string(bytes.TrimSpace(d.Certificate))
	d.Certificate = []byte(c[:60] + "\n" + c[60:] + "\r\n")
	if _, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, d); err != nil {
		t.Errorf("wrapped base64: %v", err)
	}
	pol := Policy{IdentityRegexp: `krel-(staging|trust)@k8s-releng-prod\.iam\.gserviceaccount\.com`, Issuer: k8sIssuer}
	if _, err := ver.VerifyDetached(ctx(t), pol, s.digests, s.detached()); err != nil {
		t.Errorf("identity regexp: %v", err)
	}
}

// Refusals decided offline: nothing is asked of Rekor.
func TestVerifyDetachedOfflineRefusals(t *testing.T) {
	_, s, rk, ver := setup(t, true)
	changed := bytes.Clone(s.artifact)
	changed[7] ^= 1
	cases := []struct {
		name     string
		pol      Policy
		digests  digest.Set
		d        func(Detached) Detached
		reason   Reason
		mentions []string
	}{
		{name: "one changed byte of the artifact", pol: k8sPolicy, digests: digestsOf(changed), reason: ReasonDigestMismatch,
			mentions: []string{"kubectl.sig", digestsOf(changed)[digest.SHA256], "altered"}},
		{name: "wrong identity", pol: Policy{Identity: "krel-trust@k8s-releng-prod.iam.gserviceaccount.com", Issuer: k8sIssuer}, reason: ReasonIdentity,
			mentions: []string{"kubectl.cert", k8sIdentity, "krel-trust@"}},
		{name: "identity regexp anchored", pol: Policy{IdentityRegexp: `krel-staging@k8s-releng-prod`, Issuer: k8sIssuer}, reason: ReasonIdentity,
			mentions: []string{"does not match"}},
		{name: "another issuer", pol: Policy{Identity: k8sIdentity, Issuer: "https://token.actions.githubusercontent.com"}, reason: ReasonIssuer,
			mentions: []string{k8sIssuer, "https://token.actions.githubusercontent.com"}},
		{name: "sig and cert swapped", pol: k8sPolicy, d: func(d Detached) Detached { d.Signature, d.Certificate = d.Certificate, d.Signature; return d },
			reason: ReasonMalformed, mentions: []string{"kubectl.sig"}},
		{name: "signature of another file", pol: k8sPolicy, d: func(d Detached) Detached {
			d.Signature = []byte(base64.StdEncoding.EncodeToString(append(bytes.Clone(s.sig[:len(s.sig)-2]), 0, 1)))
			return d
		}, reason: ReasonDigestMismatch},
	}
	for _, c := range cases {
		d := s.detached()
		if c.d != nil {
			d = c.d(d)
		}
		dg := s.digests
		if c.digests != nil {
			dg = c.digests
		}
		_, err := ver.VerifyDetached(ctx(t), c.pol, dg, d)
		t.Run(c.name, func(t *testing.T) { refusedWith(t, err, c.reason, c.mentions...) })
	}
	if n := rk.count(); n != 0 {
		t.Errorf("Rekor was asked %d times for refusals decided offline", n)
	}
}

func TestVerifyDetachedUntrustedFulcio(t *testing.T) {
	v, s, rk, _ := setup(t, true)
	other := newVirtual(t)
	ver := newVerifier(t, withoutFulcio(t, v.root, other.root), Options{RekorURL: rk.srv.URL})
	_, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
	refusedWith(t, err, ReasonUntrustedCertificate, "does not chain", "root with another Fulcio CA")
}

func TestVerifyDetachedEntryOutsideCertificate(t *testing.T) {
	v := newVirtual(t)
	// The certificate is valid for 10 minutes from now; the log says it
	// integrated the entry 30 minutes from now.
	s := v.sign(k8sIdentity, k8sIssuer, artifact, time.Now().Add(30*time.Minute))
	rk := newFakeRekor(t)
	rk.serve(s.body, v.answer(v.signSET(s.entry())))
	ver := newVerifier(t, v.root, Options{RekorURL: rk.srv.URL})
	_, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
	refusedWith(t, err, ReasonCertificateTime, "outside the certificate's validity", rk.srv.URL)
}

// Rekor answers that do not vouch for the signature.
func TestVerifyDetachedBadRekorAnswers(t *testing.T) {
	v, s, rk, ver := setup(t, true)
	uuidURL := rk.srv.URL + "/api/v1/log/entries/" + entryUUID(s.body)
	other := v.sign(k8sIdentity, k8sIssuer, []byte("another artifact"), time.Now().Add(5*time.Minute))
	stranger := newVirtual(t) // a Rekor the trusted root does not list
	tamperedSET := v.signSET(s.entry())
	tamperedSET.set[len(tamperedSET.set)-1] ^= 1
	laterTime := v.signSET(s.entry())
	laterTime.integratedTime++
	otherIndex := v.signSET(s.entry())
	otherIndex.logIndex = 7
	sEntry := stranger.signSET(entry{body: s.body, integratedTime: s.integratedTime, logIndex: s.logIndex, logID: mustLogID(t, stranger)})
	noVerification := s.entry()

	cases := []struct {
		name     string
		answer   []byte
		status   int
		reason   Reason
		mentions []string
	}{
		{"nothing (404)", nil, http.StatusNotFound, ReasonNoLogEntry, []string{uuidURL, "never logged"}},
		{"empty body", []byte{}, 200, ReasonMalformed, []string{uuidURL}},
		{"empty object", []byte("{}"), 200, ReasonMalformed, []string{uuidURL, "no entry"}},
		{"garbage", []byte("<html>proxy error</html>"), 200, ReasonMalformed, []string{uuidURL, "malformed Rekor response"}},
		{"truncated JSON", v.answer(v.signSET(s.entry()))[:100], 200, ReasonMalformed, []string{uuidURL}},
		{"an entry for another artifact", v.answer(v.signSET(other.entry())), 200, ReasonBadLogEntry, []string{uuidURL, "not the one for this signature", other.digests[digest.SHA256]}},
		{"a tampered signed entry timestamp", v.answer(tamperedSET), 200, ReasonBadLogEntry, []string{"signed entry timestamp", "altered"}},
		{"a changed integrated time", v.answer(laterTime), 200, ReasonBadLogEntry, []string{"signed entry timestamp"}},
		{"a changed log index", v.answer(otherIndex), 200, ReasonBadLogEntry, []string{"signed entry timestamp"}},
		{"an entry from a log the root does not list", stranger.answer(sEntry), 200, ReasonBadLogEntry, []string{"does not list", "virtual trusted root"}},
		{"no signed entry timestamp nor proof", v.answer(noVerification), 200, ReasonMalformed, []string{"neither a signed entry timestamp nor an inclusion proof"}},
		{"huge", append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), maxRekorResponse+10)...), 200, ReasonMalformed, []string{uuidURL, "larger"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rk.handle(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				w.Write(c.answer)
			})
			_, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
			refusedWith(t, err, c.reason, c.mentions...)
		})
	}
}

func mustLogID(t *testing.T, v *virtual) string {
	t.Helper()
	id, err := v.vs.RekorLogID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A Rekor that cannot be asked is no refusal: nothing was decided.
func TestVerifyDetachedRekorUnavailable(t *testing.T) {
	_, s, rk, _ := setup(t, true)
	ver := newVerifier(t, newVirtual(t).root, Options{RekorURL: rk.srv.URL, Timeout: 300 * time.Millisecond})
	unavailable := func(t *testing.T, err error, status int, mention string) {
		t.Helper()
		var fe *FetchError
		if !errors.As(err, &fe) || !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrRefused) {
			t.Fatalf("want a *FetchError, got %v", err)
		}
		if fe.Status != status || !strings.Contains(err.Error(), rk.srv.URL) || !strings.Contains(err.Error(), mention) {
			t.Errorf("got %v (status %d), want status %d naming the URL and %q", err, fe.Status, status, mention)
		}
	}
	t.Run("500", func(t *testing.T) {
		rk.handle(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "trillian unavailable", 500) })
		_, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
		unavailable(t, err, 500, "trillian unavailable")
	})
	t.Run("slow headers", func(t *testing.T) {
		rk.handle(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		start := time.Now()
		_, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
		unavailable(t, err, 0, "within 300ms")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %s", d)
		}
	})
	t.Run("slow body", func(t *testing.T) {
		rk.handle(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"24296f`))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		_, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
		unavailable(t, err, 200, "within 300ms")
	})
	t.Run("cut short", func(t *testing.T) {
		rk.handle(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5000")
			w.Write([]byte(`{"24296f`))
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		})
		_, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
		unavailable(t, err, 200, "reading the response")
	})
	t.Run("caller cancels", func(t *testing.T) {
		rk.handle(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		c, cancel := context.WithTimeout(ctx(t), 50*time.Millisecond)
		defer cancel()
		_, err := newVerifier(t, newVirtual(t).root, Options{RekorURL: rk.srv.URL}).VerifyDetached(c, k8sPolicy, s.digests, s.detached())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("want the context's error, got %v", err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close()
		_, err := newVerifier(t, newVirtual(t).root, Options{RekorURL: "http://" + addr}).VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached())
		var fe *FetchError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), addr) {
			t.Errorf("want a *FetchError naming %s, got %v", addr, err)
		}
	})
}

func TestVerifyDetachedCallerMistakes(t *testing.T) {
	_, s, rk, ver := setup(t, true)
	for name, pol := range map[string]Policy{
		"no identity": {Issuer: k8sIssuer},
		"no issuer":   {Identity: k8sIdentity},
		"both forms":  {Identity: k8sIdentity, IdentityRegexp: ".*", Issuer: k8sIssuer},
		"bad regexp":  {IdentityRegexp: "(", Issuer: k8sIssuer},
		// Invalid alone, valid once anchored as ^(?:...)$, and then no longer
		// anchored: it would match any SAN at evil.example.
		"anchor escape":   {IdentityRegexp: `krel-staging@k8s-releng-prod\.iam\.gserviceaccount\.com)|(.*@evil\.example`, Issuer: k8sIssuer},
		"any identity":    {IdentityRegexp: ".*", Issuer: k8sIssuer},
		"any e-mail":      {IdentityRegexp: `^[^@]+@[a-z.]+$`, Issuer: k8sIssuer},
		"any workflow":    {IdentityRegexp: `https://github\.com/.+/release\.yml@refs/tags/.*`, Issuer: k8sIssuer},
		"spaces":          {Identity: " " + k8sIdentity, Issuer: k8sIssuer},
		"only whitespace": {Identity: "  ", Issuer: k8sIssuer},
	} {
		if _, err := ver.VerifyDetached(ctx(t), pol, s.digests, s.detached()); !errors.Is(err, ErrPolicy) {
			t.Errorf("%s: want ErrPolicy, got %v", name, err)
		}
	}
	if _, err := ver.VerifyDetached(ctx(t), k8sPolicy, digest.Set{digest.SHA512: s.digests[digest.SHA512]}, s.detached()); !errors.Is(err, ErrPolicy) {
		t.Errorf("no sha256: want ErrPolicy, got %v", err)
	}
	noClient, err := New(newVirtual(t).root, Options{RekorURL: rk.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noClient.VerifyDetached(ctx(t), k8sPolicy, s.digests, s.detached()); !errors.Is(err, ErrPolicy) {
		t.Errorf("no HTTP client: want ErrPolicy, got %v", err)
	}
	for _, u := range []string{"ftp://rekor", "rekor.sigstore.dev", "https://", "https://x/?q=1"} {
		if _, err := New(newVirtual(t).root, Options{RekorURL: u}); !errors.Is(err, ErrPolicy) {
			t.Errorf("RekorURL %q: want ErrPolicy, got %v", u, err)
		}
	}
	if rk.count() != 0 {
		t.Errorf("Rekor asked %d times for the caller's mistakes", rk.count())
	}
}

// A real Rekor entry (from the scaffolding instance in sigstore-go's test
// data) taken apart into cosign's .sig/.cert files and the Rekor answer.
func TestVerifyDetachedRealEntry(t *testing.T) {
	var b struct {
		VerificationMaterial struct {
			Certificate struct{ RawBytes []byte } `json:"certificate"`
			TlogEntries []struct {
				LogIndex         string                 `json:"logIndex"`
				LogID            struct{ KeyID []byte } `json:"logId"`
				IntegratedTime   string                 `json:"integratedTime"`
				InclusionPromise struct {
					SignedEntryTimestamp []byte `json:"signedEntryTimestamp"`
				} `json:"inclusionPromise"`
				InclusionProof struct {
					LogIndex   string                    `json:"logIndex"`
					RootHash   []byte                    `json:"rootHash"`
					TreeSize   string                    `json:"treeSize"`
					Hashes     [][]byte                  `json:"hashes"`
					Checkpoint struct{ Envelope string } `json:"checkpoint"`
				} `json:"inclusionProof"`
				CanonicalizedBody []byte `json:"canonicalizedBody"`
			} `json:"tlogEntries"`
		} `json:"verificationMaterial"`
		MessageSignature struct {
			MessageDigest struct{ Digest []byte } `json:"messageDigest"`
			Signature     []byte                  `json:"signature"`
		} `json:"messageSignature"`
	}
	if err := json.Unmarshal(readTestdata(t, "othername.sigstore.json"), &b); err != nil {
		t.Fatal(err)
	}
	e := b.VerificationMaterial.TlogEntries[0]
	p := e.InclusionProof
	var hashes []string
	for _, h := range p.Hashes {
		hashes = append(hashes, hex.EncodeToString(h))
	}
	answer, _ := json.Marshal(map[string]any{entryUUID(e.CanonicalizedBody): map[string]any{
		"body": e.CanonicalizedBody, "integratedTime": json.Number(e.IntegratedTime), "logID": hex.EncodeToString(e.LogID.KeyID),
		"logIndex": json.Number(e.LogIndex), "verification": map[string]any{
			"signedEntryTimestamp": e.InclusionPromise.SignedEntryTimestamp,
			"inclusionProof": map[string]any{"logIndex": json.Number(p.LogIndex), "rootHash": hex.EncodeToString(p.RootHash),
				"treeSize": json.Number(p.TreeSize), "hashes": hashes, "checkpoint": p.Checkpoint.Envelope},
		},
	}})
	rk := newFakeRekor(t)
	rk.serve(e.CanonicalizedBody, answer)
	d := Detached{
		Signature:         []byte(base64.StdEncoding.EncodeToString(b.MessageSignature.Signature)),
		SignatureSource:   "othername.sig",
		Certificate:       []byte(base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.VerificationMaterial.Certificate.RawBytes}))),
		CertificateSource: "othername.cert",
	}
	art := digest.Set{digest.SHA256: hex.EncodeToString(b.MessageSignature.MessageDigest.Digest)}
	if art[digest.SHA256] != "bc103b4a84971ef6459b294a2b98568a2bfb72cded09d4acd1e16366a401f95b" {
		t.Fatalf("digest %s", art[digest.SHA256])
	}
	tr := loadRoot(t, "trusted_root_scaffolding.json")
	ver := newVerifier(t, tr, Options{RekorURL: rk.srv.URL})
	pol := Policy{Identity: "foo!oidc.local", Issuer: "http://oidc.local:8080"}
	res, err := ver.VerifyDetached(ctx(t), pol, art, d)
	if err != nil {
		t.Fatal(err)
	}
	if res.Identity != "foo!oidc.local" || res.LogIndex != mustInt(t, e.LogIndex) || res.IntegratedTime.Unix() != mustInt(t, e.IntegratedTime) {
		t.Errorf("result %+v", res)
	}
	_, err = ver.VerifyDetached(ctx(t), Policy{Identity: "foo@oidc.local", Issuer: "http://oidc.local:8080"}, art, d)
	refusedWith(t, err, ReasonIdentity, "foo!oidc.local", "foo@oidc.local")
	changed := strings.Replace(art[digest.SHA256], "bc1", "bc2", 1)
	_, err = ver.VerifyDetached(ctx(t), pol, digest.Set{digest.SHA256: changed}, d)
	refusedWith(t, err, ReasonDigestMismatch, changed)
	_, err = newVerifier(t, withoutFulcio(t, tr, goodRoot(t)), Options{RekorURL: rk.srv.URL}).VerifyDetached(ctx(t), pol, art, d)
	refusedWith(t, err, ReasonUntrustedCertificate)
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n json.Number = json.Number(s)
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func TestParseSignatureFile(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x30}, 70))
	for _, c := range []struct {
		name, in string
		ok       bool
		mention  string
	}{
		{"one line", good + "\n", true, ""},
		{"wrapped", good[:40] + "\r\n" + good[40:], true, ""},
		{"empty", "", false, "empty"},
		{"blank", " \n", false, "empty"},
		{"PEM", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", false, "swapped"},
		{"bundle", `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`, false, "bundle"},
		{"not base64", "this is not base64!", false, "not base64"},
		{"truncated base64", good[:len(good)-3], false, "not base64"},
		{"too short", base64.StdEncoding.EncodeToString([]byte("abc")), false, "not a signature"},
		{"too long", base64.StdEncoding.EncodeToString(make([]byte, maxSignature+1)), false, "not a signature"},
		{"huge", strings.Repeat("A", maxSignatureFile+1), false, "larger than"},
	} {
		_, err := parseSignatureFile([]byte(c.in))
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), c.mention)) {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
}

func TestParseCertificateFile(t *testing.T) {
	v := newVirtual(t)
	s := v.sign(k8sIdentity, k8sIssuer, artifact, time.Now())
	p := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cert.Raw})
	b64 := base64.StdEncoding.EncodeToString(p)
	for _, c := range []struct {
		name    string
		in      []byte
		ok      bool
		mention string
	}{
		{"base64 of PEM", []byte(b64), true, ""},
		{"base64 of PEM, newline", []byte(b64 + "\n"), true, ""},
		{"PEM", p, true, ""},
		{"empty", nil, false, "empty"},
		{"garbage", []byte("garbage!"), false, "neither PEM nor base64"},
		{"base64 of DER", []byte(base64.StdEncoding.EncodeToString(s.cert.Raw)), false, "not to a PEM certificate"},
		{"truncated PEM", p[:len(p)-40], false, "damaged PEM"},
		{"truncated base64", []byte(b64[:len(b64)/2]), false, ""},
		{"chain", append(bytes.Clone(p), p...), false, "one leaf"},
		{"key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1}}), false, "want CERTIFICATE"},
		{"damaged DER", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cert.Raw[:100]}), false, "damaged certificate"},
		{"huge", bytes.Repeat([]byte("A"), maxCertificateFile+1), false, "larger than"},
	} {
		_, err := parseCertificateFile(c.in)
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), c.mention)) {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
}

// A Rekor answer the caller fetched itself is verified like one fetched
// here, and nothing is asked.
func TestVerifyDetachedGivenEntry(t *testing.T) {
	v, s, rk, ver := setup(t, true)
	d := s.detached()
	u, err := ver.RekorEntryURL(k8sPolicy, s.digests, d)
	if want := rk.srv.URL + "/api/v1/log/entries/" + entryUUID(s.body); err != nil || u != want {
		t.Fatalf("RekorEntryURL = %q, %v; want %s", u, err, want)
	}
	d.RekorEntry = v.answer(v.signSET(s.entry()))
	if _, err := ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, d); err != nil {
		t.Fatal(err)
	}
	d.RekorEntry = []byte("<html>captive portal</html>")
	_, err = ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, d)
	refusedWith(t, err, ReasonMalformed, u, "malformed Rekor response")
	d.RekorEntry = bytes.Repeat([]byte("a"), maxRekorResponse+1)
	_, err = ver.VerifyDetached(ctx(t), k8sPolicy, s.digests, d)
	refusedWith(t, err, ReasonMalformed, u, "larger")
	if _, err := ver.RekorEntryURL(Policy{Identity: "x@example.org", Issuer: k8sIssuer}, s.digests, d); !errors.Is(err, ErrRefused) {
		t.Errorf("RekorEntryURL with a wrong identity: %v", err)
	}
	if n := rk.count(); n != 0 {
		t.Errorf("Rekor asked %d times", n)
	}
}
