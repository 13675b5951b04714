package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/updeb/updeb/internal/recipe"
)

type lintResult struct {
	Recipe   string           `json:"recipe"`
	OK       bool             `json:"ok"`
	Findings []recipe.Finding `json:"findings"`
}

func newLintCmd(g *globalOptions) *cobra.Command {
	return jsonOutput(&cobra.Command{
		Use:   "lint [RECIPE...]",
		Short: "Validate recipes offline",
		Long: `Lint loads each recipe strictly: unknown fields, wrong types, missing fields,
templates that do not render for every architecture, malformed or missing
digests, file mappings that name no source, missing keyrings and recipe files.
Each finding is printed as FILE:LINE:COL: message. Exit 2 when there is any.`,
		Example: `  updeb lint              # every recipe in ./recipes
  updeb lint helm etcd    # recipes/helm.yaml and recipes/etcd.yaml
  updeb lint --recipes testdata/recipes --json
  updeb lint ./my/new.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := resolveRecipes(g, args)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			var results []lintResult
			nFindings, nBad := 0, 0
			for _, p := range paths {
				res := lintResult{Recipe: p, OK: true, Findings: []recipe.Finding{}}
				_, err := recipe.Load(p, recipe.LoadOptions{})
				var e *recipe.Error
				switch {
				case errors.As(err, &e):
					res.OK, res.Findings = false, e.Findings
				case err != nil: // unreadable (missing, a FIFO, too large): invalid input, as for build
					return invalidInput(err, "name a recipe file (recipes/NAME.yaml) that is a regular file")
				}
				if !res.OK {
					nBad++
					nFindings += len(res.Findings)
				}
				results = append(results, res)
				if !g.json {
					for _, f := range res.Findings {
						fmt.Fprintln(out, f.String())
					}
				}
			}
			if g.json {
				if err := printJSON(out, cmd, map[string]any{"recipes": results, "findings": nFindings}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "%d recipe(s) checked: %d ok, %d with %d finding(s)\n", len(paths), len(paths)-nBad, nBad, nFindings)
			}
			if nFindings > 0 {
				return invalidInput(fmt.Errorf("%d of %d recipe(s) are invalid", nBad, len(paths)), "fix the findings above (FILE:LINE:COL: message); recipes/README.md documents every field")
			}
			return nil
		},
	}, 1)
}
