// Package sigstoretest makes Sigstore test material with sigstore-go's virtual
// Sigstore (pkg/testing/ca): a trusted root naming a throwaway Fulcio CA,
// Rekor log key and timestamping authority; cosign's detached .sig/.cert files
// with the Rekor entry the log would serve for them; Sigstore bundles; GitHub
// attestation bundles; certificates of CI runs that name the repository whose
// run it was (SignRun, BundleRun); and HTTP handlers standing in for Rekor's and GitHub's
// APIs. Everything verifies with package sigstore against TrustedRoot, and
// nothing else trusts it. It is for tests (of updeb and of programs that use
// package sigstore), like net/http/httptest.
//
// Verification never reads the clock, so material made once keeps verifying
// with the trusted root made with it: a test fixture may be committed.
package sigstoretest

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"google.golang.org/protobuf/encoding/protojson"
)

// Sigstore is a virtual Sigstore deployment. It is safe for concurrent use.
type Sigstore struct {
	mu   sync.Mutex
	vs   *ca.VirtualSigstore
	root []byte
	// fulcio is a second Fulcio CA of the trusted root, whose key is at
	// hand: it issues the certificates of CI runs (SignRun), which carry
	// extensions the test CA's lack.
	fulcio    *root.FulcioCertificateAuthority
	fulcioKey *ecdsa.PrivateKey
	// logIndex numbers the entries this log integrates.
	logIndex int64
}

// New makes a virtual Sigstore and its trusted root. The root lists no CT
// log: the test CA's certificates carry no signed certificate timestamps.
func New() (*Sigstore, error) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		return nil, err
	}
	logs := vs.RekorLogs()
	for id, l := range logs {
		// The test CA sets the ID to the hex string's bytes; a trusted root
		// holds the key ID itself.
		if l.ID, err = hex.DecodeString(id); err != nil {
			return nil, err
		}
	}
	rootCert, rootKey, err := ca.GenerateRootCa()
	if err != nil {
		return nil, err
	}
	inter, interKey, err := ca.GenerateFulcioIntermediate(rootCert, rootKey)
	if err != nil {
		return nil, err
	}
	fulcio := &root.FulcioCertificateAuthority{Root: rootCert, Intermediates: []*x509.Certificate{inter}, URI: "https://runs.fulcio.sigstore.dev",
		ValidityPeriodStart: rootCert.NotBefore, ValidityPeriodEnd: rootCert.NotAfter}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, append(vs.FulcioCertificateAuthorities(), fulcio), nil, vs.TimestampingAuthorities(), logs)
	if err != nil {
		return nil, err
	}
	j, err := tr.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return &Sigstore{vs: vs, root: j, logIndex: 1000, fulcio: fulcio, fulcioKey: interKey}, nil
}

// TrustedRoot is the trusted_root.json naming this deployment's services.
func (s *Sigstore) TrustedRoot() []byte { return append([]byte(nil), s.root...) }

// LogID is the hex ID of this deployment's Rekor log.
func (s *Sigstore) LogID() string {
	id, err := s.vs.RekorLogID()
	if err != nil {
		panic(err) // the key is an ECDSA key made by New: it always marshals
	}
	return id
}

// Entry is one entry of the virtual Rekor log.
type Entry struct {
	Body           []byte // the canonicalized body, as the log stores it
	IntegratedTime int64
	LogIndex       int64
	LogID          string // hex
	SET            []byte // the signed entry timestamp
}

// UUID is the entry's name in Rekor's API: the RFC 6962 leaf hash of its body.
func (e *Entry) UUID() string {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(e.Body)
	return hex.EncodeToString(h.Sum(nil))
}

// Path is where Rekor's v1 API serves the entry.
func (e *Entry) Path() string { return "/api/v1/log/entries/" + e.UUID() }

