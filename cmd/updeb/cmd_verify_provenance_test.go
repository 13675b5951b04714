package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/pkg/dsse"
	"github.com/updeb/updeb/pkg/provenance"
)

// provenanceProject builds pingd for amd64 from the demo project with a
// provenance key of the given type made by 'updeb keys generate', and
// returns the package and the key's file prefix.
func provenanceProject(t *testing.T, keyType string) (deb, key string) {
	t.Helper()
	args, _ := demoProject(t)
	dir := t.TempDir()
	key = filepath.Join(dir, "prov")
	if code, _, stderr := runCLI(t, "keys", "generate", "--name", "updeb test builder", "--email", "builder@example.org", "--type", keyType, "--out", key); code != 0 {
		t.Fatalf("keys generate: %s", stderr)
	}
	out := filepath.Join(dir, "out")
	if code, stdout, stderr := runCLI(t, append(args, "--out", out, "build", "--provenance-key", key+".secret.asc", "--arch", "amd64", "pingd")...); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, stdout, stderr)
	}
	return filepath.Join(out, "pingd_0.9.1-1_amd64.deb"), key
}

func keyCreated(t *testing.T, file string) time.Time {
	t.Helper()
	code, out, stderr := runCLI(t, "--json", "keys", "list", file)
	var list struct {
		Keyrings []struct{ Keys []struct{ Created time.Time } }
	}
	keys := &list.Keyrings
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(*keys) != 1 || len((*keys)[0].Keys) != 1 {
		t.Fatalf("keys list: exit %d %s\n%s", code, stderr, out)
	}
	return (*keys)[0].Keys[0].Created
}

