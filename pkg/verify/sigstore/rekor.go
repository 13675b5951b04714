package sigstore

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"

	"github.com/updeb/updeb/pkg/strictjson"
)

// maxRekorResponse caps a Rekor answer: one hashedrekord entry with its
// inclusion proof is a few kilobytes.
const maxRekorResponse = 1 << 20

// hashedRekord is Rekor's hashedrekord v0.0.1 entry in its canonical form:
// fields in sorted order, as RFC 8785 (JSON canonicalization) orders them, and
// no value needing escapes (hex, base64 and fixed names only), so json.Marshal
// writes exactly the bytes Rekor logs.
type hashedRekord struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Spec       hashedRekordSpec `json:"spec"`
}

type hashedRekordSpec struct {
	Data struct {
		Hash struct {
			Algorithm string `json:"algorithm"`
			Value     string `json:"value"`
		} `json:"hash"`
	} `json:"data"`
	Signature struct {
		Content   string `json:"content"`
		PublicKey struct {
			Content string `json:"content"`
		} `json:"publicKey"`
	} `json:"signature"`
}

// canonicalBody is the body Rekor logged for a cosign signature over an
// artifact with this sha256, made with this certificate: the certificate as
// PEM, the signature and PEM base64-encoded.
func canonicalBody(sha256Hex string, sig []byte, cert *x509.Certificate) []byte {
	e := hashedRekord{APIVersion: "0.0.1", Kind: "hashedrekord"}
	e.Spec.Data.Hash.Algorithm = "sha256"
	e.Spec.Data.Hash.Value = strings.ToLower(sha256Hex)
	e.Spec.Signature.Content = base64.StdEncoding.EncodeToString(sig)
	e.Spec.Signature.PublicKey.Content = base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
	b, err := json.Marshal(e)
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return b
}

// entryUUID is Rekor's name for an entry: the RFC 6962 leaf hash of its body.
func entryUUID(body []byte) string {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// rekorEntry is one entry as Rekor's v1 API serves it (LogEntryAnon).
type rekorEntry struct {
	Body           string `json:"body"`
	IntegratedTime int64  `json:"integratedTime"`
	LogID          string `json:"logID"`
	LogIndex       *int64 `json:"logIndex"`
	Verification   *struct {
		InclusionProof *struct {
			Checkpoint string   `json:"checkpoint"`
			Hashes     []string `json:"hashes"`
			LogIndex   *int64   `json:"logIndex"`
			RootHash   string   `json:"rootHash"`
			TreeSize   *int64   `json:"treeSize"`
		} `json:"inclusionProof"`
		SignedEntryTimestamp string `json:"signedEntryTimestamp"`
	} `json:"verification"`
}

// parseRekorEntries reads a Rekor v1 answer, GET /api/v1/log/entries/{uuid}
// ({"entryID": entry}), into transparency-log entries as bundles carry them.
// Entries are returned in entry ID order.
func parseRekorEntries(b []byte) ([]*protorekor.TransparencyLogEntry, error) {
	var m map[string]json.RawMessage
	if err := strictjson.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a Rekor log entry response (a JSON object of entries): %v", err)
	}
	if len(m) == 0 {
		return nil, errors.New("no entry in the response")
	}
	if len(m) > 16 {
		return nil, fmt.Errorf("%d entries in one response, want one", len(m))
	}
	var out []*protorekor.TransparencyLogEntry
	for _, id := range slices.Sorted(maps.Keys(m)) {
		tle, err := parseRekorEntry(m[id])
		if err != nil {
			return nil, fmt.Errorf("entry %.80s: %w", id, err)
		}
		out = append(out, tle)
	}
	return out, nil
}