// Answer is Rekor's answer at Path: the entry with its signed entry timestamp
// and an inclusion proof, as GET /api/v1/log/entries/{uuid} returns it.
func (s *Sigstore) Answer(e *Entry) ([]byte, error) {
	p, err := s.vs.GetInclusionProof(e.Body)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"24296fb24b8ad77a" + e.UUID(): map[string]any{
		"body": base64.StdEncoding.EncodeToString(e.Body), "integratedTime": e.IntegratedTime,
		"logID": e.LogID, "logIndex": e.LogIndex,
		"verification": map[string]any{
			"signedEntryTimestamp": base64.StdEncoding.EncodeToString(e.SET),
			"inclusionProof": map[string]any{"checkpoint": *p.Checkpoint, "hashes": p.Hashes, "logIndex": *p.LogIndex,
				"rootHash": *p.RootHash, "treeSize": *p.TreeSize},
		},
	}})
}

// integrate logs body: the next index, and a signed entry timestamp over it.
func (s *Sigstore) integrate(body []byte, at time.Time) (*Entry, error) {
	canon, err := jsoncanonicalizer.Transform(body)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.logIndex++
	e := &Entry{Body: canon, IntegratedTime: at.Unix(), LogIndex: s.logIndex, LogID: s.LogID()}
	s.mu.Unlock()
	e.SET, err = s.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(e.Body),
		IntegratedTime: e.IntegratedTime, LogIndex: e.LogIndex, LogID: e.LogID})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// tlogEntry is e as a bundle carries it, with its inclusion proof.
func (s *Sigstore) tlogEntry(e *Entry, kind string) (*protorekor.TransparencyLogEntry, error) {
	p, err := s.vs.GetInclusionProof(e.Body)
	if err != nil {
		return nil, err
	}
	rootHash, err := hex.DecodeString(*p.RootHash)
	if err != nil {
		return nil, err
	}
	var hashes [][]byte
	for _, h := range p.Hashes {
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, err
		}
		hashes = append(hashes, b)
	}
	logID, err := hex.DecodeString(e.LogID)
	if err != nil {
		return nil, err
	}
	return &protorekor.TransparencyLogEntry{
		LogIndex: e.LogIndex, LogId: &protocommon.LogId{KeyId: logID},
		KindVersion:    &protorekor.KindVersion{Kind: kind, Version: "0.0.1"},
		IntegratedTime: e.IntegratedTime, CanonicalizedBody: e.Body,
		InclusionPromise: &protorekor.InclusionPromise{SignedEntryTimestamp: e.SET},
		InclusionProof: &protorekor.InclusionProof{LogIndex: *p.LogIndex, RootHash: rootHash, TreeSize: *p.TreeSize, Hashes: hashes,
			Checkpoint: &protorekor.Checkpoint{Envelope: *p.Checkpoint}},
	}, nil
}

// log integrates the entry the test CA made for e in this log (with its own
// index and signed entry timestamp) and returns e's certificate and
// signature content with the entry.
func (s *Sigstore) log(e *ca.TestEntity) (*x509.Certificate, sgverify.SignatureContent, *Entry, error) {
	vc, err := e.VerificationContent()
	if err != nil {
		return nil, nil, nil, err
	}
	sc, err := e.SignatureContent()
	if err != nil {
		return nil, nil, nil, err
	}
	entries, err := e.TlogEntries()
	if err != nil {
		return nil, nil, nil, err
	}
	tle := entries[0].TransparencyLogEntry()
	entry, err := s.integrate(tle.CanonicalizedBody, time.Unix(tle.IntegratedTime, 0))
	return vc.Certificate(), sc, entry, err
}

// signingTime is when material made now is logged: inside the ten minutes
// the test CA's leaf certificates are valid (from now).
func signingTime() time.Time { return time.Now().Add(5 * time.Minute) }

// Signature is a cosign keyless signature over an artifact, as cosign
// sign-blob --b64 writes it, and the Rekor entry it was logged as.
type Signature struct {
	Sig   []byte // FILE.sig: base64 of the signature, one line
	Cert  []byte // FILE.cert: base64 of the PEM leaf certificate
	Raw   []byte // the raw signature
	DER   []byte // the leaf certificate
	Entry *Entry
}