// rewriteEnvelope changes one field of a record with f and writes the
// result to a new file.
func rewriteEnvelope(t *testing.T, record string, f func(env map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	f(env)
	out, _ := json.Marshal(env)
	p := filepath.Join(t.TempDir(), "changed.intoto.json")
	os.WriteFile(p, out, 0o644)
	return p
}

// flipBase64 changes one byte of the decoded value of a base64 field.
func flipBase64(s string, at func(b []byte) int) string {
	b, _ := base64.StdEncoding.DecodeString(s)
	b[at(b)] ^= 0x01
	return base64.StdEncoding.EncodeToString(b)
}

func TestVerifyProvenanceCLI(t *testing.T) {
	deb, key := provenanceProject(t, "ed25519")
	record := deb + ".intoto.json"
	dir := t.TempDir()

	code, out, stderr := runCLI(t, "verify-provenance", "--key", key+".asc", deb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Good provenance record for pingd_0.9.1-1_amd64.deb\n",
		"  signed by    updeb test builder <builder@example.org>\n",
		" with SHA-512\n",
		"  built        pingd 0.9.1-1 for amd64 by updeb ",
		"  recipe       recipes/pingd.yaml (not in a git checkout)\n",
		"  https://releases.example.org/pingd/v0.9.1/pingd.amd64\n      sha256       1b7a1d6ac71453447045d5d01d9962a4708ab8fffbd16a09a0d317344ac981f1\n      sha512       6d3c860bd9b5389cf2ed049e7c8b7d583ae47c8f484d0e5132e8cff63c46e9e3af07c68f4692c5d70986b8db89b7f1dd6e431a77cdd8fa030bc92f68434a98af\n      verified by  checksum-file:https://releases.example.org/pingd/v0.9.1/pingd.sha256sum, openpgp-clearsigned-checksums:BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B, pinned-digest, sigstore:https://github.com/updeb-demo/pingd/.github/workflows/release.yml@refs/tags/v0.9.1 issuer=https://token.actions.githubusercontent.com rekor=1001\n",
		"  recipes/pingd/pingd.service (recipe-file)\n      sha256 ",
		"  keys/demo-upstream.asc (keyring)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// --json: the package, the signature and the whole statement.
	code, out, stderr = runCLI(t, "--json", "verify-provenance", "--keyring", key+".gpg", deb)
	checkJSON(t, "verify-provenance", out)
	var js struct {
		SHA256    string
		KeyID     string `json:"key_id"`
		Signature struct {
			PrimaryFingerprint string    `json:"primary_fingerprint"`
			Created            time.Time `json:"created"`
		}
		Statement struct {
			Subject []struct{ Name string }
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.KeyID != js.Signature.PrimaryFingerprint || len(js.Statement.Subject) != 1 || len(js.SHA256) != 64 {
		t.Fatalf("--json: exit %d %s\n%s", code, stderr, out)
	}
	fpr := js.KeyID
	// The key is younger than the release (2026-03-14): the signature
	// carries the key's creation time, never the clock of the build.
	if keyTime := keyCreated(t, key+".asc"); !js.Signature.Created.Equal(keyTime) {
		t.Fatalf("signature made %v, want the key's creation %v", js.Signature.Created, keyTime)
	}

	// Refusals, each with its exit code and the reason.
	other := filepath.Join(dir, "other")
	runCLI(t, "keys", "generate", "--name", "Someone else", "--email", "else@example.org", "--out", other)
	both := filepath.Join(dir, "both.asc")
	a, _ := os.ReadFile(key + ".asc")
	b, _ := os.ReadFile(other + ".asc")
	os.WriteFile(both, append(a, b...), 0o644)
	changedDeb := filepath.Join(dir, filepath.Base(deb))
	debBytes, _ := os.ReadFile(deb)
	os.WriteFile(changedDeb, append(debBytes, 0), 0o644)
	renamed := filepath.Join(dir, "pingd_0.9.1-1_arm64.deb")
	os.WriteFile(renamed, debBytes, 0o644)
	payloadChanged := rewriteEnvelope(t, record, func(env map[string]any) {
		env["payload"] = flipBase64(env["payload"].(string), func(b []byte) int { return bytes.Index(b, []byte("pingd.amd64")) })
	})
	sigChanged := rewriteEnvelope(t, record, func(env map[string]any) {
		s := env["signatures"].([]any)[0].(map[string]any)
		s["sig"] = flipBase64(s["sig"].(string), func(b []byte) int { return len(b) - 10 })
	})
	keyidChanged := rewriteEnvelope(t, record, func(env map[string]any) {
		env["signatures"].([]any)[0].(map[string]any)["keyid"] = strings.Repeat("A", 40)
	})
	typeChanged := rewriteEnvelope(t, record, func(env map[string]any) { env["payloadType"] = "application/json" })
	unsigned := rewriteEnvelope(t, record, func(env map[string]any) { env["signatures"] = []any{} })
	full, _ := os.ReadFile(record)
	// A record of updeb before its records were signed: the bare statement.
	env, err := dsse.Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "bare.intoto.json")
	os.WriteFile(bare, env.Payload, 0o644)
	truncated := filepath.Join(dir, "truncated.intoto.json")
	os.WriteFile(truncated, full[:len(full)/2], 0o644)
	huge := filepath.Join(dir, "huge.intoto.json")
	os.WriteFile(huge, append([]byte(`{"payloadType":"x","payload":"`), bytes.Repeat([]byte("A"), 5<<20)...), 0o644)
	notJSON := filepath.Join(dir, "not.intoto.json")
	os.WriteFile(notJSON, []byte("-----BEGIN PGP SIGNATURE-----\n"), 0o644)

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"another key", []string{"--key", other + ".asc", deb}, 1, "which is not in keyring " + other + ".asc (unknown signer)\nupdeb: hint: the record was signed by a key other than the one given"},
		{"not on the allow-list", []string{"--keyring", both, "--signer", strings.Repeat("B", 40), deb}, 1, "not among the allowed signers"},
		{"allow-listed", []string{"--keyring", both, "--signer", fpr, deb}, 0, ""},
		// A mistyped signer is the flag's fault, not an altered record.
		{"a signer that is no fingerprint", []string{"--keyring", both, "--signer", fpr[:8], deb}, 2, "is not a full fingerprint (want 40 or 64 hex digits, found 8)\nupdeb: hint: a signer is a full primary key fingerprint"},
		{"payload changed", []string{"--key", key + ".asc", "--provenance", payloadChanged, deb}, 1, "BAD signature: it does not match the data"},
		{"signature changed", []string{"--key", key + ".asc", "--provenance", sigChanged, deb}, 1, "hint: the record was changed after it was signed"},
		{"key ID changed", []string{"--key", key + ".asc", "--provenance", keyidChanged, deb}, 1, "signature with key ID " + strings.Repeat("A", 40) + " was made by key " + fpr},
		{"payload type changed", []string{"--key", key + ".asc", "--provenance", typeChanged, deb}, 1, "BAD signature"},
		{"package changed", []string{"--key", key + ".asc", "--provenance", record, changedDeb}, 1, "the record gives pingd_0.9.1-1_amd64.deb sha256 "},
		{"another package name", []string{"--key", key + ".asc", "--provenance", record, renamed}, 1, "the record is about pingd_0.9.1-1_amd64.deb, not pingd_0.9.1-1_arm64.deb"},
		{"unsigned", []string{"--key", key + ".asc", "--provenance", unsigned, deb}, 1, "dsse: envelope is not signed: it was written without a provenance key"},
		{"unsigned, no key given", []string{"--provenance", unsigned, deb}, 1, "hint: sign provenance records: set build: provenance-key:"},
		{"bare statement of an older updeb", []string{"--key", key + ".asc", "--provenance", bare, deb}, 1, "dsse: envelope is not signed: it is the bare in-toto statement of updeb before 2026-11-24, which did not sign its records"},
		{"bare statement, no key given", []string{"--provenance", bare, deb}, 1, "hint: sign provenance records: set build: provenance-key:"},
		{"truncated record", []string{"--key", key + ".asc", "--provenance", truncated, deb}, 2, "dsse: malformed envelope"},
		{"huge record", []string{"--key", key + ".asc", "--provenance", huge, deb}, 2, "larger than 4194304 bytes"},
		{"not JSON", []string{"--key", key + ".asc", "--provenance", notJSON, deb}, 2, "not a JSON object\nupdeb: hint: a provenance record is the DSSE envelope"},
		{"no record", []string{"--key", key + ".asc", changedDeb}, 2, "intoto.json: no such file"},
		{"no package", []string{"--key", key + ".asc", filepath.Join(dir, "none.deb")}, 2, "none.deb: no such file"},
		{"a folder", []string{"--key", key + ".asc", "--provenance", record, dir}, 2, "not a regular file (a folder)"},
		{"no key flag", []string{deb}, 2, "the record is signed: give the key it must be signed by"},
		{"two key flags", []string{"--key", key + ".asc", "--keyring", both, deb}, 2, "give --key or --keyring, not both"},
		{"--key with two keys", []string{"--key", both, deb}, 2, "holds 2 keys"},
		{"--key with the secret key", []string{"--key", key + ".secret.asc", deb}, 2, "a verification keyring must hold public keys only"},
		{"no argument", nil, 2, "accepts 1 arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"verify-provenance"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, stderr)
			}
		})
	}
}

