package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/gate"
	"github.com/updeb/updeb/internal/mirror"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/pkg/deb"
)

// snakeKey is a key of updeb's JSON: lower case, digits and "_" (a map keyed
// by data, such as a digest algorithm, file path or package name, is allowed
// its own keys: see dataKeyed).
var snakeKey = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// dataKeyed are the JSON paths ("digests", "files.*.digests") of objects
// whose keys are data (a package name, an architecture, a path), not field
// names. Only the last element is compared.
var dataKeyed = map[string]bool{
	"digests":  true, // algorithm -> hex
	"fields":   true, // control fields as Debian names them (Package, Version)
	"control":  true,
	"requires": true, // component -> constraint
	"md5sums":  true, // path -> hex
	"cells":    true, // compat: component -> cell
}

// standardDocs are the keys of embedded documents in a standard's own form
// (an in-toto statement), whose keys are not updeb's to name.
var standardDocs = map[string]bool{
	"statement": true,
}

// checkKeys walks v and reports every object key that is not snake_case.
func checkKeys(t *testing.T, where, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		last := path[strings.LastIndexByte(path, '.')+1:]
		if standardDocs[last] {
			return
		}
		for k, e := range x {
			if !dataKeyed[last] && !snakeKey.MatchString(k) {
				t.Errorf("%s: key %q at %s is not snake_case", where, k, path)
			}
			checkKeys(t, where, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			checkKeys(t, where, path+"[]", e)
		}
	}
}

// jsonCheckedElsewhere are the commands whose --json output a test with the
// fixtures they need checks (with checkJSON): command -> its test file.
var jsonCheckedElsewhere = map[string]string{
	"plan":              "cmd_plan_test.go",
	"data refresh":      "cmd_plan_test.go",
	"data status":       "cmd_plan_test.go",
	"trust show":        "sigstore_cli_test.go",
	"trust refresh":     "sigstore_cli_test.go",
	"verify-provenance": "cmd_verify_provenance_test.go",
	"cache gc":          "cmd_cache_test.go",
}

// checkJSON checks one --json output of command (its path after "updeb")
// against the convention: one JSON object, "schema": "updeb/<command>/v1"
// first, snake_case keys, no null. It returns the object.
func checkJSON(t *testing.T, command, stdout string) map[string]any {
	t.Helper()
	where := "updeb " + command + " --json"
	dec := json.NewDecoder(strings.NewReader(stdout))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: not a JSON object: %v\n%s", where, err, stdout)
	}
	if dec.More() {
		t.Errorf("%s: more than one JSON value:\n%s", where, stdout)
	}
	if want := "updeb/" + strings.ReplaceAll(command, " ", "-") + "/v" + declaredSchema(t, command); v["schema"] != want {
		t.Errorf("%s: schema %v, want %s", where, v["schema"], want)
	}
	if !strings.HasPrefix(stdout, "{\n  \"schema\": ") {
		t.Errorf("%s: schema is not the first key:\n%.200s", where, stdout)
	}
	checkKeys(t, where, "", v)
	noNulls(t, where, "", v)
	wholeSeconds(t, where, "", v)
	checkExampleKeys(t, where, v)
	if d := os.Getenv("UPDEB_JSON_EXAMPLES"); d != "" { // material for docs/scripting.md's examples
		os.WriteFile(filepath.Join(d, strings.ReplaceAll(command, " ", "-")+".json"), []byte(stdout), 0o644)
	}
	return v
}

// declaredSchema is the JSON schema version command declares (jsonOutput).
func declaredSchema(t *testing.T, command string) string {
	t.Helper()
	root := newRootCmd(&globalOptions{stdout: io.Discard, stderr: io.Discard})
	c, _, err := root.Find(strings.Fields(command))
	if err != nil || c.Annotations[schemaAnnotation] == "" {
		t.Fatalf("updeb %s declares no JSON schema: %v", command, err)
	}
	return c.Annotations[schemaAnnotation]
}

