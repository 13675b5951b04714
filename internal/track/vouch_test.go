package track

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/digest"
)

// unsigned rewrites the scenario's recipe so that nothing vouches for its
// source: no signature, no checksum file.
func unsigned(t *testing.T, file string) {
	t.Helper()
	text, _ := os.ReadFile(file)
	s := string(text)
	start := strings.Index(s, "    signature:\n")
	end := strings.Index(s, "packages:\n")
	s = s[:start] + "    signature: {none: \"upstream signs nothing\"}\n" + s[end:]
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sums(b []byte) digest.Set {
	a, c := sha256.Sum256(b), sha512.Sum512(b)
	return digest.Set{digest.SHA256: hex.EncodeToString(a[:]), digest.SHA512: hex.EncodeToString(c[:])}
}

func readString(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// No silent trust on first use: bump refuses a source nothing vouches for,
// and pins it only on the operator's digests or --trust-on-first-use, saying
// so in the recipe.
func TestBumpUnvouched(t *testing.T) {
	u, file := scenario(t)
	recipeText := readString(t, file)
	signature := recipeText[strings.Index(recipeText, "    signature:\n"):strings.Index(recipeText, "    checksums:\n")]
	unsigned(t, file)
	o := testOptions(t, u, fetch.Options{})
	o.Now = func() time.Time { return time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC) }
	before := readString(t, file)
	up130 := map[string]digest.Set{}
	for _, a := range arches {
		up130[a] = sums(u.get(artifactPath("1.3.0", a)))
	}

	_, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o})
	var ue *UnvouchedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnvouched) || len(ue.Sources) != 2 ||
		!strings.Contains(err.Error(), "hello amd64: sha256 "+up130["amd64"][digest.SHA256]+" sha512 "+up130["amd64"][digest.SHA512]) {
		t.Fatalf("unvouched: %v", err)
	}
	if readString(t, file) != before {
		t.Fatal("a refused bump changed the recipe")
	}

	// The operator's digests: one wrong is a mismatch, nothing written.
	wrong := map[string]map[string]digest.Set{"hello": {"amd64": {digest.SHA512: up130["amd64"][digest.SHA512]}, "arm64": {digest.SHA512: strings.Repeat("0", 128)}}}
	_, err = Bump(context.Background(), load(t, file), BumpOptions{Options: o, Operator: wrong})
	var me *digest.MismatchError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "source hello (arm64), against the digest given with --sha512") || readString(t, file) != before {
		t.Fatalf("wrong operator digest: %v", err)
	}
	// Only some architectures given: the others are still unvouched.
	_, err = Bump(context.Background(), load(t, file), BumpOptions{Options: o, Operator: map[string]map[string]digest.Set{"hello": {"amd64": {digest.SHA256: up130["amd64"][digest.SHA256]}}}})
	if !errors.As(err, &ue) || len(ue.Sources) != 1 || !strings.HasPrefix(ue.Sources[0], "hello arm64:") {
		t.Fatalf("one architecture given: %v", err)
	}

	// --trust-on-first-use: pinned, named, marked.
	res, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "1.3.0", TrustOnFirstUse: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Unvouched, ",") != "hello amd64: trust-on-first-use,hello arm64: trust-on-first-use" {
		t.Errorf("unvouched %v", res.Unvouched)
	}
	after := readString(t, file)
	markLine := "    # trust-on-first-use: 2026-11-24 by updeb bump (nothing vouched for these bytes: no signature, no upstream checksum file)\n    sha256:\n"
	if !strings.Contains(after, markLine) || load(t, file).Sources[0].Digests["arm64"][digest.SHA256] != up130["arm64"][digest.SHA256] {
		t.Fatalf("after --trust-on-first-use:\n%s", after)
	}

	// The operator's digests on the next bump: the mark says so instead.
	up200 := map[string]map[string]digest.Set{"hello": {}}
	for _, a := range arches {
		up200["hello"][a] = digest.Set{digest.SHA512: sums(u.get(artifactPath("2.0.0", a)))[digest.SHA512]}
	}
	if _, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "2.0.0", Operator: up200}); err != nil {
		t.Fatal(err)
	}
	after = readString(t, file)
	if strings.Count(after, "# trust-on-first-use") != 0 || strings.Count(after, "    # pinned-by-operator: 2026-11-24 by updeb bump --sha512 (no signature, no upstream checksum file)\n    sha256:\n") != 1 {
		t.Errorf("after --sha512:\n%s", after)
	}

	// An upstream checksum file over plain http vouches for nothing:
	// whoever is on the path serves it with the bytes. It is still
	// cross-checked, and bump still refuses, saying why.
	sumsLine := "    checksums: {url: \"" + u.srv.URL + "/hello/v{{.Version}}/hello-v{{.Version}}-linux-{{.Arch}}.tar.gz.sha256sum\"}\n"
	text := strings.Replace(after, "    signature: {none: \"upstream signs nothing\"}\n",
		"    signature: {none: \"upstream signs nothing\"}\n"+sumsLine, 1)
	os.WriteFile(file, []byte(text), 0o644)
	u.publish("2.1.0")
	u.release("v2.1.0", false, false, "2026-08-01T00:00:00Z")
	_, err = Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "2.1.0"})
	if !errors.Is(err, ErrUnvouched) || !strings.Contains(err.Error(), "came over plain http") {
		t.Errorf("a checksum file over http: %v", err)
	}
	if got := readString(t, file); got != text {
		t.Errorf("written though refused:\n%s", got)
	}

	// Once upstream vouches (a signature, made now), the mark goes.
	text = strings.Replace(text, "    signature: {none: \"upstream signs nothing\"}\n", signature, 1)
	os.WriteFile(file, []byte(text), 0o644)
	o.Now = time.Now
	if _, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "2.1.0"}); err != nil {
		t.Fatal(err)
	}
	if after := readString(t, file); strings.Contains(after, "pinned-by-operator") || strings.Contains(after, "trust-on-first-use") {
		t.Errorf("stale mark kept:\n%s", after)
	}
}