func parseRekorEntry(raw json.RawMessage) (*protorekor.TransparencyLogEntry, error) {
	var e rekorEntry
	if err := strictjson.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("not a log entry: %v", err)
	}
	body, err := strictjson.Base64(e.Body)
	if err != nil || len(body) == 0 {
		return nil, errors.New("body is missing or not base64")
	}
	logID, err := hex.DecodeString(e.LogID)
	if err != nil || len(logID) != sha256.Size {
		return nil, fmt.Errorf("logID %.80q is not a hex sha256", e.LogID)
	}
	if e.LogIndex == nil || *e.LogIndex < 0 {
		return nil, errors.New("logIndex is missing or negative")
	}
	if e.IntegratedTime <= 0 {
		return nil, errors.New("integratedTime is missing")
	}
	var kv struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := strictjson.Unmarshal(body, &kv); err != nil || kv.Kind == "" || kv.APIVersion == "" {
		return nil, errors.New("body is not a Rekor entry (kind and apiVersion)")
	}
	tle := &protorekor.TransparencyLogEntry{
		LogIndex:          *e.LogIndex,
		LogId:             &protocommon.LogId{KeyId: logID},
		KindVersion:       &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion},
		IntegratedTime:    e.IntegratedTime,
		CanonicalizedBody: body,
	}
	if e.Verification == nil {
		return nil, errors.New("no verification (signed entry timestamp or inclusion proof)")
	}
	if e.Verification.SignedEntryTimestamp != "" {
		set, err := strictjson.Base64(e.Verification.SignedEntryTimestamp)
		if err != nil {
			return nil, errors.New("signedEntryTimestamp is not base64")
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
	}
	if p := e.Verification.InclusionProof; p != nil {
		if p.LogIndex == nil || p.TreeSize == nil || p.Checkpoint == "" {
			return nil, errors.New("inclusion proof lacks logIndex, treeSize or checkpoint")
		}
		root, err := hex.DecodeString(p.RootHash)
		if err != nil || len(root) != sha256.Size {
			return nil, errors.New("inclusion proof rootHash is not a hex sha256")
		}
		// The proof's logIndex is the entry's index in its shard's tree; the
		// entry's own logIndex (signed by the timestamp) is global.
		proof := &protorekor.InclusionProof{LogIndex: *p.LogIndex, RootHash: root, TreeSize: *p.TreeSize,
			Checkpoint: &protorekor.Checkpoint{Envelope: p.Checkpoint}}
		for _, h := range p.Hashes {
			d, err := hex.DecodeString(h)
			if err != nil || len(d) != sha256.Size {
				return nil, errors.New("inclusion proof hash is not a hex sha256")
			}
			proof.Hashes = append(proof.Hashes, d)
		}
		tle.InclusionProof = proof
	}
	if tle.InclusionPromise == nil && tle.InclusionProof == nil {
		return nil, errors.New("neither a signed entry timestamp nor an inclusion proof")
	}
	return tle, nil
}

// LoggedEntrySHA256 returns the hex sha256 of the entry body in a Rekor v1
// answer (GET /api/v1/log/entries/UUID, one entry): the bytes the log holds,
// whose RFC 6962 leaf hash is the entry's UUID. The answer's own bytes are no
// name for the entry: its inclusion proof is against the log's size when it
// was asked, so the same entry is served otherwise as the log grows.
func LoggedEntrySHA256(answer []byte) (string, error) {
	entries, err := parseRekorEntries(answer)
	if err != nil {
		return "", err
	}
	if len(entries) != 1 {
		return "", fmt.Errorf("%d entries in one response, want one", len(entries))
	}
	sum := sha256.Sum256(entries[0].CanonicalizedBody)
	return hex.EncodeToString(sum[:]), nil
}

// entryURL is where Rekor serves the entry whose body is body.
func (v *Verifier) entryURL(body []byte) string {
	return v.rekor.JoinPath("api/v1/log/entries", entryUUID(body)).String()
}

// lookupRekor fetches the log entry whose body is body. It returns the entry
// URL and the entries served there; a *RefusedError when Rekor has none or
// answers nonsense, a *FetchError when it cannot be asked.
func (v *Verifier) lookupRekor(ctx context.Context, subject string, body []byte) (string, []*protorekor.TransparencyLogEntry, error) {
	u := v.entryURL(body)
	b, status, err := v.get(ctx, subject, u, http.Header{"Accept": {"application/json"}}, maxRekorResponse)
	if err != nil {
		return u, nil, err
	}
	if status == http.StatusNotFound {
		return u, nil, refuse(subject, ReasonNoLogEntry, u,
			"Rekor has no entry for this signature and certificate (HTTP 404): it was never logged, or %s is not the log (or a mirror of the log) it was logged in", v.rekor)
	}
	entries, err := v.parseAnswer(subject, u, b)
	return u, entries, err
}

// parseAnswer reads Rekor's answer at u, refusing one that is too large or
// malformed.
func (v *Verifier) parseAnswer(subject, u string, b []byte) ([]*protorekor.TransparencyLogEntry, error) {
	if len(b) > maxRekorResponse {
		return nil, refuse(subject, ReasonMalformed, u, "response larger than the %d bytes this service ever needs", maxRekorResponse)
	}
	entries, err := parseRekorEntries(b)
	if err != nil {
		return nil, refuse(subject, ReasonMalformed, u, "malformed Rekor response: %v", err)
	}
	return entries, nil
}
