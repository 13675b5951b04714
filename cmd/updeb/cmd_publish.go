package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/deb"
)

// readPackage reads a .deb to publish with our own reader, which refuses a
// package that dpkg would refuse or that would break the repository's
// index (see deb.Inspect), or whose md5sums is not true of its files
// (deb.Info.Problems; its Warnings are logged): its control paragraph and, from the same
// reading, the paths it installs (for the Contents indices), and the
// SHA256 of the bytes read, which the copy into the pool must have.
func readPackage(ctx context.Context, path string, log *slog.Logger) (repo.Package, error) {
	f, size, err := deb.OpenPackage(path)
	if err != nil {
		return repo.Package{}, err
	}
	defer f.Close()
	info, err := deb.Inspect(ctx, f, size, archive.Limits{})
	if err == nil {
		// dpkg would install it; what it says of its files must be true
		// before a repository serves it to every machine.
		err = info.ProblemsError()
	}
	if err != nil {
		return repo.Package{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range info.Warnings {
		log.Warn(w.Short(), "file", path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, ctxio.Reader(ctx, io.NewSectionReader(f, 0, size))); err != nil {
		return repo.Package{}, fmt.Errorf("%s: %w", path, err)
	}
	return repo.Package{Path: path, Control: info.Control, Contents: repo.ContentsOf(info), SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func newPublishCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	cmd := &cobra.Command{
		Use:   "publish DEB...",
		Short: "Add packages to the apt repository and re-sign it",
		Long: `publish copies .deb files into the repository's pool and switches in a new signed
generation of the suite's metadata atomically. Every version stays listed. A package
already published with the same bytes is left as it is; with other bytes the publish is
refused (exit 1) and the repository is unchanged. A package dpkg would refuse, or whose
md5sums is not true of its files (a wrong md5, a file listed that it lacks: what 'updeb
inspect' lists as problems), is refused (exit 2), and nothing is published; a file md5sums
leaves out is logged as a warning.

A suite keeps its settings (Origin, Label, Codename, Description, architectures, signing
keys, valid-for, keep): a flag changes them; the config's repo: values set up a new suite
only and never override what a suite stores (a warning names any that differ, and the
flag that changes it); nothing given keeps them. A change apt clients refuse (Origin, Label, Codename, dropping a signing key) is refused
(exit 1) unless --allow-field-change.`,
		Example: `  updeb publish --repo /srv/apt --key repo.secret.asc out/*.deb
  updeb publish --suite bookworm-wikimedia --component component/kubernetes131 \
      --origin Wikimedia --architectures amd64,arm64 kubernetes-client_1.31.4-1_amd64.deb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := o.open(g)
			if err != nil {
				return err
			}
			// One generation per suite, with every component of it: atomic.
			groups := map[string]map[string][]repo.Package{}
			var order []string
			pending := pendingCommits()
			for _, path := range args {
				if dir := filepath.Dir(path); pending(dir) {
					return invalidInput(fmt.Errorf("%s: the build that wrote %s was killed while it moved a recipe's packages in; some may be missing", path, dir),
						"run 'updeb build' with the same output folder (it finishes the move), then publish again")
				}
				pkg, err := readPackage(cmd.Context(), path, g.logger())
				if err != nil {
					return invalidInput(err, "the repository is unchanged; nothing is published when one package is refused")
				}
				s, c, err := o.target(path, pkg.SHA256)
				if err != nil {
					return err
				}
				if groups[s] == nil {
					groups[s] = map[string][]repo.Package{}
					order = append(order, s)
				}
				groups[s][c] = append(groups[s][c], pkg)
			}
			// Every suite's packages are checked before any suite is
			// written; a failure while writing leaves those written before
			// it published, and they are reported.
			results, pubErr := r.PublishSuites(cmd.Context(), groups)
			if pubErr != nil && len(results) == 0 {
				return pubErr
			}
			res := &repo.PublishResult{}
			var summary []string
			for _, suite := range order {
				one, ok := results[suite]
				if !ok {
					continue
				}
				res.Added = append(res.Added, one.Added...)
				res.Unchanged = append(res.Unchanged, one.Unchanged...)
				res.Restored = append(res.Restored, one.Restored...)
				res.Generation = one.Generation
				for _, c := range slices.Sorted(maps.Keys(groups[suite])) {
					summary = append(summary, fmt.Sprintf("suite %s component %s: generation %d in %s", suite, c, one.Generation, strings.TrimSuffix(o.dir, "/")))
				}
			}
			if pubErr != nil {
				if !g.json {
					printPublished(cmd.OutOrStdout(), res, summary)
				}
				return pubErr
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cmd, res)
			}
			return printPublished(cmd.OutOrStdout(), res, summary)
		},
	}
	o.addFlags(cmd, true)
	return jsonOutput(cmd, 1)
}

// printPublished prints what a publish did, and a summary line per suite
// and component written.
func printPublished(out io.Writer, res *repo.PublishResult, summary []string) error {
	for _, e := range res.Added {
		fmt.Fprintf(out, "added     %s %s %s -> %s\n", e.Package, e.Version, e.Architecture, e.Filename)
	}
	for _, e := range res.Unchanged {
		fmt.Fprintf(out, "unchanged %s %s %s (already published with the same bytes)\n", e.Package, e.Version, e.Architecture)
	}
	for _, e := range res.Restored {
		fmt.Fprintf(out, "restored  %s %s %s -> %s (its pool file was missing or damaged)\n", e.Package, e.Version, e.Architecture, e.Filename)
	}
	_, err := fmt.Fprintln(out, strings.Join(summary, "\n"))
	return err
}

// pendingCommits returns pipeline.PendingCommit, each folder looked at once:
// publish out/*.deb looked for a killed build's journal once for each
// package, listing the output folder's state folder (a record for each
// recipe and architecture) each time, and the time grew with the packages
// times the recipes.
func pendingCommits() func(dir string) bool {
	seen := map[string]bool{}
	return func(dir string) bool {
		pending, ok := seen[dir]
		if !ok {
			pending = pipeline.PendingCommit(dir)
			seen[dir] = pending
		}
		return pending
	}
}
