package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/scriptlint"
)

type lintResult struct {
	Recipe   string           `json:"recipe"`
	OK       bool             `json:"ok"`
	Findings []recipe.Finding `json:"findings"`
	// Warnings are worth a look but do not make the recipe invalid (a
	// world-writable file, an owner dpkg may not know, shellcheck's
	// warnings on a maintainer-script fragment).
	Warnings []recipe.Finding `json:"warnings"`
}

func newLintCmd(g *globalOptions) *cobra.Command {
	return jsonOutput(&cobra.Command{
		Use:   "lint [RECIPE...]",
		Short: "Validate recipes offline",
		Long: `Lint loads each recipe strictly: unknown fields, wrong types, missing fields,
templates that do not render for every architecture, malformed or missing
digests, file mappings that name no source, missing keyrings and recipe files.
Recipes linted together are also checked against each other: two with one
name, or two that make one package file (name, version, architecture), are a
finding of the later one (build refuses them together too); two packages of
other names that install one path, neither conflicting with the other (the
packages of a versioned series: kubelet-1.31, kubelet-1.32), a warning.
Each maintainer-script fragment is checked with sh -n (the shell that runs it)
and, when it is installed, shellcheck --shell=sh --severity=warning.
Each systemd unit of the recipe's folder that a package installs is read as
systemd 252 (Debian 12's) reads it: a unit where systemd never looks, a line
or section it drops, no ExecStart=, a command or User= no node with the
package can have are findings; a command or environment file another package
may bring, an unknown key, a unit systemctl enable cannot enable, warnings
(recipes/README.md, "Systemd units").
Each finding is printed as FILE:LINE:COL: message, each warning as
FILE:LINE:COL: warning: message. Exit 2 when there is any finding; warnings
alone exit 0.`,
		Example: `  updeb lint              # every recipe in ./recipes
  updeb lint helm etcd    # recipes/helm.yaml and recipes/etcd.yaml
  updeb lint --recipes testdata/demo/recipes --json
  updeb lint ./my/new.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := resolveRecipes(cmd.Context(), g, args)
			if err != nil {
				return err
			}
			tools := shellTools(g)
			out := cmd.OutOrStdout()
			var (
				results []lintResult
				loaded  []*recipe.Recipe
			)
			for _, p := range paths {
				// SIGINT or SIGTERM ends the run between recipes: lint
				// writes nothing but its report, which is then left out.
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				res := lintResult{Recipe: p, OK: true, Findings: []recipe.Finding{}, Warnings: []recipe.Finding{}}
				r, err := recipe.Load(p, recipe.LoadOptions{})
				var e *recipe.Error
				switch {
				case errors.As(err, &e):
					res.OK, res.Findings = false, e.Findings
				case err != nil: // unreadable (missing, a FIFO, too large): invalid input, as for build
					return invalidInput(err, orPathHint(err, "name a recipe file (recipes/NAME.yaml) that is a regular file"))
				default:
					loaded = append(loaded, r)
					res.Warnings = append(res.Warnings, r.Warnings...)
					findings, warnings, err := lintFragments(cmd.Context(), tools, p, r)
					if err != nil {
						return err
					}
					res.Findings, res.Warnings = append(res.Findings, findings...), append(res.Warnings, warnings...)
				}
				results = append(results, res)
			}
			// What no recipe shows alone (two of one name, two making one
			// package file; packages that install one path) is a finding
			// (or warning) of the later one.
			findings, warnings := recipe.CheckTogether(loaded)
			for _, f := range findings {
				i := slices.IndexFunc(results, func(res lintResult) bool { return res.Recipe == f.File })
				results[i].Findings = append(results[i].Findings, f)
			}
			for _, w := range warnings {
				i := slices.IndexFunc(results, func(res lintResult) bool { return res.Recipe == w.File })
				results[i].Warnings = append(results[i].Warnings, w)
			}
			nFindings, nBad, nWarnings := 0, 0, 0
			for i := range results {
				res := &results[i]
				res.OK = len(res.Findings) == 0
				if !res.OK {
					nBad++
					nFindings += len(res.Findings)
				}
				nWarnings += len(res.Warnings)
				if !g.json {
					for _, f := range res.Findings {
						fmt.Fprintln(out, f.String())
					}
					for _, w := range res.Warnings {
						w.Message = "warning: " + w.Message
						fmt.Fprintln(out, w.String())
					}
				}
			}
			if g.json {
				if err := printJSON(out, cmd, map[string]any{"recipes": results, "findings": nFindings, "warnings": nWarnings}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "%d recipe(s) checked: %d ok, %d with %d finding(s)", len(paths), len(paths)-nBad, nBad, nFindings)
				if nWarnings > 0 {
					fmt.Fprintf(out, "; %d warning(s)", nWarnings)
				}
				fmt.Fprintln(out)
			}
			if nFindings > 0 {
				return invalidInput(fmt.Errorf("%d of %d recipe(s) are invalid", nBad, len(paths)), "fix the findings above (FILE:LINE:COL: message); recipes/README.md documents every field")
			}
			return nil
		},
	}, 1)
}

// shellTools finds sh and shellcheck on PATH for the fragment checks.
func shellTools(g *globalOptions) scriptlint.Tools {
	var t scriptlint.Tools
	t.Sh, _ = exec.LookPath("sh")
	t.ShellCheck, _ = exec.LookPath("shellcheck")
	if t.Sh == "" {
		g.logger().Warn("sh is not on PATH: maintainer-script fragments are not checked with sh -n")
	}
	return t
}

// lintFragments checks each maintainer-script fragment of r with the shell
// tools; a problem is a finding or a warning at the fragment's line, in the
// fragment's file named as the recipe path p names its folder.
func lintFragments(ctx context.Context, tools scriptlint.Tools, p string, r *recipe.Recipe) (findings, warnings []recipe.Finding, err error) {
	for _, f := range r.Fragments() {
		data, err := r.ReadFragment(f)
		if err != nil {
			return nil, nil, err // Load read it a moment ago
		}
		text, token := recipe.FragmentForLint(data)
		problems, err := scriptlint.Check(ctx, tools, text)
		if err != nil {
			return nil, nil, err
		}
		file := filepath.Join(filepath.Dir(p), filepath.FromSlash(r.FilesRel()), filepath.FromSlash(f.File))
		if token > 0 && tools.Sh != "" && !slices.ContainsFunc(problems, func(pr scriptlint.Problem) bool { return pr.Tool == "sh -n" }) {
			command, err := scriptlint.ReadsAsCommand(ctx, tools.Sh, text, token)
			if err != nil {
				return nil, nil, err
			}
			if !command {
				findings = append(findings, recipe.Finding{File: file, Line: token, Col: 1, Message: fmt.Sprintf("%s fragment: the #UPDEB# line is inside a here-document or a quoted string: updeb's part of the script would be text there, never run; put the line where a command may stand", f.Script)})
			}
		}
		for _, pr := range problems {
			x := recipe.Finding{File: file, Line: pr.Line, Col: max(pr.Col, 1), Message: fmt.Sprintf("%s fragment: %s: %s", f.Script, pr.Tool, pr.Message)}
			if pr.Error {
				findings = append(findings, x)
			} else {
				warnings = append(warnings, x)
			}
		}
	}
	return findings, warnings, nil
}