// TestJSONOutputs runs every command that declares JSON output (jsonOutput)
// with --json on a demo project: the output must be one JSON object whose
// "schema" is "updeb/<command>/v1" and whose keys are snake_case. Commands
// are found in the command tree: a new one without a case here fails. Every
// other command must refuse --json.
func TestJSONOutputs(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "lintian")
	args, _ := demoProject(t)
	dir := t.TempDir()
	out, repoDir, key := filepath.Join(dir, "out"), filepath.Join(dir, "repo"), filepath.Join(dir, "k")
	tool, _ := toolProject(t)
	recipes := args[3] // demoProject: --config CFG --recipes DIR
	repo := []string{"--repo", repoDir, "--key", key + ".secret.asc"}
	set := filepath.Join(dir, "set.yaml")
	os.WriteFile(set, []byte("sets:\n  - name: k135\n    components: {kubernetes: 1.35.8, helm: 3.21.4}\n"), 0o644)

	// In order: later steps use what earlier ones made.
	steps := []struct {
		command string // the command path after "updeb"
		args    []string
	}{
		{"version", []string{"version"}},
		{"lint", append([]string{"lint"}, args...)},
		{"fetch", append([]string{"fetch", "hello", "--arch", "amd64"}, args...)},
		{"build", append([]string{"build", "--out", out}, args...)},
		{"inspect", []string{"inspect", filepath.Join(out, "hello_1.2.0-1_amd64.deb")}},
		{"verify", append([]string{"verify", "hello", "--arch", "amd64"}, args...)},
		{"keys generate", []string{"keys", "generate", "--name", "JSON test", "--email", "json@example.org", "--out", key}},
		{"keys list", []string{"keys", "list", key + ".asc"}},
		{"publish", append([]string{"publish", "--suite", "staging", filepath.Join(out, "hello_1.2.0-1_amd64.deb")}, repo...)},
		{"repo list", []string{"repo", "list", "--repo", repoDir}},
		{"repo promote", append([]string{"repo", "promote", "--from", "staging", "--to", "production"}, repo...)},
		{"repo refresh", append([]string{"repo", "refresh", "production"}, repo...)},
		{"repo remove", append([]string{"repo", "remove", "--suite", "staging", "hello"}, repo...)},
		{"repo rollback", append([]string{"repo", "rollback", "staging"}, repo...)},
		{"repo history", []string{"repo", "history", "--repo", repoDir, "staging"}},
		{"repo gc", []string{"repo", "gc", "--repo", repoDir, "--dry-run"}},
		{"repo verify", []string{"repo", "verify", "--repo", repoDir}},
		{"verify-signature", []string{"verify-signature", "--keyring", key + ".asc", filepath.Join(repoDir, "dists", "production", "InRelease")}},
		{"compat", []string{"compat", "--set", set, "--recipes", recipes, "--now", "2026-08-22"}},
		{"outdated", append([]string{"outdated"}, tool...)},
		{"bump", append([]string{"bump", "tool", "--to", "1.1.0", "--date", "2026-02-01", "--trust-on-first-use"}, tool...)},
		{"mirror export", append([]string{"mirror", "export", filepath.Join(dir, "mirror"), "hello", "--arch", "amd64"}, args...)},
		{"mirror verify", []string{"mirror", "verify", filepath.Join(dir, "mirror")}},
	}
	covered := map[string]bool{}
	for _, s := range steps {
		code, stdout, stderr := runCLI(t, append(s.args, "--json")...)
		if code != 0 {
			t.Fatalf("updeb %s --json: exit %d\n%s%s", strings.Join(s.args, " "), code, stdout, stderr)
		}
		checkJSON(t, s.command, stdout)
		covered[s.command] = true
	}

	// Every command declaring JSON has a step, or a test elsewhere checks it;
	// every other refuses --json.
	for command, file := range jsonCheckedElsewhere {
		src, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(src), "checkJSON(t, \""+command+"\",") {
			t.Errorf("%s: no checkJSON(t, %q, ...) of updeb %s --json (%v)", file, command, command, err)
			continue
		}
		covered[command] = true
	}
	g := &globalOptions{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	walk(newRootCmd(g), func(c *cobra.Command) {
		name := strings.TrimPrefix(c.CommandPath(), "updeb ")
		if jsonSchema(c) != "" {
			if !covered[name] {
				t.Errorf("updeb %s prints JSON but TestJSONOutputs has no step for it: add one", name)
			}
			return
		}
		if c.Runnable() && checkJSONFlag(c, true) == nil && name != "help" && name != "completion" && !strings.HasPrefix(name, "completion ") && !strings.HasPrefix(name, "__") {
			t.Errorf("updeb %s declares no JSON output but accepts --json", name)
		}
	})
	if code, _, stderr := runCLI(t, "--json", "keys"); code != exitUsage || !strings.Contains(stderr, "--json: updeb keys prints no JSON") || !strings.Contains(stderr, "hint: these commands do: build, bump") {
		t.Errorf("--json on a command without JSON: exit %d: %s", code, stderr)
	}
}