// An RSA key (what some sites' repository keys are) signs as reproducibly.
func TestVerifyProvenanceRSA(t *testing.T) {
	deb, key := provenanceProject(t, "rsa3072")
	first, _ := os.ReadFile(deb + ".intoto.json")
	if code, _, stderr := runCLI(t, "verify-provenance", "--key", key+".asc", deb); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	args, _ := demoProject(t)
	out := filepath.Join(t.TempDir(), "again")
	if code, _, stderr := runCLI(t, append(args, "--out", out, "build", "--provenance-key", key+".secret.asc", "--arch", "amd64", "pingd")...); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(out, filepath.Base(deb)+".intoto.json")); !bytes.Equal(first, again) {
		t.Fatalf("two builds with the same RSA key gave other records:\n%s\n%s", first, again)
	}
}

// The provenance key comes from the config (relative to it); a bad one stops
// the build before anything is fetched (exit 2).
func TestBuildProvenanceKeyFromConfig(t *testing.T) {
	args, _ := demoProject(t)
	cfg := args[1]
	if code, _, stderr := runCLI(t, "keys", "generate", "--name", "Builder", "--email", "b@example.org", "--out", filepath.Join(filepath.Dir(cfg), "prov")); code != 0 {
		t.Fatal(stderr)
	}
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(data, "  provenance-key: prov.secret.asc\n"...), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runCLI(t, append(args, "--out", out, "build", "--arch", "amd64", "hello")...); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	deb := filepath.Join(out, "hello_1.2.0-1_amd64.deb")
	if code, _, stderr := runCLI(t, "verify-provenance", "--key", filepath.Join(filepath.Dir(cfg), "prov.asc"), deb); code != 0 {
		t.Fatalf("verify-provenance: %s", stderr)
	}
	for name, content := range map[string]string{"missing": "", "public": "prov.asc"} {
		t.Run(name, func(t *testing.T) {
			keyArg := filepath.Join(filepath.Dir(cfg), "missing.asc")
			if content != "" {
				keyArg = filepath.Join(filepath.Dir(cfg), content)
			}
			code, _, stderr := runCLI(t, append(args, "--out", filepath.Join(t.TempDir(), "o"), "build", "--provenance-key", keyArg, "hello")...)
			if code != exitUsage || !strings.Contains(stderr, keyArg) {
				t.Fatalf("exit %d: %s", code, stderr)
			}
		})
	}
}

