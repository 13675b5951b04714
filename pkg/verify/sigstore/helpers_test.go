package sigstore

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"

	"github.com/updeb/updeb/pkg/digest"
)

// Identities the tests sign with.
const (
	k8sIdentity = "krel-staging@k8s-releng-prod.iam.gserviceaccount.com"
	k8sIssuer   = "https://accounts.google.com"
)

var k8sPolicy = Policy{Identity: k8sIdentity, Issuer: k8sIssuer}

// virtual is sigstore-go's test Sigstore (Fulcio CA, Rekor key, TSA) and a
// trusted root naming exactly its services. It lists no CT log: the test CA's
// certificates carry no SCTs.
type virtual struct {
	t    *testing.T
	vs   *ca.VirtualSigstore
	root *TrustedRoot
}

func newVirtual(t *testing.T) *virtual {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	logs := vs.RekorLogs()
	for id, l := range logs {
		// The test CA sets the ID to the hex string's bytes; a trusted root
		// holds the key ID itself.
		if l.ID, err = hex.DecodeString(id); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, vs.TimestampingAuthorities(), logs)
	if err != nil {
		t.Fatal(err)
	}
	j, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseTrustedRoot("virtual trusted root", j)
	if err != nil {
		t.Fatal(err)
	}
	return &virtual{t: t, vs: vs, root: r}
}

// signed is one cosign keyless signature made by the virtual Sigstore, with
// the pieces of its Rekor entry.
type signed struct {
	artifact       []byte
	digests        digest.Set
	cert           *x509.Certificate
	sig            []byte
	sigFile        []byte // cosign's .sig: base64 of the signature
	certFile       []byte // cosign's .cert: base64 of the PEM certificate
	body           []byte // the entry body as the Rekor server logs it
	integratedTime int64
	logIndex       int64
	logID          string
}

func (v *virtual) sign(identity, issuer string, artifact []byte, at time.Time) *signed {
	v.t.Helper()
	e, err := v.vs.SignAtTime(identity, issuer, artifact, at)
	if err != nil {
		v.t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	entries, _ := e.TlogEntries()
	tle := entries[0].TransparencyLogEntry()
	// The test CA's body is rekor's entry code's output; the Rekor server
	// logs it after RFC 8785 canonicalization (types.CanonicalizeEntry).
	body, err := jsoncanonicalizer.Transform(tle.CanonicalizedBody)
	if err != nil {
		v.t.Fatal(err)
	}
	s := &signed{
		artifact: artifact, digests: digestsOf(artifact),
		cert: vc.Certificate(), sig: sc.Signature(),
		body: body, integratedTime: tle.IntegratedTime, logIndex: tle.LogIndex,
		logID: hex.EncodeToString(tle.LogId.KeyId),
	}
	s.sigFile = []byte(base64.StdEncoding.EncodeToString(s.sig) + "\n")
	s.certFile = []byte(base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cert.Raw})) + "\n")
	return s
}

func (s *signed) detached() Detached {
	return Detached{Signature: s.sigFile, SignatureSource: "https://dl.example/kubectl.sig", Certificate: s.certFile, CertificateSource: "https://dl.example/kubectl.cert"}
}

func digestsOf(b []byte) digest.Set {
	h := digest.NewHasher()
	h.Write(b)
	return h.Sum()
}

// entry is a Rekor v1 API log entry (LogEntryAnon) as JSON fields.
type entry struct {
	body           []byte
	integratedTime int64
	logIndex       int64
	logID          string
	set            []byte // signed entry timestamp; nil: none
	proof          bool   // add an inclusion proof
}

func (s *signed) entry() entry {
	return entry{body: s.body, integratedTime: s.integratedTime, logIndex: s.logIndex, logID: s.logID}
}

// signSET makes the entry's signed entry timestamp with the virtual Rekor key.
func (v *virtual) signSET(e entry) entry {
	v.t.Helper()
	set, err := v.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(e.body), IntegratedTime: e.integratedTime, LogIndex: e.logIndex, LogID: e.logID})
	if err != nil {
		v.t.Fatal(err)
	}
	e.set = set
	return e
}