// rfc3339 is a string that is a time (not a date alone).
var rfc3339 = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d`)

// wholeSeconds reports the times in v not of the form jq's fromdate reads,
// 2026-11-24T05:52:26Z: UTC and whole seconds, as docs/scripting.md says.
func wholeSeconds(t *testing.T, where, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case string:
		if _, err := time.Parse("2006-01-02T15:04:05Z", x); rfc3339.MatchString(x) && err != nil {
			t.Errorf("%s: time %q at %s is not UTC in whole seconds (2006-01-02T15:04:05Z)", where, x, path)
		}
	case map[string]any:
		if standardDocs[path[strings.LastIndexByte(path, '.')+1:]] {
			return
		}
		for k, e := range x {
			wholeSeconds(t, where, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			wholeSeconds(t, where, path+"[]", e)
		}
	}
}

// noNulls reports the paths of the nulls in v: updeb's JSON has none (an
// empty list is [], an absent value is left out).
func noNulls(t *testing.T, where, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil:
		t.Errorf("%s: null at %s", where, path)
	case map[string]any:
		for k, e := range x {
			noNulls(t, where, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			noNulls(t, where, path+"[]", e)
		}
	}
}

func TestPrintJSON(t *testing.T) {
	cmd := jsonOutput(&cobra.Command{Use: "x"}, 2)
	root := &cobra.Command{Use: "updeb"}
	root.AddCommand(cmd)
	var b bytes.Buffer
	if err := printJSON(&b, cmd, map[string]any{"a": "<b>", "z": []int{}}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"schema\": \"updeb/x/v2\",\n  \"a\": \"<b>\",\n  \"z\": []\n}\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := printJSON(&b, cmd, struct{}{}); err != nil || b.String() != "{\n  \"schema\": \"updeb/x/v2\"\n}\n" {
		t.Errorf("empty object: %q, %v", b.String(), err)
	}
	type inner struct {
		L []string `json:"l"`
		B []byte   `json:"b"`
	}
	b.Reset()
	in := &inner{}
	if err := printJSON(&b, cmd, struct {
		P *inner           `json:"p"`
		M map[string]inner `json:"m"`
		S []inner          `json:"s"`
		A any              `json:"a"`
	}{in, map[string]inner{"k": {}}, []inner{{}}, inner{}}); err != nil || strings.Contains(b.String(), "null") || strings.Count(b.String(), "[]") != 4 {
		t.Errorf("nil lists: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := printJSON(&b, cmd, struct {
		Schema string `json:"schema"`
		A      int    `json:"a"`
	}{"updeb/x/v2", 1}); err != nil || b.String() != "{\n  \"schema\": \"updeb/x/v2\",\n  \"a\": 1\n}\n" {
		t.Errorf("own schema: %q, %v", b.String(), err)
	}
	// Times in UTC, whole seconds (jq's fromdate refuses nanoseconds and
	// other zones), also behind a pointer, in a list and in a map.
	b.Reset()
	at := time.Date(2026, 11, 24, 7, 52, 26, 123456789, time.FixedZone("UTC+2", 2*3600))
	if err := printJSON(&b, cmd, struct {
		T time.Time            `json:"t"`
		P *time.Time           `json:"p"`
		L []time.Time          `json:"l"`
		M map[string]time.Time `json:"m"`
	}{at, &at, []time.Time{at}, map[string]time.Time{"k": at}}); err != nil || strings.Count(b.String(), `"2026-11-24T05:52:26Z"`) != 4 {
		t.Errorf("times: %q, %v", b.String(), err)
	}
	// A file name that is not UTF-8 keeps its bytes, written \xff as
	// inspect writes them (encoding/json would make each U+FFFD, so that
	// a\xff and a\xfe read as one), in a field, a list and a map's key.
	b.Reset()
	if err := printJSON(&b, cmd, struct {
		F string            `json:"f"`
		L []string          `json:"l"`
		M map[string]string `json:"m"`
	}{"a\xff.deb", []string{"a\xfe.deb"}, map[string]string{"k\xff": "v\xfe"}}); err != nil ||
		strings.Contains(b.String(), `\ufffd`) || strings.Count(b.String(), `\\xff`) != 2 || strings.Count(b.String(), `\\xfe`) != 2 {
		t.Errorf("names not UTF-8: %q, %v", b.String(), err)
	}
	for _, bad := range []any{[]int{1}, "s", map[string]int{"schema": 1}, map[string]string{"schema": "updeb/y/v1"}} {
		if err := printJSON(&b, cmd, bad); err == nil {
			t.Errorf("printJSON(%v) accepted", bad)
		}
	}
	if err := printJSON(&b, root, map[string]int{}); err == nil {
		t.Error("printJSON on a command that declares no JSON accepted")
	}
}

// jsonExamples are the examples of docs/scripting.md's "JSON output"
// section, by schema; an example that does not parse is an error.
func jsonExamples(t *testing.T) map[string]map[string]any {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "scripting.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n## JSON output\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	if !ok {
		t.Fatal("docs/scripting.md has no JSON output section")
	}
	examples := map[string]map[string]any{}
	for _, block := range strings.Split(sec, "```json\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		var v map[string]any
		if err := json.Unmarshal([]byte(block), &v); err != nil {
			t.Errorf("docs/scripting.md: example does not parse: %v\n%s", err, block)
			continue
		}
		schema, _ := v["schema"].(string)
		// A later example of the same output shows another form of it
		// (data status with a missing data file): its keys count too.
		if prev, ok := examples[schema]; ok {
			for k, x := range v {
				if _, ok := prev[k]; !ok {
					prev[k] = x
				}
			}
			continue
		}
		examples[schema] = v
	}
	return examples
}