// Sign signs artifact as identity (the certificate's SAN, an e-mail address
// or URI) vouched for by the OIDC issuer, and logs it.
func (s *Sigstore) Sign(identity, issuer string, artifact []byte) (*Signature, error) {
	return s.SignAt(identity, issuer, artifact, signingTime())
}

// SignAt is Sign with the log's integrated time given: the certificate is
// valid for ten minutes from now, so a time outside that makes material a
// verifier must refuse.
func (s *Sigstore) SignAt(identity, issuer string, artifact []byte, logged time.Time) (*Signature, error) {
	e, err := s.vs.SignAtTime(identity, issuer, artifact, logged)
	if err != nil {
		return nil, err
	}
	cert, sc, entry, err := s.log(e)
	if err != nil {
		return nil, err
	}
	sig := &Signature{Raw: sc.Signature(), DER: cert.Raw, Entry: entry}
	sig.Sig = []byte(base64.StdEncoding.EncodeToString(sig.Raw) + "\n")
	sig.Cert = []byte(base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sig.DER})) + "\n")
	return sig, nil
}

// Bundle signs artifact as Sign does and returns the Sigstore bundle (v0.3,
// message signature over the sha256, with the log entry's signed entry
// timestamp and inclusion proof), as cosign sign-blob --bundle writes it.
func (s *Sigstore) Bundle(identity, issuer string, artifact []byte) ([]byte, error) {
	sig, err := s.Sign(identity, issuer, artifact)
	if err != nil {
		return nil, err
	}
	return s.bundle(sig, artifact)
}

// bundle is sig, a logged signature over artifact, as a bundle.
func (s *Sigstore) bundle(sig *Signature, artifact []byte) ([]byte, error) {
	tle, err := s.tlogEntry(sig.Entry, "hashedrekord")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(artifact)
	return marshalBundle(&protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:     &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: sig.DER}},
			TlogEntries: []*protorekor.TransparencyLogEntry{tle},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig.Raw,
		}},
	})
}

// KeyBundle signs artifact with key (a long-lived key, no certificate), logs
// it as a hashedrekord entry naming the key, and returns the Sigstore bundle
// (v0.3, message signature over the sha256, the key named by a hint), as
// cosign sign-blob --key --bundle writes it; and the key's public half as PEM,
// which a verifier pins.
func (s *Sigstore) KeyBundle(key *ecdsa.PrivateKey, artifact []byte) (bundle, publicPEM []byte, err error) {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	publicPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	sum := sha256.Sum256(artifact)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		return nil, nil, err
	}
	entry, err := s.integrate(hashedRekord(sum[:], sig, publicPEM), signingTime())
	if err != nil {
		return nil, nil, err
	}
	tle, err := s.tlogEntry(entry, "hashedrekord")
	if err != nil {
		return nil, nil, err
	}
	hint := sha256.Sum256(der)
	bundle, err = marshalBundle(&protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:     &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: base64.StdEncoding.EncodeToString(hint[:])}},
			TlogEntries: []*protorekor.TransparencyLogEntry{tle},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig,
		}},
	})
	return bundle, publicPEM, err
}

// hashedRekord is the body of Rekor's hashedrekord entry for a signature
// over a sha256, by the key or certificate publicPEM (PEM).
func hashedRekord(sum, sig, publicPEM []byte) []byte {
	body, err := json.Marshal(map[string]any{"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": map[string]any{
		"data": map[string]any{"hash": map[string]any{"algorithm": "sha256", "value": hex.EncodeToString(sum)}},
		"signature": map[string]any{"content": base64.StdEncoding.EncodeToString(sig),
			"publicKey": map[string]any{"content": base64.StdEncoding.EncodeToString(publicPEM)}},
	}})
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return body
}

