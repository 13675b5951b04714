package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/pipeline"
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
with 'updeb verify-provenance'). Packages and records are dated by the
recipe's release-date: SOURCE_DATE_EPOCH in the environment is ignored, with
a warning. A recipe and architecture whose inputs and outputs are unchanged
is skipped; --force rebuilds it.

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
	f.IntVarP(&o.jobs, "jobs", "j", 0, fmt.Sprintf("builds at once, 1 to %d (default: config build.parallel, else one per xz worker)", config.MaxParallel))
	f.StringVar(&o.compression, "compression", "", "xz (default), gzip, zstd or none")
	f.StringVar(&o.provenanceKey, "provenance-key", "", "armored secret key that signs the provenance records (default: config build.provenance-key; none: unsigned records)")
	return jsonOutput(cmd, 1)
}

func (g *globalOptions) outFolder(c *config.Config) string {
	return first(g.outDir, c.Out, "out")
}

func runBuild(cmd *cobra.Command, g *globalOptions, o *buildOptions, args []string) error {
	if cmd.Flags().Changed("jobs") && (o.jobs < 1 || o.jobs > config.MaxParallel) {
		return usageErrorf("--jobs %d: want 1 to %d builds at once (build.parallel's range)", o.jobs, config.MaxParallel)
	}
	s, err := g.openSession(cmd.Context(), args, o.arches)
	if err != nil {
		return err
	}
	defer s.Close()
	g.warnSourceDateEpoch()
	cfg := s.cfg
	comp := first(o.compression, cfg.Build.Compression)
	if err := config.CheckCompression(comp); err != nil {
		return &inputError{err: err}
	}
	res, err := g.runResources(cfg.Build, o.jobs)
	if err != nil {
		return err
	}
	so, err := s.sourceOptions()
	if err != nil {
		return err
	}
	key, err := g.readProvenanceKey(first(o.provenanceKey, cfg.Build.ProvenanceKey))
	if err != nil {
		return err
	}
	opts := pipeline.Options{
		Source:         so,
		OutDir:         g.outFolder(cfg),
		UpdebVersion:   version,
		Compression:    deb.Compression(comp),
		Force:          o.force,
		Parallel:       res.Parallel,
		Pool:           res.Pool,
		XZMode:         deb.XZMode(cfg.Build.XZMode),
		ResolveOptions: resolveOptions(cfg),
		ProvenanceKey:  key,
		Progress:       g.buildProgress(),
	}
	results, runErr := pipeline.Run(cmd.Context(), s.jobs, opts)
	if results == nil && runErr != nil {
		// No build started (the output folder, its lock): a table or
		// "builds": [] would say that nothing failed.
		return runErr
	}
	if g.json {
		if err := printJSON(cmd.OutOrStdout(), cmd, struct {
			Builds []pipeline.Result `json:"builds"`
		}{results}); err != nil {
			return err
		}
	} else {
		printBuildSummary(cmd.OutOrStdout(), opts.OutDir, results)
	}
	return runErr
}

// readProvenanceKey loads the key that signs provenance records ("" for none).
func (g *globalOptions) readProvenanceKey(path string) (*signkey.Key, error) {
	if path == "" {
		return nil, nil
	}
	data, err := g.readSecretKey(path, "build: provenance-key: names the armored secret key 'updeb keys generate' wrote (PREFIX.secret.asc)")
	if err != nil {
		return nil, err
	}
	return signkey.Read(bytes.NewReader(data), path)
}

func printBuildSummary(w io.Writer, out string, results []pipeline.Result) {
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