// checkExampleKeys: every key of a command's real output is in its example
// in docs/scripting.md, at the top and in the first element of a list there
// (the example may show more, of other forms; deeper, in later elements and
// in objects keyed by data, an example is cut): a script written from the
// example finds the keys updeb prints.
func checkExampleKeys(t *testing.T, where string, v map[string]any) {
	t.Helper()
	ex, ok := jsonExamples(t)[fmt.Sprint(v["schema"])]
	if !ok {
		return // TestReadmeJSON says so
	}
	for k, val := range v {
		exVal, ok := ex[k]
		if !ok {
			t.Errorf("%s prints %q, which docs/scripting.md's example lacks", where, k)
			continue
		}
		list, _ := val.([]any)
		exList, _ := exVal.([]any)
		if len(list) == 0 || len(exList) == 0 {
			continue
		}
		exKeys := map[string]bool{} // the keys of every element the example shows
		for _, e := range exList {
			m, _ := e.(map[string]any)
			for ek := range m {
				exKeys[ek] = true
			}
		}
		first, _ := list[0].(map[string]any)
		for ek := range first {
			if !exKeys[ek] && len(exKeys) > 0 {
				t.Errorf("%s prints %s[].%s, which docs/scripting.md's example lacks", where, k, ek)
			}
		}
	}
}