// Run is a CI run's certificate as Fulcio issues one for GitHub Actions: the
// identity is the workflow that signed (a URI), and SourceRepository the
// repository whose run it was (the Source Repository URI extension, OID
// 1.3.6.1.4.1.57264.1.12; "" for none): for a reusable workflow, another
// repository than the workflow's.
type Run struct {
	Workflow, Issuer, SourceRepository string
	// IssuerV2, when set, is the issuer the certificate's v2 extension
	// (OID 1.3.6.1.4.1.57264.1.8) names in place of Issuer, which its v1
	// extension (1.3.6.1.4.1.57264.1.1) names: a certificate at odds with
	// itself, as Fulcio never issues one.
	IssuerV2 string
	// Emails are Subject Alternative Names beside the workflow, as Fulcio
	// never issues (it names one identity).
	Emails []string
	// WorkflowRepository, when set, is the GitHub Workflow Repository
	// extension (OID 1.3.6.1.4.1.57264.1.5, OWNER/REPO as a raw string),
	// which Fulcio wrote before the Source Repository URI (its certificates
	// until 2023 carry it alone).
	WorkflowRepository string
}

// SignRun signs artifact as Sign does, with a certificate for the CI run r.
func (s *Sigstore) SignRun(r Run, artifact []byte) (*Signature, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	san, err := url.Parse(r.Workflow)
	if err != nil {
		return nil, err
	}
	ext := []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}, Value: []byte(r.Issuer)}}
	if r.WorkflowRepository != "" {
		ext = append(ext, pkix.Extension{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 5}, Value: []byte(r.WorkflowRepository)})
	}
	for _, e := range []struct {
		oid   asn1.ObjectIdentifier
		value string
	}{{asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}, cmp.Or(r.IssuerV2, r.Issuer)}, {asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 12}, r.SourceRepository}} {
		if e.value == "" {
			continue
		}
		der, err := asn1.MarshalWithParams(e.value, "utf8")
		if err != nil {
			return nil, err
		}
		ext = append(ext, pkix.Extension{Id: e.oid, Value: der})
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), URIs: []*url.URL{san}, EmailAddresses: r.Emails, NotBefore: now, NotAfter: now.Add(10 * time.Minute),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}, ExtraExtensions: ext}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.fulcio.Intermediates[0], &key.PublicKey, s.fulcioKey)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(artifact)
	raw, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	entry, err := s.integrate(hashedRekord(sum[:], raw, certPEM), signingTime())
	if err != nil {
		return nil, err
	}
	return &Signature{Sig: []byte(base64.StdEncoding.EncodeToString(raw) + "\n"), Cert: []byte(base64.StdEncoding.EncodeToString(certPEM) + "\n"),
		Raw: raw, DER: der, Entry: entry}, nil
}

// BundleRun is Bundle with a certificate for the CI run r.
func (s *Sigstore) BundleRun(r Run, artifact []byte) ([]byte, error) {
	sig, err := s.SignRun(r, artifact)
	if err != nil {
		return nil, err
	}
	return s.bundle(sig, artifact)
}

// Subject is one subject of an in-toto statement: a file name and its
// digests by algorithm ("sha256": hex).
type Subject struct {
	Name   string
	Digest map[string]string
}

// Attestation makes the bundle GitHub's attest-build-provenance action makes:
// a DSSE envelope over an in-toto statement (SLSA provenance v1) naming the
// subjects, signed as identity under issuer, logged as a dsse entry.
func (s *Sigstore) Attestation(identity, issuer string, subjects ...Subject) ([]byte, error) {
	subj := make([]map[string]any, 0, len(subjects))
	for _, x := range subjects {
		subj = append(subj, map[string]any{"name": x.Name, "digest": x.Digest})
	}
	stmt, err := json.Marshal(map[string]any{"_type": "https://in-toto.io/Statement/v1", "subject": subj,
		"predicateType": "https://slsa.dev/provenance/v1", "predicate": map[string]any{"buildDefinition": map[string]any{}}})
	if err != nil {
		return nil, err
	}
	e, err := s.vs.AttestAtTime(identity, issuer, stmt, signingTime(), false)
	if err != nil {
		return nil, err
	}
	cert, sc, logged, err := s.log(e)
	if err != nil {
		return nil, err
	}
	entry, err := s.tlogEntry(logged, "dsse")
	if err != nil {
		return nil, err
	}
	env := sc.EnvelopeContent().RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, err
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		return nil, err
	}
	return marshalBundle(&protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:     &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: cert.Raw}},
			TlogEntries: []*protorekor.TransparencyLogEntry{entry},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType,
			Signatures: []*protodsse.Signature{{Sig: sig}}}},
	})
}

