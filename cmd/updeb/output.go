package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/lockfile"
	"github.com/updeb/updeb/pkg/termtext"
)

// notAnInput refuses an --output (flag: its name) that names a file the
// command reads (inputs; "" for none): replaced whole by the output, it was gone, and
// 'updeb compat -o release-sets.yaml', a completion away from the report's
// name, turned the hand-written release sets into a report.
func notAnInput(flag, output string, inputs ...string) error {
	ofi, err := os.Stat(output)
	if err != nil || !ofi.Mode().IsRegular() {
		return nil // none yet, or a FIFO or device: written into, nothing replaced
	}
	for _, in := range inputs {
		if fi, err := os.Stat(in); in != "" && err == nil && os.SameFile(ofi, fi) {
			what := "that file"
			if filepath.Clean(in) != filepath.Clean(output) {
				what = in + ", the same file"
			}
			return invalidInput(fmt.Errorf("--%s %s: this command reads %s, and the output would replace it", flag, output, what),
				"name another file for the output")
		}
	}
	return nil
}

// writeOutput writes data to the file an --output flag names: a regular file
// (or none yet) is replaced atomically; a FIFO or a device (/dev/stderr, a
// shell's >(...)) is written into, as a shell's > would, never replaced by a
// regular file its reader would not see.
//
// The replacement holds the lock of the file's folder, as the rewrites of
// the recipes repository do (yamlfile), so that a temporary file of path
// there is a killed run's (kill -9 before the rename), and goes: left in
// the recipes repository, where plan --apply --message writes, 'git add
// -A' would commit it. A free lock is taken after a signal too (plan
// --apply stopped still describes what it wrote); a folder that cannot be
// locked (not there, not readable) is left to the write to report.
func writeOutput(ctx context.Context, path string, data []byte) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return errors.Join(err, f.Close())
	}
	dir := filepath.Dir(path)
	lock, err := lockfile.AcquireDir(ctx, dir, 10*time.Millisecond)
	if errors.Is(err, lockfile.ErrHeld) {
		return fmt.Errorf("--output %s: %w", path, err)
	}
	if err == nil {
		defer lock.Unlock()
		atomicfile.RemoveLeftovers(dir, filepath.Base(path))
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// JSON output, one convention for every command (docs/scripting.md, "JSON output"):
//
//   - --json prints one JSON object, indented, whose first key is "schema":
//     "updeb/<command>/v<N>", <command> being the command path after
//     "updeb" with its words joined by "-" (updeb/repo-history/v1);
//   - every key at every depth is snake_case (lower case, digits, "_");
//   - an empty list is [], never null;
//   - a time is RFC 3339 in UTC, whole seconds (2026-11-24T05:52:26Z: the
//     form jq's fromdate reads);
//   - a change that removes or renames a key or changes a value's type bumps
//     N; adding a key does not.
//
// A command that prints JSON declares it in its constructor with jsonOutput
// and prints with printJSON; --json given to any other command is a usage
// error. TestJSONOutputs finds the declaring commands in the command tree and
// runs each one: a new one without a test case fails it.

// schemaAnnotation holds a command's JSON schema version ("1") in
// cobra.Command.Annotations.
const schemaAnnotation = "updeb.json-schema-version"

// jsonOutput declares that cmd prints JSON under --json, schema version v.
func jsonOutput(cmd *cobra.Command, v int) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[schemaAnnotation] = strconv.Itoa(v)
	return cmd
}

// jsonSchema is cmd's schema name, "" when cmd prints no JSON.
func jsonSchema(cmd *cobra.Command) string {
	v, ok := cmd.Annotations[schemaAnnotation]
	if !ok {
		return ""
	}
	name := strings.ReplaceAll(strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), " ", "-")
	return "updeb/" + name + "/v" + v
}

// checkJSONFlag refuses --json for a command that prints no JSON (cobra's
// help and completion commands aside).
func checkJSONFlag(cmd *cobra.Command, json bool) error {
	if !json || jsonSchema(cmd) != "" {
		return nil
	}
	if isMeta(cmd) {
		return nil
	}
	var with []string
	walk(cmd.Root(), func(c *cobra.Command) {
		if jsonSchema(c) != "" {
			with = append(with, strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "))
		}
	})
	return invalidInput(fmt.Errorf("--json: %s prints no JSON", cmd.CommandPath()), "these commands do: "+strings.Join(with, ", "))
}

// isMeta reports help, completion and the shell's completion requests:
// commands about updeb, which take the global flags without using them.
func isMeta(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Name() == "help" || c.Name() == "completion" || strings.HasPrefix(c.Name(), cobra.ShellCompRequestCmd) {
			return true
		}
	}
	return false
}

