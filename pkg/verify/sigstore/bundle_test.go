package sigstore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/updeb/updeb/pkg/digest"
)

const (
	sigstoreJSRelease = "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main"
	actionsIssuer     = "https://token.actions.githubusercontent.com"
	githubOAuth       = "https://github.com/login/oauth"
)

// realBundle is one real bundle from testdata/ and what it must verify for
// (testdata/README.md; ../../../../shared/upstream/sigstore/SOURCES.md).
type realBundle struct {
	file     string
	root     string // testdata trusted root; "" for the bundled public-good one
	alg      digest.Algorithm
	digest   string
	identity string
	issuer   string
	logIndex int64
	// predicateType is the statement's predicate type where it is not SLSA
	// provenance.
	predicateType string
}

var realBundles = []realBundle{
	{"bundle-provenance.json", "", digest.SHA512, "76176ffa33808b54602c7c35de5c6e9a4deb96066dba6533f50ac234f4f1f4c6b3527515dc17c06fbe2860030f410eee69ea20079bd3a2c6f3dcf3b329b10751", sigstoreJSRelease, actionsIssuer, -1, ""},
	{"sigstore.js@2.0.0-provenance.sigstore.json", "", digest.SHA512, "46d4e2f74c4877316640000a6fdf8a8b59f1e0847667973e9859f774dd31b8f1e0937813b777fb66a2ac67d50540fe34640966eee9fc2ccca387082b4c85cd3c", sigstoreJSRelease, actionsIssuer, -1, ""},
	{"dsse.sigstore.json", "", digest.SHA512, "bbfd372fc9beeb777fe35d05bb10c0c70a9733d366a75fed7dd18866c7391de3ee7e88ba74dd47abf3e15c845e547fcf0e5c3da80854c751554224d3a6d4e55f", "brian@dehamer.com", githubOAuth, -1, ""},
	{"oci-attestation.sigstore.json", "", digest.SHA256, "732112270d7e59418a8c080b134b24cabd67d250d0d0147a97ed95ba5c280aa4", "cody@soyland.com", githubOAuth, 175508996, "https://cosign.sigstore.dev/attestation/v1"},
	{"othername.sigstore.json", "trusted_root_scaffolding.json", digest.SHA256, "bc103b4a84971ef6459b294a2b98568a2bfb72cded09d4acd1e16366a401f95b", "foo!oidc.local", "http://oidc.local:8080", -1, ""},
}

func (c realBundle) trustedRoot(t *testing.T) *TrustedRoot {
	if c.root == "" {
		return goodRoot(t)
	}
	return loadRoot(t, c.root)
}

// policy names the bundle's signer, and the predicate type of its
// statement where that is not SLSA provenance (cosign's attestation type).
func (c realBundle) policy() Policy {
	p := Policy{Identity: c.identity, Issuer: c.issuer}
	if c.predicateType != "" {
		p.PredicateTypes = []string{c.predicateType}
	}
	return p
}

func (c realBundle) digests() digest.Set { return digest.Set{c.alg: c.digest} }

// flipDigit changes one hex digit of a digest: one changed byte of the artifact
// changes its digest.
func flipDigit(h string) string {
	b := []byte(h)
	if b[10] == '0' {
		b[10] = '1'
	} else {
		b[10] = '0'
	}
	return string(b)
}

