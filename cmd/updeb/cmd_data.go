package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/supportdata"
)

type dataRefreshOptions struct {
	allowDropped bool
}

func newDataCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Refresh or show the support data (end-of-life dates) outdated, compat and plan use",
		Long: `The support data is the release cycles of the products updeb packages (Kubernetes,
etcd, containerd, Calico, Istio): their end of active support and end of life, their
latest patch, and Istio's supported Kubernetes versions. A snapshot is bundled with
updeb; 'updeb data refresh' fetches current data from the endoflife.date API (data:
endoflife-url: in the config for a mirror) into the state folder. Commands use the
newer of the two and say which, and warn when it is older than data: max-age-days:
(default 30).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.AddCommand(newDataRefreshCmd(g), newDataStatusCmd(g))
	return cmd
}

func newDataRefreshCmd(g *globalOptions) *cobra.Command {
	o := &dataRefreshOptions{}
	cmd := &cobra.Command{
		Use:   "refresh",
		Short: "Fetch current end-of-life data from endoflife.date into the state folder",
		Long: `refresh fetches every product's release cycles from the endoflife.date API through
the configured proxy, checks each answer (JSON of the expected shape, bounded in size,
every cycle with its dates and latest release, which must hold together: the latest
release is one of the cycle, nothing released after today, no end of support or life
before the release or decades after it; no cycle the copy in use has may be
missing), and replaces STATE/support/eol.yaml atomically. Anything wrong and the copy
that was there stays: exit 3 for an unusable or unreachable answer, exit 1 when cycles
are missing (accept that with --allow-dropped after checking why).`,
		Example: `  updeb data refresh
  updeb data refresh --state /var/lib/updeb
  updeb data refresh --allow-dropped   # accept an answer without some old cycles`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDataRefresh(cmd, g, o) },
	}
	cmd.Flags().BoolVar(&o.allowDropped, "allow-dropped", false, "accept new data that lacks release cycles the copy in use has (recorded in its header)")
	return jsonOutput(cmd, 1)
}

func runDataRefresh(cmd *cobra.Command, g *globalOptions, o *dataRefreshOptions) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	state, err := g.stateDirFor(cfg)
	if err != nil {
		return err
	}
	f, err := g.newFetcher(cfg)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := supportdata.Refresh(cmd.Context(), supportdata.RefreshOptions{
		Client: f, ProductURL: cfg.Data.ProductURL, Products: cfg.Data.Products, StateDir: state, Now: time.Now(), AllowDropped: o.allowDropped,
	})
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if g.json {
		return printJSON(out, cmd, res)
	}
	fmt.Fprintf(out, "support data refreshed: %s (as of %s; replaced the %s copy)\n", res.Path, res.AsOf.Format(time.RFC3339), res.Replaced)
	for _, p := range res.Products {
		var notes []string
		if len(p.Added) > 0 {
			notes = append(notes, "new cycles "+strings.Join(p.Added, ", "))
		}
		if len(p.Latest) > 0 {
			notes = append(notes, "latest "+strings.Join(p.Latest, ", "))
		}
		if len(p.Dropped) > 0 {
			notes = append(notes, "dropped "+strings.Join(p.Dropped, ", "))
		}
		if len(notes) == 0 {
			notes = append(notes, "no change")
		}
		fmt.Fprintf(out, "  %-11s %3d cycles  %s\n", p.Product, p.Cycles, strings.Join(notes, "; "))
	}
	return nil
}

func newDataStatusCmd(g *globalOptions) *cobra.Command {
	return jsonOutput(&cobra.Command{
		Use:   "status",
		Short: "Show which copy of the support data commands use, and how old it is",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			c, err := g.supportData(cfg, time.Now())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if g.json {
				days, _ := c.Age(time.Now())
				return printJSON(out, cmd, map[string]any{"copy": c.Name(), "as_of": c.Data.AsOf, "age_days": days,
					"max_age_days": int(cfg.Data.MaxAge().Hours() / 24), "products": c.Data.Products()})
			}
			fmt.Fprintf(out, "%s\nproducts: %s\n", c.Describe(time.Now()), strings.Join(c.Data.Products(), ", "))
			return nil
		},
	}, 1)
}