// answer is Rekor's JSON answer to GET /api/v1/log/entries/{uuid}.
func (v *virtual) answer(e entry) []byte {
	v.t.Helper()
	ver := map[string]any{}
	if e.set != nil {
		ver["signedEntryTimestamp"] = base64.StdEncoding.EncodeToString(e.set)
	}
	if e.proof {
		p, err := v.vs.GetInclusionProof(e.body)
		if err != nil {
			v.t.Fatal(err)
		}
		ver["inclusionProof"] = map[string]any{"checkpoint": *p.Checkpoint, "hashes": p.Hashes, "logIndex": *p.LogIndex, "rootHash": *p.RootHash, "treeSize": *p.TreeSize}
	}
	b, err := json.Marshal(map[string]any{"24296fb24b8ad77a" + entryUUID(e.body): map[string]any{
		"body": base64.StdEncoding.EncodeToString(e.body), "integratedTime": e.integratedTime,
		"logID": e.logID, "logIndex": e.logIndex, "verification": ver,
	}})
	if err != nil {
		v.t.Fatal(err)
	}
	return b
}

// fakeRekor is a Rekor v1 API on 127.0.0.1 serving entries by UUID, or
// whatever handler a test sets.
type fakeRekor struct {
	srv      *httptest.Server
	mu       sync.Mutex
	entries  map[string][]byte
	handler  http.HandlerFunc
	requests int
}

func newFakeRekor(t *testing.T) *fakeRekor {
	f := &fakeRekor{entries: map[string][]byte{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests++
		h := f.handler
		b, ok := f.entries[strings.TrimPrefix(r.URL.Path, "/api/v1/log/entries/")]
		f.mu.Unlock()
		switch {
		case h != nil:
			h(w, r)
		case r.Method != http.MethodGet:
			http.Error(w, "method", http.StatusMethodNotAllowed)
		case !ok:
			http.Error(w, `{"code":404,"message":"entry not found"}`, http.StatusNotFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// serve publishes answer under the UUID of body.
func (f *fakeRekor) serve(body, answer []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries[entryUUID(body)] = answer
}

// handle makes every request go to h.
func (f *fakeRekor) handle(h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

func (f *fakeRekor) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func newVerifier(t *testing.T, tr *TrustedRoot, o Options) *Verifier {
	t.Helper()
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	v, err := New(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// refusedWith checks err is a *RefusedError for reason r whose message names
// every one of want.
func refusedWith(t *testing.T, err error, r Reason, want ...string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("want a refusal (%s), got %v", r, err)
	}
	t.Logf("%s: %v", r, err)
	if !errors.Is(err, ErrRefused) {
		t.Errorf("refusal does not wrap ErrRefused: %v", err)
	}
	if !re.Has(r) {
		t.Errorf("want reason %s, got %v", r, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message does not name %q: %v", w, err)
		}
	}
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadRoot(t testing.TB, name string) *TrustedRoot {
	t.Helper()
	r, err := LoadTrustedRoot(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func goodRoot(t testing.TB) *TrustedRoot {
	t.Helper()
	r, err := PublicGood()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withoutFulcio returns tr with its certificate authorities replaced by
// other's: a root that trusts the same logs but another Fulcio.
func withoutFulcio(t *testing.T, tr, other *TrustedRoot) *TrustedRoot {
	t.Helper()
	return withOthers(t, tr, other, "certificateAuthorities", "root with another Fulcio CA")
}

// withOthers returns tr, named name, with its field (certificateAuthorities,
// ctlogs, ...) replaced by other's.
func withOthers(t *testing.T, tr, other *TrustedRoot, field, name string) *TrustedRoot {
	t.Helper()
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal(tr.JSON(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(other.JSON(), &b); err != nil {
		t.Fatal(err)
	}
	a[field] = b[field]
	j, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseTrustedRoot(name, j)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ctx(t *testing.T) context.Context { return t.Context() }