// marshalBundle writes a bundle as cosign does: protojson, then indented so
// that a committed fixture diffs by line.
func marshalBundle(b *protobundle.Bundle) ([]byte, error) {
	j, err := protojson.Marshal(b)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Rekor is an http.Handler serving Rekor's v1 API for entries published with
// Publish: GET /api/v1/log/entries/{uuid}; 404 for any other entry. It counts
// the requests it answered.
type Rekor struct {
	mu       sync.Mutex
	answers  map[string][]byte
	requests int
}

// NewRekor returns a Rekor serving nothing yet.
func NewRekor() *Rekor { return &Rekor{answers: map[string][]byte{}} }

// Publish serves answer (what Sigstore.Answer returns, or anything a test
// wants to serve instead) for the entry whose UUID is uuid.
func (r *Rekor) Publish(uuid string, answer []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[uuid] = answer
}

// Requests is how many requests Rekor answered.
func (r *Rekor) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

func (r *Rekor) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests++
	b, ok := r.answers[strings.TrimPrefix(req.URL.Path, "/api/v1/log/entries/")]
	r.mu.Unlock()
	switch {
	case req.Method != http.MethodGet:
		http.Error(w, `{"code":405,"message":"method not allowed"}`, http.StatusMethodNotAllowed)
	case !strings.HasPrefix(req.URL.Path, "/api/v1/log/entries/") || !ok:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"code":404,"message":"entry not found"}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}
}

// GitHub is an http.Handler serving GitHub's artifact attestations API for
// the bundles added with Add: GET /repos/OWNER/REPO/attestations/sha256:HEX
// answers {"attestations": [{"bundle": ...}, ...]}; 404 when there are none.
type GitHub struct {
	mu       sync.Mutex
	bundles  map[string][][]byte // "OWNER/REPO sha256:HEX" -> bundles
	requests []string
}

// NewGitHub returns a GitHub API holding no attestation yet.
func NewGitHub() *GitHub { return &GitHub{bundles: map[string][][]byte{}} }

// Add publishes bundle as an attestation of repo for the artifact with the
// given sha256 (hex).
func (g *GitHub) Add(repo, sha256Hex string, bundle []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := repo + " sha256:" + strings.ToLower(sha256Hex)
	g.bundles[k] = append(g.bundles[k], bundle)
}

// Set publishes bundles as the attestations of repo for the artifact with
// the given sha256 (hex), in place of those added before, and lists them in
// this order: GitHub's API promises none.
func (g *GitHub) Set(repo, sha256Hex string, bundles ...[]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bundles[repo+" sha256:"+strings.ToLower(sha256Hex)] = bundles
}

// Requests lists the request URIs answered, in order.
func (g *GitHub) Requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.requests...)
}

func (g *GitHub) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	g.mu.Lock()
	g.requests = append(g.requests, req.URL.RequestURI())
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")
	if len(parts) != 5 || parts[0] != "repos" || parts[3] != "attestations" {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`)
		return
	}
	g.mu.Lock()
	bundles := g.bundles[parts[1]+"/"+parts[2]+" "+parts[4]]
	g.mu.Unlock()
	if len(bundles) == 0 {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/users/attestations"}`)
		return
	}
	atts := make([]map[string]any, 0, len(bundles))
	for _, b := range bundles {
		atts = append(atts, map[string]any{"bundle": json.RawMessage(b), "repository_id": 1})
	}
	out, _ := json.Marshal(map[string]any{"attestations": atts})
	w.Write(out)
}