func TestVerifyRealBundles(t *testing.T) {
	for _, c := range realBundles {
		t.Run(c.file, func(t *testing.T) {
			tr := c.trustedRoot(t)
			ver := newVerifier(t, tr, Options{})
			b := readTestdata(t, c.file)
			res, err := ver.VerifyBundle(ctx(t), c.policy(), c.digests(), b, c.file)
			if err != nil {
				t.Fatalf("valid bundle refused: %v", err)
			}
			if res.Shape != ShapeBundle || res.Identity != c.identity || res.Issuer != c.issuer || res.Source != c.file ||
				res.LogID == "" || res.IntegratedTime.IsZero() || !bytes.Equal(res.Bundle, b) {
				t.Errorf("result %+v", res)
			}
			if c.logIndex >= 0 && res.LogIndex != c.logIndex {
				t.Errorf("log index %d, want %d", res.LogIndex, c.logIndex)
			}
			if c.root == "" && res.LogURL != "https://rekor.sigstore.dev" {
				t.Errorf("log URL %q", res.LogURL)
			}

			// Both digests at hand (the app computes sha256 and sha512): still fine.
			both := c.digests()
			other := digest.SHA256
			if c.alg == digest.SHA256 {
				other = digest.SHA512
			}
			both[other] = strings.Repeat("0", other.Size()*2)
			if _, err := ver.VerifyBundle(ctx(t), c.policy(), both, b, c.file); err != nil {
				t.Errorf("with an unrelated %s beside: %v", other, err)
			}

			_, err = ver.VerifyBundle(ctx(t), c.policy(), digest.Set{c.alg: flipDigit(c.digest)}, b, c.file)
			refusedWith(t, err, ReasonDigestMismatch, c.file, flipDigit(c.digest))

			wrong := c.policy()
			wrong.Identity = "someone-else@example.com"
			_, err = ver.VerifyBundle(ctx(t), wrong, c.digests(), b, c.file)
			refusedWith(t, err, ReasonIdentity, c.identity, "someone-else@example.com")

			wrongRE := c.policy()
			wrongRE.Identity, wrongRE.IdentityRegexp = "", regexp.QuoteMeta(strings.ToUpper(c.identity))
			_, err = ver.VerifyBundle(ctx(t), wrongRE, c.digests(), b, c.file)
			refusedWith(t, err, ReasonIdentity)

			iss := c.policy()
			iss.Issuer = "https://accounts.google.com"
			_, err = ver.VerifyBundle(ctx(t), iss, c.digests(), b, c.file)
			refusedWith(t, err, ReasonIssuer, c.issuer)

			otherCA := loadRoot(t, "trusted_root_scaffolding.json")
			if c.root != "" {
				otherCA = goodRoot(t)
			}
			_, err = newVerifier(t, withoutFulcio(t, tr, otherCA), Options{}).VerifyBundle(ctx(t), c.policy(), c.digests(), b, c.file)
			refusedWith(t, err, ReasonUntrustedCertificate, "does not chain")
		})
	}
}

// The regexp form matches the whole SAN.
func TestVerifyBundleIdentityRegexp(t *testing.T) {
	c := realBundles[0]
	ver := newVerifier(t, goodRoot(t), Options{})
	b := readTestdata(t, c.file)
	for re, ok := range map[string]bool{
		`https://github\.com/sigstore/sigstore-js/\.github/workflows/release\.yml@refs/heads/.*`: true,
		`^https://github\.com/sigstore/.*@refs/heads/main$`:                                      true,
		`https://github\.com/sigstore/sigstore-js`:                                               false, // a prefix is not a match
		`https://github\.com/sigstore/sigstore-js/.*release\.yml`:                                false, // no ref
	} {
		_, err := ver.VerifyBundle(ctx(t), Policy{IdentityRegexp: re, Issuer: actionsIssuer}, c.digests(), b, c.file)
		if ok && err != nil {
			t.Errorf("%s: %v", re, err)
		}
		if !ok {
			refusedWith(t, err, ReasonIdentity, "does not match")
		}
	}
}

