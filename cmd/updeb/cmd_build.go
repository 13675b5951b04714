package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/build"
	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/pkg/deb"
)

type buildOptions struct {
	arches        []string
	force         bool
	jobs          int
	compression   string
	provenanceKey string
}

func newBuildCmd(g *globalOptions) *cobra.Command {
	o := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "build [RECIPE...]",
		Short: "Fetch, verify and build .deb packages (with provenance) into the output folder",
		Long: `build runs the main job for each recipe and architecture: fetch every source
through the proxy (or the mirror) into the verifying cache, check the pinned
digests, OpenPGP or Sigstore signatures and upstream checksum files, take only the named
files out of the archives, and write reproducible .deb files and an in-toto
provenance record beside each one (DEB.intoto.json, a DSSE envelope signed with
build: provenance-key: or --provenance-key; unsigned without a key; check one
with 'updeb verify-provenance'). A recipe and architecture whose inputs and
outputs are unchanged is skipped; --force rebuilds it.

RECIPE is a name in the recipes folder (helm) or a path; none means all.`,
		Example: `  updeb build helm
  updeb build --arch amd64 kubernetes-1.36 etcd --out /srv/debs
  updeb --config testdata/demo/updeb.yaml --recipes testdata/demo/recipes build
  updeb build --json | jq '.builds[] | select(.skipped == false)'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBuild(cmd, g, o, args)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.arches, "arch", nil, "architectures to build (default: every architecture of each recipe)")
	f.BoolVar(&o.force, "force", false, "rebuild even when nothing changed")
	f.IntVarP(&o.jobs, "jobs", "j", 0, "builds at once (default: config build.parallel, else one per xz worker)")
	f.StringVar(&o.compression, "compression", "", "xz (default), gzip, zstd or none")
	f.StringVar(&o.provenanceKey, "provenance-key", "", "armored secret key that signs the provenance records (default: config build.provenance-key; none: unsigned records)")
	return jsonOutput(cmd, 1)
}

// loadRecipes resolves and loads RECIPE arguments; any invalid recipe stops
// everything (exit 2) with every finding listed.
func loadRecipes(g *globalOptions, args []string) ([]*recipe.Recipe, error) {
	return loadRecipesWith(g, args, recipe.LoadOptions{})
}

// loadRecipesWith is loadRecipes loading with lo.
func loadRecipesWith(g *globalOptions, args []string, lo recipe.LoadOptions) ([]*recipe.Recipe, error) {
	paths, err := resolveRecipes(g, args)
	if err != nil {
		return nil, err
	}
	var (
		out  []*recipe.Recipe
		errs []error
	)
	for _, p := range paths {
		r, err := recipe.Load(p, lo)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	if len(errs) > 0 {
		return nil, invalidInput(errors.Join(errs...), "run 'updeb lint' for the full report")
	}
	return out, nil
}

// planOptions are the site settings of the config that shape every plan.
// There is no built-in maintainer: an invented address (updeb@localhost) is
// what lintian calls bogus-mail-host, so a recipe without one needs
// build: maintainer: in the config, and says so (exit 2).
func planOptions(c *config.Config) recipe.PlanOptions {
	return recipe.PlanOptions{LocalSuffix: c.Build.VersionSuffix, DefaultMaintainer: c.Build.Maintainer}
}

func (g *globalOptions) outFolder(c *config.Config) string {
	return first(g.outDir, c.Out, "out")
}

func runBuild(cmd *cobra.Command, g *globalOptions, o *buildOptions, args []string) error {
	s, err := g.openSession(args, o.arches)
	if err != nil {
		return err
	}
	defer s.Close()
	cfg := s.cfg
	comp := first(o.compression, cfg.Build.Compression)
	if err := config.CheckCompression(comp); err != nil {
		return &inputError{err: err}
	}
	res, err := g.runResources(cfg.Build, o.jobs)
	if err != nil {
		return err
	}
	ss, err := s.sigstore()
	if err != nil {
		return err
	}
	key, err := readProvenanceKey(first(o.provenanceKey, cfg.Build.ProvenanceKey))
	if err != nil {
		return err
	}
	opts := build.Options{
		Fetcher:       s.fetcher,
		Sigstore:      ss,
		OutDir:        g.outFolder(cfg),
		Now:           time.Now,
		Logger:        g.logger(),
		UpdebVersion:  version,
		Compression:   deb.Compression(comp),
		Force:         o.force,
		Parallel:      res.Parallel,
		Pool:          res.Pool,
		XZMode:        deb.XZMode(cfg.Build.XZMode),
		PlanOptions:   planOptions(cfg),
		ProvenanceKey: key,
		Progress:      g.buildProgress(),
	}
	results, runErr := build.Run(cmd.Context(), s.jobs, opts)
	if g.json {
		if err := printJSON(cmd.OutOrStdout(), cmd, struct {
			Builds []build.Result `json:"builds"`
		}{results}); err != nil {
			return err
		}
	} else {
		printBuildSummary(cmd.OutOrStdout(), opts.OutDir, results)
	}
	return runErr
}

// readProvenanceKey loads the key that signs provenance records ("" for none).
func readProvenanceKey(path string) (*signkey.Key, error) {
	if path == "" {
		return nil, nil
	}
	data, err := confined.ReadFile(path, signkey.MaxFileSize)
	if err != nil {
		return nil, invalidInput(err, "build: provenance-key: names the armored secret key 'updeb keys generate' wrote (PREFIX.secret.asc)")
	}
	return signkey.Read(bytes.NewReader(data), path)
}

// buildJobs pairs each recipe with the requested architectures it has.
func buildJobs(recipes []*recipe.Recipe, arches []string) ([]build.Job, error) {
	var jobs []build.Job
	for _, r := range recipes {
		for _, a := range r.ArchNames() {
			if len(arches) > 0 && !contains(arches, a) {
				continue
			}
			jobs = append(jobs, build.Job{Recipe: r, Arch: a})
		}
	}
	if len(jobs) == 0 {
		return nil, usageErrorf("no recipe has the architecture(s) %s", strings.Join(arches, ", "))
	}
	return jobs, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func printBuildSummary(w io.Writer, out string, results []build.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RECIPE\tARCH\tVERSION\tSTATUS\tPACKAGES\tTIME")
	built, skipped, failed := 0, 0, 0
	for _, r := range results {
		status := "built"
		switch {
		case r.Err != nil:
			status, failed = "FAILED", failed+1
		case r.Skipped:
			status, skipped = "up to date", skipped+1
		default:
			built++
		}
		var files []string
		for _, o := range r.Outputs {
			files = append(files, o.File)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Recipe, r.Arch, r.Version, status, strings.Join(files, " "), r.Duration.Round(time.Millisecond))
	}
	tw.Flush()
	fmt.Fprintf(w, "%d built, %d up to date, %d failed; packages in %s\n", built, skipped, failed, out)
}