// walk calls f on c and every command below it, depth first.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// printJSON writes v, which must encode as a JSON object, under cmd's schema:
// {"schema": "updeb/<command>/vN", ...v's keys}. HTML characters are not
// escaped, so that "Name <email>" stays readable for people and jq alike.
func printJSON(w io.Writer, cmd *cobra.Command, v any) error {
	schema := jsonSchema(cmd)
	if schema == "" {
		return fmt.Errorf("internal error: %s prints JSON without declaring it (jsonOutput)", cmd.CommandPath())
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jsonForm(v)); err != nil {
		return err
	}
	obj := bytes.TrimSpace(body.Bytes())
	if len(obj) < 2 || obj[0] != '{' {
		return fmt.Errorf("internal error: %s: JSON output must be an object, not %.20s", cmd.CommandPath(), obj)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(obj, &probe); err != nil {
		return err
	}
	var flat bytes.Buffer
	if own, ok := probe["schema"]; ok {
		// A library type that names its own schema (plan.Schema) must
		// name the command's, first.
		if !bytes.HasPrefix(obj, []byte(`{"schema":`)) || string(own) != strconv.Quote(schema) {
			return fmt.Errorf("internal error: %s: JSON output has its own \"schema\" key, %s, not %q first", cmd.CommandPath(), own, schema)
		}
		flat.Write(obj)
	} else {
		flat.WriteString(`{"schema":` + strconv.Quote(schema))
		if rest := bytes.TrimSpace(obj[1:]); !bytes.Equal(rest, []byte("}")) {
			flat.WriteByte(',')
		}
		flat.Write(obj[1:])
	}
	var out bytes.Buffer
	if err := json.Indent(&out, flat.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	// A name from a package or a server may hold a bidi override or a C1
	// control, which encoding/json writes as it is: to the terminal of
	// whoever reads the output too.
	_, err := w.Write(termtext.EscapeJSON(out.Bytes()))
	return err
}

// jsonForm returns v with every nil slice it holds (in structs, maps,
// slices and through pointers) made empty, so that it encodes as [] rather
// than null, the bytes of its strings (map keys too) that are not UTF-8
// written \xff (termtext.EscapeInvalid: encoding/json would make each U+FFFD,
// so that two file names differing in that byte read as one), and every time.Time in UTC and whole seconds, so that it
// encodes as 2026-11-24T05:52:26Z rather than with nanoseconds jq's fromdate
// refuses. Values behind pointers are changed in place; v itself is copied
// first.
func jsonForm(v any) any {
	if v == nil {
		return nil
	}
	c := reflect.New(reflect.TypeOf(v)).Elem()
	c.Set(reflect.ValueOf(v))
	fillLists(c, 0)
	return c.Interface()
}

// timeType is time.Time's type, whose values fillLists truncates.
var timeType = reflect.TypeFor[time.Time]()

// fillLists makes the nil slices below the settable value v empty, its
// strings valid UTF-8 and its times whole seconds in UTC; depth bounds a self-referencing value.
func fillLists(v reflect.Value, depth int) {
	if depth > 32 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface { // not settable: work on a copy
				c := reflect.New(e.Type()).Elem()
				c.Set(e)
				fillLists(c, depth+1)
				v.Set(c)
				return
			}
			fillLists(e, depth+1)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(v.Interface().(time.Time).UTC().Truncate(time.Second)))
			return
		}
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fillLists(f, depth+1)
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // a []byte becomes ""
			return
		}
		for i := range v.Len() {
			fillLists(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			fillLists(v.Index(i), depth+1)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(termtext.EscapeInvalid(v.String()))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			c := reflect.New(v.Type().Elem()).Elem()
			c.Set(v.MapIndex(k))
			fillLists(c, depth+1)
			if k.Kind() == reflect.String {
				if e := termtext.EscapeInvalid(k.String()); e != k.String() {
					v.SetMapIndex(k, reflect.Value{})
					k = reflect.ValueOf(e).Convert(k.Type())
				}
			}
			v.SetMapIndex(k, c)
		}
	}
}