// TestReadmeJSON: the "JSON output" section of docs/scripting.md (once
// README's) has one example per command that prints JSON, and each follows
// the convention.
func TestReadmeJSON(t *testing.T) {
	examples := map[string]bool{}
	for schema, v := range jsonExamples(t) {
		checkKeys(t, "docs/scripting.md "+schema, "", v)
		noNulls(t, "docs/scripting.md "+schema, "", v)
		examples[schema] = true
	}
	g := &globalOptions{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	walk(newRootCmd(g), func(c *cobra.Command) {
		if s := jsonSchema(c); s != "" && !examples[s] {
			t.Errorf("docs/scripting.md has no JSON example of %s (%s)", c.CommandPath(), s)
		}
		delete(examples, jsonSchema(c))
	})
	for s := range examples {
		t.Errorf("docs/scripting.md has a JSON example of %q, which no command prints", s)
	}
}

// examplePaths are the keys of a JSON value, by path ("recipes[].results[].check").
func examplePaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			path := strings.TrimPrefix(prefix+"."+k, ".")
			out[path] = true
			examplePaths(e, path, out)
		}
	case []any:
		for _, e := range x {
			examplePaths(e, prefix+"[]", out)
		}
	}
}

// TestGateJSONDocumented: docs/ci-gate.md's JSON example of updeb verify
// --json, with its table of the review items' fields, names every key the
// report can print (gate.Report filled in: a key that only a run with --base
// prints, such as a recipe's changes, too), and no key it does not print.
func TestGateJSONDocumented(t *testing.T) {
	doc := readDoc(t, "docs/ci-gate.md")
	_, sec, ok := strings.Cut(doc, "\n## JSON (`--json`)\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, block, ok2 := strings.Cut(sec, "```json\n")
	block, _, _ = strings.Cut(block, "```")
	var ex map[string]any
	if !ok || !ok2 {
		t.Fatal("docs/ci-gate.md has no JSON section with an example")
	}
	if err := json.Unmarshal([]byte(block), &ex); err != nil {
		t.Fatalf("docs/ci-gate.md: the JSON example does not parse: %v", err)
	}
	documented := map[string]bool{}
	examplePaths(ex, "", documented)
	// The table after the example: the fields of each review item.
	for _, m := range regexp.MustCompile("(?m)^\\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|").FindAllStringSubmatch(sec, -1) {
		for _, f := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
			documented["review[]."+f[1]] = true
		}
	}
	// A key the example cannot show, named by its path in the text.
	for _, m := range regexp.MustCompile("`([a-z_]+(?:\\[\\])?(?:\\.[a-z_]+(?:\\[\\])?)+)`").FindAllStringSubmatch(sec, -1) {
		documented[m[1]] = true
	}
	printed := printablePaths(t, filled(reflect.TypeFor[gate.Report]()).Interface())
	printed["schema"] = true
	for p := range printed {
		if !documented[p] {
			t.Errorf("updeb verify --json prints %s, which docs/ci-gate.md's JSON section does not name", p)
		}
	}
	for p := range documented {
		if !printed[p] {
			t.Errorf("docs/ci-gate.md's JSON section names %s, which updeb verify --json never prints", p)
		}
	}
}

// filled is a value of type t with every field set (a list or map of one
// filled element, the map's key "k"): encoded, it holds every key the type
// can print, those left out when empty too.
func filled(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Pointer:
		v.Set(filled(t.Elem()).Addr())
	case reflect.Slice:
		v.Set(reflect.Append(v, filled(t.Elem())))
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(reflect.ValueOf("k").Convert(t.Key()), filled(t.Elem()))
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(1, 0)))
			break
		}
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				v.Field(i).Set(filled(t.Field(i).Type))
			}
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint32, reflect.Uint64, reflect.Uint8, reflect.Float64:
		v.Set(reflect.ValueOf(1).Convert(t))
	}
	return v
}

// printablePaths are the keys v prints as JSON, by path (examplePaths).
func printablePaths(t *testing.T, v any) map[string]bool {
	t.Helper()
	var m map[string]any
	if b, err := json.Marshal(v); err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("%T does not encode as a JSON object: %v", v, err)
	}
	paths := map[string]bool{}
	examplePaths(m, "", paths)
	return paths
}

// trackingJSON are the headings of docs/tracking.md that document commands'
// JSON further.
var trackingJSON = map[string]string{"plan": "\n## Plan\n", "data refresh": "\n### JSON\n", "data status": "\n### JSON\n"}

