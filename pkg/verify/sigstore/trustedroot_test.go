package sigstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The bundled root is the recorded upstream file, byte for byte.
func TestBundledRootRecord(t *testing.T) {
	sum := sha256.Sum256(publicGoodJSON)
	if got, want := hex.EncodeToString(sum[:]), recordField(PublicGoodRecord(), "sha256"); got != want {
		t.Errorf("data/trusted_root.json sha256 %s, record says %s", got, want)
	}
	if got, want := strconv.Itoa(len(publicGoodJSON)), recordField(PublicGoodRecord(), "length"); got != want {
		t.Errorf("length %s, record says %s", got, want)
	}
	for _, k := range []string{"source", "snapshot", "changed"} {
		if recordField(PublicGoodRecord(), k) == "" {
			t.Errorf("record lacks %q", k)
		}
	}
	tr, err := PublicGood()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tr.Name(), "2026-08-21") || !strings.Contains(tr.Name(), recordField(PublicGoodRecord(), "sha256")) || tr.SHA256() != recordField(PublicGoodRecord(), "sha256") {
		t.Errorf("name %q, sha256 %s", tr.Name(), tr.SHA256())
	}
	if !bytes.Equal(tr.JSON(), publicGoodJSON) {
		t.Error("JSON() is not the file")
	}
	if d := PublicGoodDate(); d.Format("2006-01-02") != "2026-08-21" {
		t.Errorf("PublicGoodDate() = %s", d)
	}
	var urls []string
	for _, a := range tr.Authorities() {
		urls = append(urls, a.Kind+" "+a.URL)
	}
	want := "ca https://fulcio.sigstore.dev|ca https://fulcio.sigstore.dev|ctlog https://ctfe.sigstore.dev/2022|ctlog https://ctfe.sigstore.dev/test|tlog https://log2025-1.rekor.sigstore.dev|tlog https://rekor.sigstore.dev|tsa https://timestamp.sigstore.dev/api/v1/timestamp"
	if got := strings.Join(urls, "|"); got != want {
		t.Errorf("authorities\n got %s\nwant %s", got, want)
	}
}

func TestLoadTrustedRoot(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := LoadTrustedRoot(write("ok.json", publicGoodJSON)); err != nil {
		t.Fatal(err)
	}
	noTime := bytes.Replace(bytes.Replace(publicGoodJSON, []byte(`"tlogs"`), []byte(`"ignored"`), 1), []byte(`"timestampAuthorities"`), []byte(`"ignored2"`), 1)
	for name, b := range map[string][]byte{
		"empty":      nil,
		"not JSON":   []byte("trusted root"),
		"truncated":  publicGoodJSON[:3000],
		"other type": []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`),
		"no tlogs":   []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`),
		"no time":    noTime,
		"huge":       bytes.Repeat([]byte(" "), maxTrustedRootSize+1),
	} {
		p := write(strings.ReplaceAll(name, " ", "_"), b)
		_, err := LoadTrustedRoot(p)
		if !errors.Is(err, ErrTrustedRoot) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: want ErrTrustedRoot naming the file, got %v", name, err)
		}
	}
	if _, err := LoadTrustedRoot(filepath.Join(dir, "missing.json")); !errors.Is(err, ErrTrustedRoot) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// A root listing one log ID twice, the entries not alike, is refused naming
// the ID: sigstore-go keys its logs by ID and keeps the last entry, so which
// key (validity, URL) verifies would depend on the order of the file, and a
// line appended to a root would shadow the real log. The same entry twice
// is one log and loads.
func TestTrustedRootDuplicateLogID(t *testing.T) {
	for _, key := range []string{"tlogs", "ctlogs"} {
		other := jsonValue(t, publicGoodJSON)[key].([]any)[1].(map[string]any)
		for name, edit := range map[string]func(e map[string]any){
			"other key": func(e map[string]any) { e["publicKey"] = other["publicKey"] }, // the real log's ID, another log's key
			"other validity": func(e map[string]any) {
				e["publicKey"].(map[string]any)["validFor"] = map[string]any{"start": "2001-01-01T00:00:00Z"}
			},
			"other URL": func(e map[string]any) { e["baseUrl"] = "https://rekor.attacker.example" },
		} {
			for _, first := range []bool{true, false} {
				b, id := shadowLog(t, key, edit, first)
				_, err := ParseTrustedRoot("root.json", b)
				if !errors.Is(err, ErrTrustedRoot) || !strings.Contains(err.Error(), "root.json") || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), key) {
					t.Errorf("%s, %s (first %v): want ErrTrustedRoot naming the file, %s and the ID %s, got %v", key, name, first, key, id, err)
				}
			}
		}
		b, _ := shadowLog(t, key, func(map[string]any) {}, false)
		if _, err := ParseTrustedRoot("root.json", b); err != nil {
			t.Errorf("%s: the same entry twice: %v", key, err)
		}
	}
}

// shadowLog returns the bundled root with a copy of the first entry of its
// list key (tlogs, ctlogs), changed by edit, added first or last, and the
// entry's log ID.
func shadowLog(t *testing.T, key string, edit func(e map[string]any), first bool) ([]byte, string) {
	t.Helper()
	doc := jsonValue(t, publicGoodJSON)
	list := doc[key].([]any)
	entry, err := json.Marshal(list[0])
	if err != nil {
		t.Fatal(err)
	}
	e := jsonValue(t, entry)
	edit(e)
	if first {
		doc[key] = append([]any{e}, list...)
	} else {
		doc[key] = append(list, e)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b, e["logId"].(map[string]any)["keyId"].(string)
}

func jsonValue(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
