package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/compat"
)

// TestConstraintsAgree: updeb lint (a recipe's requires and watch track) and
// updeb compat (requires, through the recipes folder and through the compat
// package directly) accept and refuse exactly the same constraints, and an
// accepted constraint means the same thing everywhere: the verdict on the
// release set's kubernetes version is written down here by hand.
func TestConstraintsAgree(t *testing.T) {
	const (
		invalid = "invalid"
		allows  = "allows"
		refuses = "refuses"
	)
	for _, tc := range []struct {
		constraint, kubernetes, want string
	}{
		// Every constraint the repository's recipes and testdata use.
		{">=1.36 <1.37", "1.36.0", allows},
		{">=1.36 <1.37", "1.35.8", refuses},
		{">=1.30 <1.34", "1.33.9", allows},
		{">=1.30 <1.34", "1.35.8", refuses},
		{">=1.35", "1.35.8", allows},
		{">=1.27 <1.31", "1.30.14", allows},
		{">=1.29, <1.35", "1.35.8", refuses},
		{">=1.29 <1.37", "1.35.8", allows},
		{">=1.0", "1.35.8", allows},
		{"1.36.x", "1.36.0", allows},
		{"3.x", "1.35.8", refuses},
		{"1.36", "1.36.2", allows},
		{"1.x", "1.35.8", allows},
		// The spellings lint and compat used to disagree on.
		{">>1.30", "1.35.8", allows},
		{">>1.35", "1.35.8", refuses},
		{"<<1.35", "1.35.8", refuses},
		{"<<1.36", "1.35.8", allows},
		{"~1.35", "1.35.8", allows},
		{"~1.35.9", "1.35.8", refuses},
		{"~1.34", "1.35.8", refuses},
		{"1.35.x", "1.35.8", allows},
		{"1.35.*", "1.34.1", refuses},
		{">= 1.30, < 1.36", "1.35.8", allows},
		{"==1.35.8", "1.35.8", allows},
		{"!=1.35.8", "1.35.8", refuses},
		{">1.35", "1.35.8", refuses},
		{"<=1.35", "1.35.8", allows},
		{"<1.35.8", "1.35.8-rc.1", allows},
		{">=1.35.8-rc.1", "1.35.8", allows},
		{"v1.35.x", "v1.35.8", allows},
		// Refused by both.
		{">=1:1.30", "1.35.8", invalid},
		{"^1.30", "1.35.8", invalid},
		{"~>1.30", "1.35.8", invalid},
		{">=1.30 || <1.20", "1.35.8", invalid},
		{">=", "1.35.8", invalid},
		{">=1.31.x", "1.35.8", invalid},
		{"latest", "1.35.8", invalid},
		{">=1.30 <", "1.35.8", invalid},
		{"1.35|1.36", "1.35.8", invalid},
		{" , ", "1.35.8", invalid},
	} {
		t.Run(tc.constraint+"@"+tc.kubernetes, func(t *testing.T) {
			dir := constraintProject(t, tc.constraint)
			set := filepath.Join(dir, "sets.yaml")
			if err := os.WriteFile(set, []byte("sets:\n  - name: s\n    components: {kubernetes: "+tc.kubernetes+", hello: 1.2.3}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			recipes := filepath.Join(dir, "recipes")

			var stdout, stderr bytes.Buffer
			lint := run(context.Background(), []string{"lint", "--recipes", recipes}, &stdout, &stderr)
			if (lint == 0) != (tc.want != invalid) {
				t.Errorf("updeb lint: exit %d, want the constraint %s\n%s%s", lint, tc.want, stdout.String(), stderr.String())
			}
			if tc.want == invalid && !strings.Contains(stdout.String(), "invalid constraint") {
				t.Errorf("updeb lint does not say why:\n%s", stdout.String())
			}

			stdout.Reset()
			stderr.Reset()
			code := run(context.Background(), []string{"compat", "--json", "--set", set, "--recipes", recipes, "--now", "2026-08-22"}, &stdout, &stderr)
			got := invalid
			if code != exitUsage {
				var report compat.Report
				if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
					t.Fatalf("updeb compat: exit %d, output is not a report: %v\n%s%s", code, err, stdout.String(), stderr.String())
				}
				got = allows
				for _, f := range report.Findings {
					if f.Rule == compat.RuleRequires {
						got = refuses
					}
				}
			}
			if got != tc.want {
				t.Errorf("updeb compat: exit %d, the constraint %s; want %s\n%s%s", code, got, tc.want, stdout.String(), stderr.String())
			}

			// The compat package on its own (what the command calls once the
			// recipes are loaded) agrees too.
			requires := map[string]map[string]string{"hello": {"kubernetes": tc.constraint}}
			err := compat.ValidateRequires(compat.Requirements(requires))
			if (err == nil) != (tc.want != invalid) {
				t.Errorf("compat.ValidateRequires: %v, want the constraint %s", err, tc.want)
			}
			if err == nil {
				sets, err := compat.LoadReleaseSets(set)
				if err != nil {
					t.Fatal(err)
				}
				r := compat.Evaluate(sets, compat.Inputs{Requires: compat.Requirements(requires), Now: time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC)})
				pkgGot := allows
				for _, f := range r.Findings {
					if f.Rule == compat.RuleRequires {
						pkgGot = refuses
					}
				}
				if pkgGot != tc.want {
					t.Errorf("compat.Check: the constraint %s, want %s", pkgGot, tc.want)
				}
			}
		})
	}
}

// constraintProject writes a project with the hello fixture recipe whose
// requires and watch track are both constraint, and returns its root.
func constraintProject(t *testing.T, constraint string) string {
	t.Helper()
	fixtures := filepath.Join("..", "..", "internal", "recipe", "testdata", "recipes")
	hello, err := os.ReadFile(filepath.Join(fixtures, "hello.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := "'" + strings.ReplaceAll(constraint, "'", "''") + "'"
	text := string(hello)
	for old, repl := range map[string]string{
		`track: "1.x"`:                           "track: " + quoted,
		`requires: {kubernetes: ">=1.27 <1.31"}`: "requires: {kubernetes: " + quoted + "}",
	} {
		if !strings.Contains(text, old) {
			t.Fatalf("the hello fixture no longer has %s", old)
		}
		text = strings.Replace(text, old, repl, 1)
	}
	return helloProject(t, text)
}