// TestVerifyProvenanceAmbiguous: statements that two JSON readers read
// differently, validly signed by the provenance key, are refused (exit 2)
// with a message naming the problem; so are envelopes whose base64 has line
// breaks or that carry a stray bracket.
func TestVerifyProvenanceAmbiguous(t *testing.T) {
	deb, key := provenanceProject(t, "ed25519")
	record := deb + ".intoto.json"
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	env, err := dsse.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	payload := string(env.Payload)
	f, err := os.Open(key + ".secret.asc")
	if err != nil {
		t.Fatal(err)
	}
	k, err := signkey.Read(f, "key")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := k.DSSE(time.Now(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other := `{"name":"evil_1.0_amd64.deb","digest":{"sha256":"` + strings.Repeat("0", 64) + `"}}`
	subject := strings.Index(payload, `"subject":`)
	if subject < 0 || !strings.HasPrefix(payload, "{") {
		t.Fatalf("payload: %s", payload)
	}
	dir := t.TempDir()
	signedAs := func(payloadType, name, p string) string {
		e, err := dsse.Sign(payloadType, []byte(p), signer)
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".intoto.json")
		os.WriteFile(out, b, 0o644)
		return out
	}
	signed := func(name, p string) string { return signedAs(provenance.PayloadType, name, p) }
	// the signature itself is good: the unchanged payload, re-signed, verifies
	if code, _, stderr := runCLI(t, "verify-provenance", "--key", key+".asc", "--provenance", signed("same", payload), deb); code != 0 {
		t.Fatalf("re-signed record: exit %d %s", code, stderr)
	}
	for name, tc := range map[string]struct{ payload, want string }{
		"subject twice, another package first": {`{"subject":[` + other + `],` + payload[1:], `key "subject" given twice`},
		"_type twice":                          {`{"_type":"https://example.org/other",` + payload[1:], `key "_type" given twice`},
		"subject and Subject":                  {`{"Subject":[` + other + `],` + payload[1:], `keys "Subject" and "subject" differ only in case`},
		"a stray ] after the statement":        {payload + "]", "data after the JSON value"},
		"a stray } after the statement":        {payload + "}", "data after the JSON value"},
		"a key twice deep inside":              {strings.Replace(payload, `"sha256":`, `"sha256":"00","sha256":`, 1), `key "sha256" given twice`},
		// the package named twice among the subjects, another digest second:
		// a reader taking the last (or every) entry of that name reads another
		"the package twice in subject": {twinSubject(t, payload), `subject "` + filepath.Base(deb) + `" given twice`},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := runCLI(t, "verify-provenance", "--key", key+".asc", "--provenance", signed(strings.ReplaceAll(name, " ", "-"), tc.payload), deb)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(out, "good provenance") {
				t.Errorf("exit %d, stderr:\n%s\nstdout:\n%s\nwant exit 2 naming %q", code, stderr, out, tc.want)
			}
		})
	}
	// the payload type in another case: not an in-toto statement's
	code, out, stderr := runCLI(t, "verify-provenance", "--key", key+".asc", "--provenance", signedAs(strings.ToUpper(provenance.PayloadType), "type-case", payload), deb)
	if code != 2 || !strings.Contains(stderr, "payload type") || strings.Contains(out, "good provenance") {
		t.Errorf("payload type in upper case: exit %d, stderr:\n%s", code, stderr)
	}
	// a good record whose text holds escape sequences (a recipe folder's
	// file named so, signed by the trusted builder): printed escaped
	// (pkg/termtext), it cannot retitle or clear the terminal
	evil := strings.ReplaceAll(payload, `"pingd"`, `"pingd\u001b]0;owned\u0007"`)
	evil = strings.ReplaceAll(evil, `pingd.yaml"`, `pingd\u001b[2J\u202e.yaml"`)
	if evil == payload {
		t.Fatalf("no recipe name in the payload: %s", payload)
	}
	code, out, stderr = runCLI(t, "verify-provenance", "--key", key+".asc", "--provenance", signed("escapes", evil), deb)
	if code != 0 {
		t.Errorf("a record with escape sequences: exit %d, stderr:\n%s", code, stderr)
	}
	for i, r := range out {
		if (r < 0x20 && r != '\n') || r == 0x7f || r == '\u202e' {
			t.Errorf("verify-provenance printed %q at byte %d:\n%q", r, i, out)
			break
		}
	}
	if !strings.Contains(out, `pingd\x1b]0;owned\a`) || !strings.Contains(out, `pingd\x1b[2J\u202e.yaml`) {
		t.Errorf("the escaped names are not in the output:\n%s", out)
	}
	// base64 with line breaks, and a stray bracket after the envelope
	b64 := base64.StdEncoding.EncodeToString(env.Payload)
	for name, text := range map[string]string{
		"payload base64 with line breaks": strings.Replace(string(data), b64, b64[:76]+`\n`+b64[76:], 1),
		"envelope with a stray ]":         strings.TrimSpace(string(data)) + "]",
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".intoto.json")
		os.WriteFile(p, []byte(text), 0o644)
		code, _, stderr := runCLI(t, "verify-provenance", "--key", key+".asc", "--provenance", p, deb)
		if code != 2 || !strings.Contains(stderr, "malformed envelope") {
			t.Errorf("%s: exit %d, stderr:\n%s", name, code, stderr)
		}
	}
}