// A new recipe without pins: bump pins what vouches for itself, at the
// recipe's own version, without touching version, date or revision.
func TestBumpNewRecipe(t *testing.T) {
	u, file := scenario(t)
	text := readString(t, file)
	start := strings.Index(text, "    sha256:\n")
	end := strings.Index(text, "    signature:\n")
	fresh := text[:start] + text[end:]
	os.WriteFile(file, []byte(fresh), 0o644)
	if _, err := recipe.Load(file, recipe.LoadOptions{}); err == nil {
		t.Fatal("a recipe without pins loads strictly")
	}
	r, err := recipe.Load(file, recipe.LoadOptions{AllowUnpinned: true})
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, u, fetch.Options{})
	res, err := Bump(context.Background(), r, BumpOptions{Options: o, To: "1.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || len(res.Unvouched) != 0 || res.ReleaseDate != "2026-03-14" {
		t.Errorf("result %+v", res)
	}
	after := readString(t, file)
	want := strings.Replace(fresh, "tar.gz\n    signature:", "tar.gz\n    sha256:\n      amd64: "+sums(u.get(artifactPath("1.2.0", "amd64")))[digest.SHA256]+
		"\n      arm64: "+sums(u.get(artifactPath("1.2.0", "arm64")))[digest.SHA256]+"\n    signature:", 1)
	if after != want {
		t.Errorf("pinned recipe:\n%s\nwant:\n%s", after, want)
	}
	load(t, file) // loads strictly now

	// Unvouched and given as sha512: pinned as sha512, marked.
	unsigned(t, file)
	os.WriteFile(file, []byte(strings.Replace(readString(t, file), after[strings.Index(after, "    sha256:\n"):strings.Index(after, "    signature:")], "", 1)), 0o644)
	r, err = recipe.Load(file, recipe.LoadOptions{AllowUnpinned: true})
	if err != nil {
		t.Fatal(err)
	}
	op := map[string]map[string]digest.Set{"hello": {}}
	for _, a := range arches {
		op["hello"][a] = digest.Set{digest.SHA512: sums(u.get(artifactPath("1.3.0", a)))[digest.SHA512]}
	}
	if _, err := Bump(context.Background(), r, BumpOptions{Options: o, To: "1.3.0", Operator: op}); err != nil {
		t.Fatal(err)
	}
	got := load(t, file)
	if got.Version != "1.3.0" || got.Sources[0].Digests["amd64"][digest.SHA512] != op["hello"]["amd64"][digest.SHA512] ||
		!strings.Contains(readString(t, file), "    # pinned-by-operator: ") {
		t.Errorf("sha512 pins:\n%s", readString(t, file))
	}
}