// TestJSONKeysDocumented: the text of a command's JSON example in
// docs/scripting.md (the example and the paragraphs up to the next one) names
// every key its output can print, those left out when empty too (a Sigstore
// signature's shape, a corrupt mirror file's got_sha256): a script author
// finds what updeb may print where its output is documented.
func TestJSONKeysDocumented(t *testing.T) {
	doc := readDoc(t, "docs/scripting.md")
	_, sec, _ := strings.Cut(doc, "\n## JSON output\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	for command, v := range map[string]any{
		"verify":            filled(reflect.TypeFor[gate.Report]()).Interface(),
		"verify-signature":  filled(reflect.TypeFor[sigstoreVerified]()).Interface(),
		"mirror verify":     filled(reflect.TypeFor[mirror.Report]()).Interface(),
		"keys list":         filled(reflect.TypeFor[keyringListing]()).Interface(),
		"repo history":      historyOf(filled(reflect.TypeFor[repo.HistoryEntry]()).Interface().(repo.HistoryEntry)),
		"inspect":           filled(reflect.TypeFor[deb.Info]()).Interface(),
		"mirror export":     filled(reflect.TypeFor[mirror.ExportResult]()).Interface(),
		"publish":           filled(reflect.TypeFor[repo.PublishResult]()).Interface(),
		"repo gc":           filled(reflect.TypeFor[repo.GCResult]()).Interface(),
		"repo promote":      filled(reflect.TypeFor[repo.PromoteResult]()).Interface(),
		"repo rollback":     filled(reflect.TypeFor[repo.RollbackResult]()).Interface(),
		"trust show":        filled(reflect.TypeFor[trustShow]()).Interface(),
		"compat":            filled(reflect.TypeFor[compat.Report]()).Interface(),
		"plan":              filled(reflect.TypeFor[plan.Plan]()).Interface(),
		"data refresh":      filled(reflect.TypeFor[dataRefreshJSON]()).Interface(),
		"data status":       filled(reflect.TypeFor[dataStatusJSON]()).Interface(),
		"cache gc":          filled(reflect.TypeFor[cacheGCJSON]()).Interface(),
		"bump":              filled(reflect.TypeFor[track.BumpResult]()).Interface(),
		"verify-provenance": filled(reflect.TypeFor[verifiedRecord]()).Interface(),
		"trust refresh":     filled(reflect.TypeFor[trustRefreshed]()).Interface(),
		"build": filled(reflect.TypeFor[struct {
			Builds []pipeline.Result `json:"builds"`
		}]()).Interface(),
		"fetch": filled(reflect.TypeFor[struct {
			Failed []fetchFailure `json:"failed"`
		}]()).Interface(),
		"outdated": filled(reflect.TypeFor[struct {
			Recipes []*track.Status   `json:"recipes"`
			Failed  []outdatedFailure `json:"failed"`
		}]()).Interface(),
		"repo verify": filled(reflect.TypeFor[struct {
			Suites []repo.SuiteCheck `json:"suites"`
		}]()).Interface(),
	} {
		_, text, ok := strings.Cut(sec, "`updeb "+command+" --json`")
		if !ok {
			t.Errorf("docs/scripting.md has no example of updeb %s --json", command)
			continue
		}
		text, _, _ = strings.Cut(text, "\n`updeb ")
		// The data commands' and the plan's JSON is docs/tracking.md's too.
		if heading := trackingJSON[command]; heading != "" {
			_, more, _ := strings.Cut(readDoc(t, "docs/tracking.md"), heading)
			more, _, _ = strings.Cut(more, "\n## ")
			text += more
		}
		for p := range printablePaths(t, v) {
			parent, key := "", p
			if i := strings.LastIndexByte(p, '.'); i >= 0 {
				parent, key = strings.TrimSuffix(p[:i], "[]"), p[i+1:]
			}
			if root, _, _ := strings.Cut(p, "."); standardDocs[root] {
				continue // the in-toto statement: docs/provenance.md
			}
			if key == "k" || dataKeyed[parent[strings.LastIndexByte(parent, '.')+1:]] {
				continue // a key of data, not a field
			}
			if !strings.Contains(text, `"`+key+`"`) && !strings.Contains(text, "`"+key+"`") {
				t.Errorf("updeb %s --json can print %s, which docs/scripting.md does not name", command, p)
			}
		}
	}
}