// twinSubject returns the statement payload with its first subject given
// again after it, with another digest.
func twinSubject(t *testing.T, payload string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(payload))
	dec.UseNumber()
	var st map[string]any
	if err := dec.Decode(&st); err != nil {
		t.Fatal(err)
	}
	subs, _ := st["subject"].([]any)
	if len(subs) == 0 {
		t.Fatalf("no subject in %s", payload)
	}
	first := subs[0].(map[string]any)
	st["subject"] = append(subs, map[string]any{"name": first["name"], "digest": map[string]any{"sha256": strings.Repeat("0", 64)}})
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestVerifyProvenanceAptFileName: apt (its cache, apt-get download) names
// a package with an epoch NAME_EPOCH%3aVERSION_ARCH.deb, the epoch's colon
// escaped, where the pool and the record's subject have NAME_VERSION_ARCH.deb
// (Debian's file names carry no epoch): that copy is the record's package
// and verifies; another version under apt's form is still refused.
func TestVerifyProvenanceAptFileName(t *testing.T) {
	deb, key := provenanceProject(t, "ed25519")
	data, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		code int
		want string
	}{
		{"pingd_1%3a0.9.1-1_amd64.deb", 0, "Good provenance record for pingd_0.9.1-1_amd64.deb\n"},
		{"pingd_12%3A0.9.1-1_amd64.deb", 0, "Good provenance record for pingd_0.9.1-1_amd64.deb\n"},
		{"pingd_1%3a0.9.2-1_amd64.deb", 1, "the record is about pingd_0.9.1-1_amd64.deb, not pingd_0.9.2-1_amd64.deb"},
		{"pingd_x%3a0.9.1-1_amd64.deb", 1, "the record is about pingd_0.9.1-1_amd64.deb, not pingd_x%3a0.9.1-1_amd64.deb"},
	} {
		cached := filepath.Join(dir, c.name)
		if err := os.WriteFile(cached, data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, "verify-provenance", "--key", key+".asc", "--provenance", deb+".intoto.json", cached)
		if code != c.code || !strings.Contains(out+stderr, c.want) {
			t.Errorf("%s: exit %d, want %d and %q:\n%s%s", c.name, code, c.code, c.want, out, stderr)
		}
	}
}