// A source without pins written as a flow mapping cannot get pins inserted
// in place: bump says how to write it instead of guessing.
func TestPinLinesFlowSource(t *testing.T) {
	u, file := scenario(t)
	text := readString(t, file)
	start := strings.Index(text, "  - name: hello\n")
	end := strings.Index(text, "packages:\n")
	flow := text[:start] + "  - {name: hello, url: \"" + u.srv.URL + "/hello/v{{.Version}}/hello-v{{.Version}}-linux-{{.Arch}}.tar.gz\", signature: {none: x}}\n" + text[end:]
	os.WriteFile(file, []byte(flow), 0o644)
	r, err := recipe.Load(file, recipe.LoadOptions{AllowUnpinned: true})
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, u, fetch.Options{})
	_, err = Bump(context.Background(), r, BumpOptions{Options: o, To: "1.2.0", TrustOnFirstUse: true})
	if err == nil || !strings.Contains(err.Error(), "source hello has no pins yet: write it as a block mapping") || readString(t, file) != flow {
		t.Errorf("flow source: %v", err)
	}
}

// A recipe written with CRLF line endings keeps them: the pins bump adds
// and the mark above them end in "\r\n" like every other line, so the
// diff is the lines added, not their endings too.
func TestBumpCRLFAddedLines(t *testing.T) {
	u, file := scenario(t)
	unsigned(t, file)
	text := readString(t, file)
	start := strings.Index(text, "    sha256:\n")
	end := strings.Index(text, "    signature:")
	crlf := strings.ReplaceAll(text[:start]+text[end:], "\n", "\r\n")
	os.WriteFile(file, []byte(crlf), 0o644)
	r, err := recipe.Load(file, recipe.LoadOptions{AllowUnpinned: true})
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, u, fetch.Options{})
	o.Now = func() time.Time { return time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC) }
	if _, err := Bump(context.Background(), r, BumpOptions{Options: o, To: "1.2.0", TrustOnFirstUse: true}); err != nil {
		t.Fatal(err)
	}
	after := readString(t, file)
	added := "    # trust-on-first-use: 2026-11-24 by updeb bump (nothing vouched for these bytes: no signature, no upstream checksum file)\r\n    sha256:\r\n" +
		"      amd64: " + sums(u.get(artifactPath("1.2.0", "amd64")))[digest.SHA256] + "\r\n" +
		"      arm64: " + sums(u.get(artifactPath("1.2.0", "arm64")))[digest.SHA256] + "\r\n"
	if want := strings.Replace(crlf, "tar.gz\r\n    signature:", "tar.gz\r\n"+added+"    signature:", 1); after != want {
		t.Errorf("pinned recipe:\n%q\nwant:\n%q", after, want)
	}
	load(t, file)
}

// A recipe whose last line is its source's url, without a final line
// break, gets its first pins on lines of their own after it, not glued to
// the url (a text that does not parse, refused as a rewrite that would
// read differently).
func TestBumpNewRecipeNoFinalBreak(t *testing.T) {
	u, file := scenario(t)
	text := readString(t, file)
	srcs, pkgs := strings.Index(text, "sources:\n"), strings.Index(text, "packages:\n")
	source := text[srcs:pkgs]
	start, end := strings.Index(source, "    url:"), strings.Index(source, "    signature:")
	url := source[start:strings.Index(source, "    sha256:")]
	fresh := text[:srcs] + text[pkgs:] + source[:start] + source[end:] + strings.TrimSuffix(url, "\n")
	os.WriteFile(file, []byte(fresh), 0o644)
	r, err := recipe.Load(file, recipe.LoadOptions{AllowUnpinned: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Bump(context.Background(), r, BumpOptions{Options: testOptions(t, u, fetch.Options{}), To: "1.2.0"}); err != nil {
		t.Fatal(err)
	}
	want := fresh + "\n    sha256:\n      amd64: " + sums(u.get(artifactPath("1.2.0", "amd64")))[digest.SHA256] +
		"\n      arm64: " + sums(u.get(artifactPath("1.2.0", "arm64")))[digest.SHA256] + "\n"
	if after := readString(t, file); after != want {
		t.Errorf("pinned recipe:\n%s\nwant:\n%s", after, want)
	}
	load(t, file)
}