// Under a CI issuer an identity regexp whose repository owner is a wildcard
// accepts a workflow of a repository anybody may create: refused, whatever
// workflow file or ref it names, as the sample identities of anyone miss
// most of them. Under other issuers, and with the owner written out, the
// same shapes are policies.
func TestIdentityRegexpAnyonesRepository(t *testing.T) {
	const gitlab = "https://gitlab.com"
	const buildkite = "https://agent.buildkite.com"
	for _, c := range []struct {
		re, issuer string
		ok         bool
	}{
		{`^https://github\.com/.*/\.github/workflows/release\.yaml@refs/tags/v.*$`, actionsIssuer, false},
		{`^https://github\.com/[^/]+/cilium-cli/\.github/workflows/release\.yaml@refs/tags/v.*$`, actionsIssuer, false},
		{`^https://github\.com/\w+/cilium-cli/.*$`, actionsIssuer, false},
		{`^https://github\.com/(cilium|[a-z]+)/cilium-cli/.*$`, actionsIssuer, false},
		{`^https://github\.com/.+/\.github/workflows/build\.yml@refs/heads/main$`, actionsIssuer, false},
		{`^https://github\.com/(?i:CILIUM|.+)/cilium-cli/.*$`, actionsIssuer + "/enterprise", false},
		{`^https://gitlab\.com/.*/-/ci@refs/tags/v.*$`, gitlab, false},
		// The owner written out only in part: containerd-attacker is
		// anybody's to register.
		{`^https://github\.com/containerd.*/containerd/\.github/workflows/release\.yml@refs/tags/v.*$`, actionsIssuer, false},
		{`^https://github\.com/containerd[^/]*/containerd/.*$`, actionsIssuer, false},
		{`^https://github\.com/cilium-?[a-z]*/cilium-cli/.*$`, actionsIssuer, false},
		{`^https://gitlab\.com/example.*/tool/.*$`, gitlab, false},
		// A Buildkite pipeline's organization: anybody's to sign up.
		{`^https://buildkite\.com/.*/release$`, buildkite, false},
		{`^https://buildkite\.com/[a-z-]+/release$`, buildkite, false},
		{`^https://buildkite\.com/example.*/release$`, buildkite, false},
		// The same, the owner hidden from a look at the regexp's literal
		// text: in a group, ignoring case, or open by a class or an
		// optional rune rather than a repetition.
		{`(?i)^https://github\.com/containerd.*/containerd/\.github/workflows/release\.yml@refs/tags/v.*$`, actionsIssuer, false},
		{`^https://github\.com/(containerd).*/containerd/.*$`, actionsIssuer, false},
		{`^https://github\.com/(?:containerd|moby).*/containerd/.*$`, actionsIssuer, false},
		{`^https://github\.com/containerd\d/containerd/.*$`, actionsIssuer, false},
		{`^https://github\.com/containerd.?/containerd/.*$`, actionsIssuer, false},
		{`^https://github\.com/.{10}/containerd/.*$`, actionsIssuer, false},

		{`^https://github\.com/cilium/cilium-cli/\.github/workflows/release\.yaml@refs/tags/v.*$`, actionsIssuer, true},
		{`https://github\.com/sigstore/sigstore-js/\.github/workflows/release\.yml@refs/heads/.*`, actionsIssuer, true},
		{`^https://github\.com/containerd/containerd/\.github/workflows/release\.yml@refs/tags/v[0-9]+\.[0-9]+\.[0-9]+.*$`, actionsIssuer, true},
		{`^https://github\.com/sigstore/.*@refs/tags/v.*$`, actionsIssuer, true},
		{`(?i)^https://github\.com/Cilium/cilium-cli/.*@refs/tags/v.*$`, actionsIssuer, true},
		{`^https://github\.com/(cilium|isovalent)/cilium-cli/.*@refs/tags/v.*$`, actionsIssuer, true},
		{`^https://github\.com/[Cc]ilium/cilium-cli/.*@refs/tags/v.*$`, actionsIssuer, true},
		{`^https://github\.com/(containerd|moby)/containerd/.*@refs/tags/v.*$`, actionsIssuer, true},
		{`^https://gitlab\.com/example/tool//\.gitlab-ci\.yml@refs/tags/v.*$`, gitlab, true},
		{`^https://buildkite\.com/example/release$`, buildkite, true},
		{`^https://buildkite\.com/example/.*$`, buildkite, true},
		{`^.*@k8s-releng-prod\.iam\.gserviceaccount\.com$`, k8sIssuer, true},
		{`^krel-(staging|trust)@k8s-releng-prod\.iam\.gserviceaccount\.com$`, k8sIssuer, true},
	} {
		err := Policy{IdentityRegexp: c.re, Issuer: c.issuer}.Validate()
		switch {
		case c.ok && err != nil:
			t.Errorf("%s under %s: %v", c.re, c.issuer, err)
		case !c.ok && !errors.Is(err, ErrPolicy):
			t.Errorf("%s under %s: accepted, want ErrPolicy", c.re, c.issuer)
		case !c.ok && !strings.Contains(err.Error(), "anyone's repositories"):
			t.Errorf("%s under %s: %v", c.re, c.issuer, err)
		}
	}
}

