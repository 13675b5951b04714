package sigstore

import (
	"encoding/json"
	"testing"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/updeb/updeb/pkg/digest"
)

// withoutLogs returns tr without its transparency logs: a private deployment
// that vouches for signing times with a timestamp authority only.
func withoutLogs(t *testing.T, tr *TrustedRoot) *TrustedRoot {
	return editRoot(t, tr, "root without logs", func(a map[string]any) { delete(a, "tlogs") })
}

// editRoot returns tr, named name, as edit changes its JSON.
func editRoot(t *testing.T, tr *TrustedRoot, name string, edit func(map[string]any)) *TrustedRoot {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal(tr.JSON(), &a); err != nil {
		t.Fatal(err)
	}
	edit(a)
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

// The verifier options follow sigstore-go's conformance client
// (test/conformance/main.go): what it accepts is accepted, what it refuses is
// refused, for bundles with and without log entries and RFC 3161 timestamps.
func TestVerifyBundleTimestampPolicy(t *testing.T) {
	v := newVirtual(t)
	art := digestsOf([]byte("cilium-linux-amd64.tar.gz"))
	// Rekor v1: signed entry timestamp and inclusion proof.
	var v1 protobundle.Bundle
	if err := protojson.Unmarshal(v.attest(workflow, actionsIssuer, map[string]digest.Set{"cilium": art}), &v1); err != nil {
		t.Fatal(err)
	}
	entries := v1.VerificationMaterial.TlogEntries
	good, err := v.vs.TimestampResponse(v1.GetDsseEnvelope().Signatures[0].Sig)
	if err != nil {
		t.Fatal(err)
	}
	// An RFC 3161 timestamp over the same signature by a TSA the root does not list.
	other, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.TimestampResponse(v1.GetDsseEnvelope().Signatures[0].Sig)
	if err != nil {
		t.Fatal(err)
	}
	with := func(entries []*protorekor.TransparencyLogEntry, timestamps ...[]byte) []byte {
		b := proto.Clone(&v1).(*protobundle.Bundle)
		b.VerificationMaterial.TlogEntries = entries
		if len(timestamps) > 0 {
			b.VerificationMaterial.TimestampVerificationData = &protobundle.TimestampVerificationData{}
			for _, ts := range timestamps {
				b.VerificationMaterial.TimestampVerificationData.Rfc3161Timestamps = append(b.VerificationMaterial.TimestampVerificationData.Rfc3161Timestamps,
					&protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
			}
		}
		j, err := protojson.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	// Rekor v2: inclusion proof and checkpoint, no time.
	stmt, _ := json.Marshal(map[string]any{"_type": "https://in-toto.io/Statement/v1", "predicateType": "https://slsa.dev/provenance/v1",
		"subject": []any{map[string]any{"name": "cilium", "digest": map[string]string{"sha256": art[digest.SHA256]}}}, "predicate": map[string]any{}})
	v2, err := v.vs.AttestHashedRekordV2(workflow, actionsIssuer, stmt)
	if err != nil {
		t.Fatal(err)
	}
	v2es, _ := v2.TlogEntries()
	v2TLE := []*protorekor.TransparencyLogEntry{v2es[0].TransparencyLogEntry()}
	// Rekor v1 without its signed entry timestamp (inclusionPromise).
	var noSET []*protorekor.TransparencyLogEntry
	for _, e := range entries {
		e = proto.Clone(e).(*protorekor.TransparencyLogEntry)
		e.InclusionPromise = nil
		noSET = append(noSET, e)
	}
	noLogs := withoutLogs(t, v.root)
	// What a refusal for want of a signing time says of the log entries.
	says := map[string]string{
		"nothing, root lists no log":   "carries no log entry",
		"log entry, root lists no log": "its 1 log entry counts for nothing: root without logs lists no transparency log",
		"Rekor v2 entry alone":         "its 1 log entry is a Rekor v2 entry, which carries no signed entry timestamp (SET) by design: the time must come from an RFC 3161 timestamp",
		"Rekor v1 entry without SET":   "its 1 Rekor v1 log entry carries no signed entry timestamp (SET, the entry's inclusionPromise)",
		"Rekor v1 without SET and v2":  "its 1 Rekor v1 log entry carries no signed entry timestamp (SET, the entry's inclusionPromise) and its 1 Rekor v2 entry carries none by design",
	}
	for _, c := range []struct {
		name       string
		bundle     []byte
		root       *TrustedRoot
		reason     Reason // "" accepted
		integrated bool   // the result names the log's integrated time
		stamped    int    // verified RFC 3161 timestamps in the result
		logged     bool   // the result names the log
	}{
		{"log entry with signed entry timestamp", with(entries), v.root, "", true, 0, true},
		{"log entry and a timestamp", with(entries, good), v.root, "", true, 1, true},
		// sigstore-go's client requires the bundle's timestamps to verify when
		// the root lists a TSA; a good log entry does not make up for them.
		{"log entry and a timestamp of a TSA the root does not list", with(entries, foreign), v.root, ReasonNoTimestamp, false, 0, false},
		{"log entry, a foreign and a good timestamp", with(entries, foreign, good), v.root, "", true, 1, true},
		{"timestamp, no log entry, root lists a log", with(nil, good), v.root, ReasonNoLogEntry, false, 0, false},
		{"timestamp, no log entry, root lists no log", with(nil, good), noLogs, "", false, 1, false},
		{"foreign timestamp, no log entry, root lists no log", with(nil, foreign), noLogs, ReasonNoTimestamp, false, 0, false},
		{"nothing, root lists no log", with(nil), noLogs, ReasonNoTimestamp, false, 0, false},
		// A root that lists no log does not vouch for any log's time: the
		// time must come from a timestamp.
		{"log entry, root lists no log", with(entries), noLogs, ReasonNoTimestamp, false, 0, false},
		{"Rekor v2 entry and a timestamp", bundleOf(t, v2, true), v.root, "", false, 1, true},
		{"Rekor v2 entry alone", bundleOf(t, v2, false), v.root, ReasonNoTimestamp, false, 0, false},
		{"Rekor v1 entry without SET", with(noSET), v.root, ReasonNoTimestamp, false, 0, false},
		{"Rekor v1 without SET and v2", with(append(noSET, v2TLE...)), v.root, ReasonNoTimestamp, false, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := newVerifier(t, c.root, Options{}).VerifyBundle(ctx(t), workflowPolicy, art, c.bundle, "cilium.sigstore.json")
			if c.reason != "" {
				refusedWith(t, err, c.reason, "cilium.sigstore.json", says[c.name])
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if res.IntegratedTime.IsZero() == c.integrated || len(res.Timestamps) != c.stamped || (res.LogURL != "") != c.logged {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// An in-toto statement counts only as the statement type it names
// (sigstore-conformance's dsse-statement-unknown-type_fail and
// dsse-statement-missing-type_fail): v1 and v0.1 are read, any other _type,
// or none, is refused even where the subject names the artifact.
func TestVerifyBundleStatementType(t *testing.T) {
	v := newVirtual(t)
	art := digestsOf([]byte("cilium-linux-amd64.tar.gz"))
	subject := []any{map[string]any{"name": "cilium", "digest": map[string]string{"sha256": art[digest.SHA256]}}}
	for _, c := range []struct {
		name   string
		stmt   map[string]any
		reason Reason // "" accepted
		says   string
	}{
		{"v1", map[string]any{"_type": "https://in-toto.io/Statement/v1"}, "", ""},
		{"v0.1", map[string]any{"_type": "https://in-toto.io/Statement/v0.1"}, "", ""},
		{"unknown type", map[string]any{"_type": "https://in-toto.io/Statement/v2"}, ReasonStatementType, `"https://in-toto.io/Statement/v2"`},
		{"no type", map[string]any{}, ReasonStatementType, "names no _type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.stmt["subject"], c.stmt["predicateType"], c.stmt["predicate"] = subject, "https://slsa.dev/provenance/v1", map[string]any{}
			stmt, err := json.Marshal(c.stmt)
			if err != nil {
				t.Fatal(err)
			}
			e, err := v.vs.AttestHashedRekordV2(workflow, actionsIssuer, stmt)
			if err != nil {
				t.Fatal(err)
			}
			_, err = newVerifier(t, v.root, Options{}).VerifyBundle(ctx(t), workflowPolicy, art, bundleOf(t, e, true), "cilium.sigstore.json")
			if c.reason != "" {
				refusedWith(t, err, c.reason, "cilium.sigstore.json", c.says)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// withLogWindow returns tr with its transparency logs' keys valid from
// start to end only (zero end: open).
func withLogWindow(t *testing.T, tr *TrustedRoot, start, end time.Time) *TrustedRoot {
	valid := map[string]any{"start": start.UTC().Format(time.RFC3339)}
	if !end.IsZero() {
		valid["end"] = end.UTC().Format(time.RFC3339)
	}
	return editRoot(t, tr, "root with the log valid "+window(start, end), func(a map[string]any) {
		for _, l := range a["tlogs"].([]any) {
			l.(map[string]any)["publicKey"].(map[string]any)["validFor"] = valid
		}
	})
}

// A log entry without a signed entry timestamp (Rekor v2's, or a Rekor v1
// entry whose SET was taken out) carries no time of its own: the log's key
// must be valid at the signing time the RFC 3161 timestamp vouches for, as
// a signed entry timestamp must lie within it. A log the root retired
// before that time (its key past its end), or trusts only from after it,
// vouches for nothing; sigstore-go checks the window of a SET only.
func TestVerifyBundleLogKeyOutsideValidity(t *testing.T) {
	v := newVirtual(t)
	art := digestsOf([]byte("cilium-linux-amd64.tar.gz"))
	v2 := v.attestV2("cilium", art)
	// Rekor v1 with an inclusion proof, its SET taken out, and a timestamp.
	var v1 protobundle.Bundle
	if err := protojson.Unmarshal(v.attest(workflow, actionsIssuer, map[string]digest.Set{"cilium": art}), &v1); err != nil {
		t.Fatal(err)
	}
	stamp, err := v.vs.TimestampResponse(v1.GetDsseEnvelope().Signatures[0].Sig)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range v1.VerificationMaterial.TlogEntries {
		e.InclusionPromise = nil
	}
	v1.VerificationMaterial.TimestampVerificationData = &protobundle.TimestampVerificationData{
		Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: stamp}}}
	noSET, err := protojson.Marshal(&v1)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	retired := withLogWindow(t, v.root, now.Add(-3*time.Hour), now.Add(-2*time.Hour))
	later := withLogWindow(t, v.root, now.Add(2*time.Hour), time.Time{})
	for _, c := range []struct {
		name   string
		bundle []byte
		root   *TrustedRoot
		says   string // "" accepted
	}{
		{"Rekor v2, log valid", bundleOf(t, v2, true), v.root, ""},
		{"Rekor v2, log retired before", bundleOf(t, v2, true), retired, window(now.Add(-3*time.Hour), now.Add(-2*time.Hour))},
		{"Rekor v2, log valid only later", bundleOf(t, v2, true), later, window(now.Add(2*time.Hour), time.Time{})},
		{"Rekor v1 without SET, log valid", noSET, v.root, ""},
		{"Rekor v1 without SET, log retired before", noSET, retired, window(now.Add(-3*time.Hour), now.Add(-2*time.Hour))},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := newVerifier(t, c.root, Options{}).VerifyBundle(ctx(t), workflowPolicy, art, c.bundle, "cilium.sigstore.json")
			if c.says == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if res.LogURL != "https://rekor.localhost" || len(res.Timestamps) != 1 {
					t.Errorf("result %+v", res)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted with the log's key outside its validity at the signing time: log %s, timestamps %v", res.LogURL, res.Timestamps)
			}
			refusedWith(t, err, ReasonBadLogEntry, "cilium.sigstore.json", "https://rekor.localhost", c.says, "RFC 3161")
		})
	}
}
