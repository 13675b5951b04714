package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/recipe"
)

type compatOptions struct {
	setFile string
	format  string
	output  string
	now     string // YYYY-MM-DD; empty = today (UTC)

}

func newCompatCmd(g *globalOptions) *cobra.Command {
	o := &compatOptions{}
	cmd := &cobra.Command{
		Use:   "compat",
		Short: "Check that the versions deployed together work together",
		Long: `compat reads a release set file (the versions deployed together, one set per cluster or
Kubernetes minor) and checks Kubernetes' and kubeadm's version-skew policies (a rolling
upgrade {from: ..., to: ...} at its start, with kube-apiserver moved, with the control
plane moved, and at its end), Helm's n-3 table, containerd's recommended table, Istio's,
Calico's and Cilium's supported Kubernetes versions, kubeadm's etcd, cri-tools' matrix,
the recipes' requires, and end-of-life dates. The tables come from the recipes repository's data file when there is one (see
'updeb data'), else, table by table, the newer of the bundled and refreshed copies; stderr says which.
Exit 1 on a violation or an end-of-life component; warnings do not change the exit code.`,
		Example: `  updeb compat                                  # release-sets.yaml in the working folder
  updeb compat --set clusters.yaml --format markdown
  updeb compat --format html --output compat.html --now 2026-08-22`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCompat(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.setFile, "set", "release-sets.yaml", "release set file")
	f.StringVar(&o.format, "format", "table", "output format: table, markdown, csv or html")
	f.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of stdout (replaced whole, but never a file compat reads: the release sets, the config, a recipe, the data file; a FIFO or device is written into)")
	f.StringVar(&o.now, "now", "", "check end-of-life as of this day, YYYY-MM-DD (default: today, UTC)")
	return jsonOutput(cmd, 1)
}

func runCompat(cmd *cobra.Command, g *globalOptions, o *compatOptions) error {
	format := compat.Format(o.format)
	known := false
	for _, f := range compat.Formats() {
		known = known || f == format
	}
	if !known {
		return usageErrorf("--format %q: want table, markdown, csv or html", o.format)
	}
	if g.json && cmd.Flags().Changed("format") {
		return usageErrorf("--format and --json each choose the output: give one")
	}
	now := time.Now().UTC()
	if o.now != "" {
		t, err := time.Parse(time.DateOnly, o.now)
		if err != nil {
			return usageErrorf("--now %q: want a day as YYYY-MM-DD", o.now)
		}
		now = t
	}
	sets, err := compat.LoadReleaseSets(o.setFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return invalidInput(err, "name the release set file with --set, or run updeb compat where release-sets.yaml is (the top of the recipes repository, beside recipes/)")
	case err != nil:
		return invalidInput(err, "")
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	rs, err := compatRecipes(cmd, g)
	if err != nil {
		return err
	}
	if o.output != "" {
		if err := notAnInput("output", o.output, g.inputFiles(cfg, o.setFile, rs)...); err != nil {
			return err
		}
	}
	data, err := g.dataSet(cfg, now, true)
	if err != nil {
		return err
	}
	report, err := compat.Check(sets, rs, compat.Inputs{Now: now, Tables: data.Tables, EOL: data.EOL.Data, EOLCopy: data.EOL.Name()})
	switch {
	case errors.Is(err, compat.ErrRequires):
		return invalidInput(err, "fix the recipe's requires")
	case errors.Is(err, compat.ErrUnresolved):
		return invalidInput(fmt.Errorf("%s: %w", o.setFile, err), "a release set's recipe:NAME must name a recipe of the --recipes folder (NAME.yaml there) that ships that component (COMPONENT.yaml or COMPONENT-MAJOR.MINOR.yaml)")
	case err != nil:
		return invalidInput(fmt.Errorf("%s: %w", o.setFile, err), "")
	}
	if format == compat.FormatHTML && rs != nil {
		p, err := plan.Make(cmd.Context(), rs, data.EOL, plan.Options{Now: now, Tables: data.Tables})
		if err != nil {
			return err
		}
		if report.Extra, err = plan.HTML(p); err != nil {
			return err
		}
	}

	var out strings.Builder
	if g.json {
		err = printJSON(&out, cmd, report)
	} else {
		err = compat.Render(&out, report, format)
	}
	if err != nil {
		return err
	}
	if o.output == "" {
		_, err = io.WriteString(cmd.OutOrStdout(), out.String())
	} else {
		err = writeOutput(cmd.Context(), o.output, []byte(out.String()))
	}
	if err != nil {
		return err
	}
	if n := report.Count(compat.Violation); n > 0 {
		hint := "see the findings above"
		if o.output != "" {
			hint = "see the findings in " + o.output
		}
		return checkFailed(fmt.Errorf("%d compatibility violation(s) in %s", n, o.setFile), hint)
	}
	return nil
}

// inputFiles are the files compat and plan read, which their --output and
// --message may not replace (notAnInput): the release sets, the config, the
// recipes repository's data file and each recipe.
func (g *globalOptions) inputFiles(cfg *config.Config, setFile string, rs []*recipe.Recipe) []string {
	files := []string{setFile, cfg.File, g.repositoryDataFile(cfg)}
	for _, r := range rs {
		files = append(files, r.Path)
	}
	return files
}

// compatRecipes loads every recipe in the --recipes folder. Without a
// recipes folder there are none (nil), unless --recipes named it explicitly.
func compatRecipes(cmd *cobra.Command, g *globalOptions) ([]*recipe.Recipe, error) {
	if fi, err := os.Stat(g.recipesDir); (err != nil || !fi.IsDir()) && !cmd.Flags().Changed("recipes") {
		return nil, nil
	}
	return loadRecipes(cmd.Context(), g, nil)
}