func TestVerifyBundleRefusals(t *testing.T) {
	good := goodRoot(t)
	ver := newVerifier(t, good, Options{})
	sha512 := digest.Set{digest.SHA512: "bbfd372fc9beeb777fe35d05bb10c0c70a9733d366a75fed7dd18866c7391de3ee7e88ba74dd47abf3e15c845e547fcf0e5c3da80854c751554224d3a6d4e55f"}
	npm := digest.Set{digest.SHA512: realBundles[0].digest}

	// Tamper with a real bundle's fields.
	edit := func(file string, f func(map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(readTestdata(t, file), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	tlogEntry := func(m map[string]any) map[string]any {
		return m["verificationMaterial"].(map[string]any)["tlogEntries"].([]any)[0].(map[string]any)
	}
	flipB64 := func(s string) string {
		b, _ := base64.StdEncoding.DecodeString(s)
		b[len(b)/2] ^= 1
		return base64.StdEncoding.EncodeToString(b)
	}

	cases := []struct {
		name     string
		bundle   []byte
		pol      Policy
		digests  digest.Set
		reason   Reason
		mentions []string
	}{
		{"two DSSE signatures", readTestdata(t, "dsse-2sigs.sigstore.json"), Policy{Identity: "brian@dehamer.com", Issuer: githubOAuth}, sha512, ReasonUnsupported, []string{"2 signatures"}},
		{"key-signed (npm registry key)", readTestdata(t, "bundle-publish.json"), Policy{Identity: "x", Issuer: "y"}, npm, ReasonIdentity, []string{"public key"}},
		{"key-signed, TSA only", readTestdata(t, "public-key-validity.sigstore.json"), Policy{Identity: "x", Issuer: "y"},
			digest.Set{digest.SHA256: "6a8ba75555209fd6c44157c0aed8016e763ff435a19cf186f76863140143ff72"}, ReasonIdentity, []string{"public key"}},
		{"the log entry's time changed", edit("dsse.sigstore.json", func(m map[string]any) { tlogEntry(m)["integratedTime"] = "1661794800" }),
			Policy{Identity: "brian@dehamer.com", Issuer: githubOAuth}, sha512, ReasonBadLogEntry, []string{"signed entry timestamp", "https://rekor.sigstore.dev"}},
		{"the signed entry timestamp changed", edit("oci-attestation.sigstore.json", func(m map[string]any) {
			p := tlogEntry(m)["inclusionPromise"].(map[string]any)
			p["signedEntryTimestamp"] = flipB64(p["signedEntryTimestamp"].(string))
		}), Policy{Identity: "cody@soyland.com", Issuer: githubOAuth}, digest.Set{digest.SHA256: realBundles[3].digest}, ReasonBadLogEntry, []string{"signed entry timestamp"}},
		{"the inclusion proof changed", edit("oci-attestation.sigstore.json", func(m map[string]any) {
			p := tlogEntry(m)["inclusionProof"].(map[string]any)
			p["rootHash"] = flipB64(p["rootHash"].(string))
		}), Policy{Identity: "cody@soyland.com", Issuer: githubOAuth}, digest.Set{digest.SHA256: realBundles[3].digest}, ReasonBadLogEntry, nil},
		{"the envelope's signature changed", edit("oci-attestation.sigstore.json", func(m map[string]any) {
			s := m["dsseEnvelope"].(map[string]any)["signatures"].([]any)[0].(map[string]any)
			s["sig"] = flipB64(s["sig"].(string))
		}), Policy{Identity: "cody@soyland.com", Issuer: githubOAuth}, digest.Set{digest.SHA256: realBundles[3].digest}, ReasonBadLogEntry, []string{"does not match"}},
		{"no signed entry timestamp", edit("oci-attestation.sigstore.json", func(m map[string]any) { delete(tlogEntry(m), "inclusionPromise") }),
			Policy{Identity: "cody@soyland.com", Issuer: githubOAuth}, digest.Set{digest.SHA256: realBundles[3].digest}, ReasonNoTimestamp,
			[]string{"carries 0 RFC 3161 timestamps and", "lists 1 timestamp authority, and its 1 Rekor v1 log entry carries no signed entry timestamp (SET, the entry's inclusionPromise)", "RFC 3161 timestamp"}},
		{"no log entry", edit("oci-attestation.sigstore.json", func(m map[string]any) {
			m["verificationMaterial"].(map[string]any)["tlogEntries"] = []any{}
		}), Policy{Identity: "cody@soyland.com", Issuer: githubOAuth}, digest.Set{digest.SHA256: realBundles[3].digest}, ReasonNoLogEntry, []string{"no transparency-log entry"}},
		{"digest algorithm not at hand", readTestdata(t, "othername.sigstore.json"), Policy{Identity: "foo!oidc.local", Issuer: "http://oidc.local:8080"},
			digest.Set{digest.SHA512: strings.Repeat("0", 128)}, ReasonUnsupported, []string{"SHA2_256"}},
		{"bundle v0.4", edit("oci-attestation.sigstore.json", func(m map[string]any) { m["mediaType"] = "application/vnd.dev.sigstore.bundle.v0.4+json" }),
			Policy{Identity: "cody@soyland.com", Issuer: githubOAuth}, digest.Set{digest.SHA256: realBundles[3].digest}, ReasonUnsupported, []string{"v0.4"}},
		{"unknown media type", edit("oci-attestation.sigstore.json", func(m map[string]any) { m["mediaType"] = "application/json" }),
			Policy{Identity: "cody@soyland.com", Issuer: githubOAuth}, digest.Set{digest.SHA256: realBundles[3].digest}, ReasonUnsupported, nil},
		{"cosign's own bundle format", []byte(`{"base64Signature": "MEUCIQ==", "cert": "LS0tLS1CRUdJTg==", "rekorBundle": {"SignedEntryTimestamp": "MEUC", "Payload": {"body": "e30=", "integratedTime": 1700000000, "logIndex": 1, "logID": "c0d2"}}}`),
			Policy{Identity: "x", Issuer: "y"}, npm, ReasonUnsupported, []string{"cosign's own bundle format", "--sig and --cert", "--new-bundle-format"}},
		{"empty", nil, Policy{Identity: "x", Issuer: "y"}, npm, ReasonMalformed, []string{"empty"}},
		{"not JSON", []byte("-----BEGIN CERTIFICATE-----"), Policy{Identity: "x", Issuer: "y"}, npm, ReasonMalformed, nil},
		{"truncated", readTestdata(t, "dsse.sigstore.json")[:4000], Policy{Identity: "x", Issuer: "y"}, npm, ReasonMalformed, nil},
		{"huge", append([]byte(`{"mediaType":"`), bytes.Repeat([]byte("a"), maxBundleSize)...), Policy{Identity: "x", Issuer: "y"}, npm, ReasonMalformed, []string{"larger than"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ver.VerifyBundle(ctx(t), c.pol, c.digests, c.bundle, "upstream.sigstore.json")
			refusedWith(t, err, c.reason, append(c.mentions, "upstream.sigstore.json")...)
		})
	}
}

// Every public-good bundle verifies with every public-good root of the
// shared material (the production root-signing snapshot bundled here, the
// 2023 root of sigstore-go's examples, which is byte for byte its unit tests'
// public-good.json, and cosign's trusted_root_pgi.json: the same Rekor v1
// log and Fulcio CAs), and with none of them once that Fulcio is gone; and
// with a private instance's root not at all.
func TestVerifyBundleOtherRoots(t *testing.T) {
	roots := map[string]*TrustedRoot{
		"bundled production":                 goodRoot(t),
		"trusted_root_public_good_2023.json": loadRoot(t, "trusted_root_public_good_2023.json"),
		"trusted_root_pgi.json":              loadRoot(t, "trusted_root_pgi.json"),
	}
	private := loadRoot(t, "trusted_root_scaffolding.json")
	for _, c := range realBundles {
		if c.root != "" {
			continue
		}
		b := readTestdata(t, c.file)
		for name, tr := range roots {
			t.Run(c.file+"/"+name, func(t *testing.T) {
				res, err := newVerifier(t, tr, Options{}).VerifyBundle(ctx(t), c.policy(), c.digests(), b, c.file)
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if res.Identity != c.identity || res.LogURL != "https://rekor.sigstore.dev" {
					t.Errorf("result %+v", res)
				}
				_, err = newVerifier(t, withoutFulcio(t, tr, private), Options{}).VerifyBundle(ctx(t), c.policy(), c.digests(), b, c.file)
				refusedWith(t, err, ReasonUntrustedCertificate, "does not chain")
			})
		}
		_, err := newVerifier(t, private, Options{}).VerifyBundle(ctx(t), c.policy(), c.digests(), b, c.file)
		refusedWith(t, err, ReasonBadLogEntry, "does not list")
	}
}

// A root that trusts the log only for a window the entry lies outside (a
// retired log's key, a root too old or too new) refuses the entry for that
// reason: its signed entry timestamp was not altered, and the message says
// when it was integrated and what window the root gives.
func TestVerifyBundleLogValidity(t *testing.T) {
	c := realBundles[1] // integrated 2023-08-18 16:05:35 UTC
	b := readTestdata(t, c.file)
	for _, tc := range []struct {
		validFor map[string]any
		window   string
	}{
		{map[string]any{"start": "2021-01-12T11:53:27Z", "end": "2022-01-01T00:00:00Z"}, "2021-01-12 11:53:27 UTC to 2022-01-01 00:00:00 UTC"},
		{map[string]any{"start": "2024-01-01T00:00:00Z"}, "2024-01-01 00:00:00 UTC to no end"},
	} {
		var m map[string]any
		if err := json.Unmarshal(goodRoot(t).JSON(), &m); err != nil {
			t.Fatal(err)
		}
		for _, l := range m["tlogs"].([]any) {
			l.(map[string]any)["publicKey"].(map[string]any)["validFor"] = tc.validFor
		}
		j, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := ParseTrustedRoot("root with log window "+tc.window, j)
		if err != nil {
			t.Fatal(err)
		}
		_, err = newVerifier(t, tr, Options{}).VerifyBundle(ctx(t), c.policy(), c.digests(), b, c.file)
		refusedWith(t, err, ReasonBadLogEntry, "integrated at 2023-08-18 16:05:35 UTC", "outside the validity", tc.window, "https://rekor.sigstore.dev")
		if strings.Contains(err.Error(), "altered") {
			t.Errorf("an entry outside the log's window is not an altered one: %v", err)
		}
	}
}

// The private instance's bundle names its signer by an otherName SAN,
// foo!oidc.local: the e-mail address foo@oidc.local is another identity
// (sigstore-go's TestEntityWithOthernameSan), and the public-good root does
// not know its log.
func TestVerifyBundleOtherName(t *testing.T) {
	c := realBundles[4]
	b := readTestdata(t, c.file)
	ver := newVerifier(t, c.trustedRoot(t), Options{})
	for _, id := range []string{"foo@oidc.local", "foo", "foo!oidc.local.attacker"} {
		p := c.policy()
		p.Identity = id
		_, err := ver.VerifyBundle(ctx(t), p, c.digests(), b, c.file)
		refusedWith(t, err, ReasonIdentity, c.identity, id)
	}
	_, err := newVerifier(t, goodRoot(t), Options{}).VerifyBundle(ctx(t), c.policy(), c.digests(), b, c.file)
	refusedWith(t, err, ReasonBadLogEntry, "does not list")
}

// TestBundleStatementOneReading: the in-toto statement a DSSE bundle signs
// is refused, as malformed and before any signature is checked, when JSON
// readers could read it differently (sigstore-go reads it with
// encoding/json: the last of a key given twice wins, keys match in any
// case): a subject given twice, "subject" beside "Subject", data after it.
func TestBundleStatementOneReading(t *testing.T) {
	data := readTestdata(t, "dsse.sigstore.json")
	var b map[string]any
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	env := b["dsseEnvelope"].(map[string]any)
	payload, err := base64.StdEncoding.DecodeString(env["payload"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if _, r := parseBundle(data); r != nil {
		t.Fatalf("the bundle as it is: %v", r)
	}
	other := `[{"name": "evil.tgz", "digest": {"sha512": "` + strings.Repeat("0", 128) + `"}}]`
	for name, tc := range map[string]struct{ payload, want string }{
		"subject twice":        {strings.Replace(string(payload), `"subject":`, `"subject": `+other+`, "subject":`, 1), `key "subject" given twice`},
		"subject and Subject":  {strings.Replace(string(payload), `"subject":`, `"Subject": `+other+`, "subject":`, 1), `differ only in case`},
		"data after statement": {string(payload) + "]", "data after the JSON value"},
	} {
		env["payload"] = base64.StdEncoding.EncodeToString([]byte(tc.payload))
		changed, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		_, r := parseBundle(changed)
		if r == nil || r.Reason != ReasonMalformed || !strings.Contains(r.Detail, tc.want) {
			t.Errorf("%s: %v, want a malformed bundle saying %q", name, r, tc.want)
		}
	}
}

// An identity regexp that leaves the local part open at a mail domain where
// anybody has an address, or the domain open where anybody may register one
// (its last labels, a Google Cloud project), accepts anybody's signature:
// refused, under any issuer. An address pattern at a domain the signer
// controls (a subdomain of it too), or an exact list of addresses, is a
// policy.
func TestIdentityRegexpAnyonesAddress(t *testing.T) {
	const address, domain = "an address anybody can have", "a domain anybody can register"
	for re, want := range map[string]string{
		`^.*@gmail\.com$`:                                     address,
		`^[^@]+@gmail\.com$`:                                  address,
		`^[a-z0-9.]+@(gmail|googlemail)\.com$`:                address,
		`^alice.*@gmail\.com$`:                                address,
		`^alice[.-].+@gmail\.com$`:                            address,
		`^\w+@users\.noreply\.github\.com$`:                   address,
		`(?i)^.*@GMAIL\.COM$`:                                 address,
		`(?i)^alice.*@gmail\.com$`:                            address,
		`^(alice).*@gmail\.com$`:                              address,
		`^alice\d*@gmail\.com$`:                               address,
		`^alice[.-]?bob@gmail\.com$`:                          "",
		`^alice@gmail\.com$`:                                  "",
		`^(alice|bob)@gmail\.com$`:                            "",
		`^alice\+release@gmail\.com$`:                         "",
		`^.*@kubernetes\.io$`:                                 "",
		`^[a-z]+@k8s-releng-prod\.iam\.gserviceaccount\.com$`: "",
		`^alice@.*$`:                                          domain,
		`^krel-staging@.*\.iam\.gserviceaccount\.com$`:        domain,
		`^.*@k8s-releng-.*\.iam\.gserviceaccount\.com$`:       domain,
		`^release@[a-z-]+\.com$`:                              domain,
		`^alice@example\.[a-z]+$`:                             domain,
		`^alice@[^@]+$`:                                       domain,
		`^alice@[a-z]+\.example\.org$`:                        "",
		`^alice@[a-z]+\.[a-z-]+\.example\.org$`:               "",
		// A subdomain left open, then the domain left open too.
		`^alice@[a-z]+\.example\.[a-z]+$`:                        domain,
		`^ci@[a-z]+\.[a-z]+\.[a-z]+\.com$`:                       domain,
		`^.*@.*\.kubernetes\.io$`:                                "",
		`^alice@example\.(com|org)$`:                             "",
		`^https://github\.com/o/r/\.github/workflows/x\.yml@.*$`: "",
	} {
		err := Policy{IdentityRegexp: re, Issuer: "https://accounts.google.com"}.Validate()
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", re, err)
		case want != "" && (!errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want the refusal of %s", re, err, want)
		}
	}
}

// A statement whose subjects name no digest the artifact is checked by (none
// at all, a git commit only) is refused saying so, not with an empty list.
func TestVerifyBundleNoSubjectDigest(t *testing.T) {
	v := newVirtual(t)
	art := digestsOf([]byte("cilium-linux-amd64.tar.gz"))
	for says, subjects := range map[string]map[string]digest.Set{
		"names no subject, so none is the artifact":                           nil,
		"1 subject names no sha256 or sha512 digest, so none is the artifact": {"cilium": {"gitCommit": strings.Repeat("a", 40)}},
	} {
		_, err := newVerifier(t, v.root, Options{}).VerifyBundle(ctx(t), workflowPolicy, art, v.attest(workflow, actionsIssuer, subjects), "cilium.sigstore.json")
		refusedWith(t, err, ReasonDigestMismatch, "cilium.sigstore.json", says, art[digest.SHA256])
	}
}

// A subject names one file by all its digests: one whose sha256 is the
// artifact's and whose sha512 is another file's (or the other way round) is
// not the artifact, whichever digest is looked at first, and whatever other
// subject of the statement names the artifact in full; a subject that names
// it in full, beside digests the artifact is not checked by, counts.
func TestVerifyBundleSubjectDigestsDisagree(t *testing.T) {
	v := newVirtual(t)
	ver := newVerifier(t, v.root, Options{})
	art := digestsOf([]byte("cilium-linux-amd64.tar.gz"))
	other := digestsOf([]byte("cilium-darwin-amd64.tar.gz"))
	for name, subjects := range map[string]map[string]digest.Set{
		"sha256 the artifact's, sha512 another's": {"cilium": {digest.SHA256: art[digest.SHA256], digest.SHA512: other[digest.SHA512]}},
		"sha512 the artifact's, sha256 another's": {"cilium": {digest.SHA256: other[digest.SHA256], digest.SHA512: art[digest.SHA512]}},
		"and another subject names it in full": {"cilium": {digest.SHA256: art[digest.SHA256], digest.SHA512: other[digest.SHA512]},
			"cilium-linux-amd64.tar.gz": art},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ver.VerifyBundle(ctx(t), workflowPolicy, art, v.attest(workflow, actionsIssuer, subjects), "cilium.sigstore.json")
			refusedWith(t, err, ReasonDigestMismatch, "cilium.sigstore.json", "subject cilium names the artifact by its sha", "and another file by its sha", "not of one file")
		})
	}
	// Against the sha256 alone, the first subject names the artifact.
	only256 := digest.Set{digest.SHA256: art[digest.SHA256]}
	if _, err := ver.VerifyBundle(ctx(t), workflowPolicy, only256, v.attest(workflow, actionsIssuer, map[string]digest.Set{
		"cilium": {digest.SHA256: art[digest.SHA256], digest.SHA512: other[digest.SHA512]}}), "cilium.sigstore.json"); err != nil {
		t.Errorf("checked by its sha256 alone: %v", err)
	}
}

// A certificate without a signed certificate timestamp of a CT log the root
// lists is refused for that, not as one that does not chain: the virtual
// Sigstore's certificates carry none, and its root is given public-good's
// CT logs.
func TestVerifyBundleNoSCT(t *testing.T) {
	v := newVirtual(t)
	tr := withOthers(t, v.root, goodRoot(t), "ctlogs", "root with CT logs")
	art := digestsOf([]byte("cilium-linux-amd64.tar.gz"))
	_, err := newVerifier(t, tr, Options{}).VerifyBundle(ctx(t), workflowPolicy, art, v.attest(workflow, actionsIssuer, map[string]digest.Set{"cilium": art}), "cilium.sigstore.json")
	refusedWith(t, err, ReasonUntrustedCertificate, "cilium.sigstore.json", "no signed certificate timestamp that a CT log of root with CT logs (it lists 2)")
	if strings.Contains(err.Error(), "does not chain") {
		t.Errorf("the certificate chains: %v", err)
	}
}

// A GitHub Actions certificate's identity names the workflow that signed;
// SourceRepository requires the repository whose run it was (the certificate's
// Source Repository URI): a reusable workflow signs for every caller.
func TestVerifyBundleSourceRepository(t *testing.T) {
	c := realBundles[0]
	ver := newVerifier(t, goodRoot(t), Options{})
	b := readTestdata(t, c.file)
	pol := c.policy()
	pol.SourceRepository = "https://github.com/sigstore/sigstore-js"
	if _, err := ver.VerifyBundle(ctx(t), pol, c.digests(), b, c.file); err != nil {
		t.Fatalf("the bundle's own repository: %v", err)
	}
	for _, repo := range []string{"https://github.com/attacker/sigstore-js", "https://github.com/sigstore/sigstore-js-fork", "https://github.com/Sigstore/sigstore-js"} {
		pol.SourceRepository = repo
		_, err := ver.VerifyBundle(ctx(t), pol, c.digests(), b, c.file)
		refusedWith(t, err, ReasonIdentity, `source repository "https://github.com/sigstore/sigstore-js"`, repo, c.identity)
		re := pol
		re.Identity, re.IdentityRegexp = "", `^https://github\.com/sigstore/sigstore-js/.*@refs/heads/main$`
		_, err = ver.VerifyBundle(ctx(t), re, c.digests(), b, c.file)
		refusedWith(t, err, ReasonIdentity, `source repository "https://github.com/sigstore/sigstore-js"`, repo)
	}
	// An e-mail certificate names no source repository.
	m := realBundles[2]
	mp := m.policy()
	mp.SourceRepository = "https://github.com/sigstore/sigstore-js"
	_, err := newVerifier(t, m.trustedRoot(t), Options{}).VerifyBundle(ctx(t), mp, m.digests(), readTestdata(t, m.file), m.file)
	refusedWith(t, err, ReasonIdentity, "no source repository", mp.SourceRepository)

	for _, bad := range []string{"github.com/sigstore/sigstore-js", "http://github.com/sigstore/sigstore-js", "https://github.com/sigstore",
		"https://github.com/sigstore/sigstore-js/", "https://github.com/sigstore/../x/y", "https://github.com/sigstore/sigstore-js?x", " https://github.com/a/b"} {
		if err := (Policy{Identity: c.identity, Issuer: c.issuer, SourceRepository: bad}).Validate(); !errors.Is(err, ErrPolicy) {
			t.Errorf("SourceRepository %q: %v", bad, err)
		}
	}
}

// IdentityPrefix reads how far a regexp writes the identity out: through
// a case ignored or a class of one letter's cases, up to an alternative, an
// optional part or a wildcard.
func TestIdentityPrefix(t *testing.T) {
	for re, want := range map[string]string{
		`^https://github\.com/containerd/containerd/\.github/workflows/release\.yml@refs/tags/v[0-9]+.*$`: "https://github.com/containerd/containerd/.github/workflows/release.yml@refs/tags/v",
		`https://github\.com/o/x/a\.yml@refs/heads/main`:                                                  "https://github.com/o/x/a.yml@refs/heads/main",
		`(?i)^https://github\.com/Example/Tool/.*$`:                                                       "https://github.com/example/tool/",
		`^https://github\.com/[Cc]ilium/cilium/.*$`:                                                       "https://github.com/cilium/cilium/",
		`^https://github\.com/(cilium|isovalent)/cilium/.*$`:                                              "https://github.com/",
		`^https://github\.com/o/x(-fork)?/.*$`:                                                            "https://github.com/o/x",
		`^(a$`:                                                                                            "",
		// A class of K's other cases (K, the Kelvin sign) reads no k: one
		// thread matches Kevilubernetes, not kubernetes.
		`^https://github\.com/(?:[K\x{212A}]evil|k)ubernetes/kubernetes/.*$`: "https://github.com/k",
	} {
		if got := IdentityPrefix(re); got != want {
			t.Errorf("IdentityPrefix(%s) = %q, want %q", re, got, want)
		}
	}
}

// TestNewDeferred: the root is read when the Verifier first verifies, once
// for every goroutine that verifies at the same time, and its error is
// every verification's; a Verifier that verifies nothing never reads it.
func TestNewDeferred(t *testing.T) {
	c := realBundles[0]
	b, tr := readTestdata(t, c.file), c.trustedRoot(t)
	for _, bad := range []bool{false, true} {
		var mu sync.Mutex
		loads := 0
		unusable := errors.New("trusted_root.json: unreadable")
		v, err := NewDeferred(func() (*TrustedRoot, error) {
			mu.Lock()
			defer mu.Unlock()
			loads++
			if bad {
				return nil, unusable
			}
			return tr, nil
		}, Options{HTTPClient: &http.Client{}})
		if err != nil || loads != 0 {
			t.Fatalf("NewDeferred: %v, %d loads before any verification", err, loads)
		}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { _, errs[i] = v.VerifyBundle(ctx(t), c.policy(), c.digests(), b, c.file) })
		}
		wg.Wait()
		for i, err := range errs {
			if bad && !errors.Is(err, unusable) || !bad && err != nil {
				t.Errorf("bad root %v: verification %d: %v", bad, i, err)
			}
		}
		if loads != 1 || (v.TrustedRoot() == nil) != bad {
			t.Errorf("bad root %v: %d loads, root %v; want one", bad, loads, v.TrustedRoot())
		}
	}
}
