package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/supportdata"
)

type dataRefreshOptions struct {
	allowDropped bool
	tables       []string
	write        string
}

func newDataCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Refresh or show the data tables (end-of-life dates, compatibility tables) outdated, compat and plan use",
		Long: `The data tables are the release cycles of the products updeb packages (Kubernetes,
etcd, containerd, Calico, Cilium, Istio: end of support and of life, latest patch) and
upstream's compatibility tables (Helm's version skew, containerd's Kubernetes support,
Istio's, Calico's and Cilium's supported Kubernetes versions, kubeadm's etcd versions,
cri-tools' matrix). A snapshot is bundled with updeb; 'updeb data refresh' fetches
current ones from upstream (data: in the config for mirrors) into the state folder, or
with --write into a recipes repository's data file (compat-data.yaml beside the recipes
folder, or data: file:), which compat, plan and outdated then use on every machine.
Otherwise they use, table by table, the newer of the bundled and refreshed copies. Each
says which, and warns when a table is older than data: max-age-days: (default 30).`,
	}
	cmd.AddCommand(newDataRefreshCmd(g), newDataStatusCmd(g))
	return cmd
}

func newDataRefreshCmd(g *globalOptions) *cobra.Command {
	o := &dataRefreshOptions{}
	cmd := &cobra.Command{
		Use:   "refresh",
		Short: "Fetch current data tables from upstream into the state folder or a repository's data file",
		Long: `refresh fetches, through the configured proxy, the end-of-life data (endoflife.date's
API) and every compatibility table from where upstream publishes it (data: sources: for
mirrors), each bounded in size and time. Each answer is parsed strictly (the table's
columns, every cell's form, every row) and checked: rows only for Kubernetes minors and
product cycles the end-of-life data knows, bounds in order, no row or cycle of the copy
in use missing unless its minors are end-of-life. Then the state folder's copies
(STATE/support/compat.yaml and eol.yaml) are replaced atomically, both written in full
before either is renamed (only a crash between the two renames leaves the tables new and
the end-of-life data old: refresh again), or with --write FILE the recipes repository's
data file (the overrides there are kept and reported).

Table by table: a table whose answer is unreachable or unusable (HTML, truncated, too
large, malformed, implausible) or lacks rows keeps its copy in use (rows, sources, date)
and the others are written; each one kept is named with its URL, why, its copy and its
age (and "older than data: max-age-days:" when it is). Exit 0: every table refreshed;
exit 1: some refreshed and written, some kept (the error lists them), or nothing
refreshed because rows or cycles were missing (accept with --allow-dropped after
checking why), or a --write file another process changed while it was written (it keeps
that change: run again); exit 3: no table refreshed, nothing written (every answer
unreachable or unusable, or the proxy down); exit 2: a --write file that does not parse
or cannot be read (a FIFO, a folder).`,
		Example: `  updeb data refresh
  updeb data refresh --write compat-data.yaml   # the repository's data file: commit the diff
  updeb data refresh --table helm --table containerd
  updeb data refresh --allow-dropped   # accept an answer without some rows the copy in use has`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDataRefresh(cmd, g, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.allowDropped, "allow-dropped", false, "accept new data that lacks rows or release cycles the copy in use has (recorded in its header)")
	f.StringSliceVar(&o.tables, "table", nil, "refresh only these tables ("+strings.Join(append(compatdata.Names(), compatdata.EndOfLife), ", ")+"); the others are kept")
	f.StringVar(&o.write, "write", "", "write a recipes repository's data file (every table and the end-of-life data) instead of the state folder")
	return jsonOutput(cmd, 1)
}

// dataRefreshJSON is `updeb data refresh --json`: the end-of-life part as
// before (path, replaced, products), the tables, and the files written.
type dataRefreshJSON struct {
	Written  []string                    `json:"written"`
	AsOf     time.Time                   `json:"as_of"`
	Path     string                      `json:"path,omitempty"`
	Replaced string                      `json:"replaced,omitempty"`
	Products []supportdata.ProductResult `json:"products,omitempty"`
	Tables   []compatdata.TableResult    `json:"tables"`
	Kept     []compatdata.KeptTable      `json:"kept,omitempty"`
}

func runDataRefresh(cmd *cobra.Command, g *globalOptions, o *dataRefreshOptions) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	state, err := g.stateDirFor(cfg)
	if err != nil && o.write == "" {
		return err
	}
	f, err := g.newFetcher(cfg)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := compatdata.Refresh(cmd.Context(), compatdata.RefreshOptions{
		Client: f, Sources: cfg.Data.Sources, ProductURL: cfg.Data.ProductURL, Products: cfg.Data.Products,
		Tables: o.tables, StateDir: state, Write: o.write, Now: time.Now(), AllowDropped: o.allowDropped,
		MaxAge: cfg.Data.MaxAge(),
	})
	if err != nil {
		return err
	}
	if repo := g.repositoryDataFile(cfg); o.write == "" && compatdata.Exists(repo) {
		g.note("note: commands here use the repository's data file %s, not the state folder: 'updeb data refresh --write %s' updates it", repo, repo)
	}
	out := cmd.OutOrStdout()
	if g.json {
		j := dataRefreshJSON{Written: res.Written, AsOf: res.AsOf, Tables: res.Tables, Kept: res.Kept}
		if e := res.EndOfLife; e != nil {
			j.Path, j.Replaced, j.Products = e.Path, e.Replaced, e.Products
		}
		if err := printJSON(out, cmd, j); err != nil {
			return err
		}
		return keptTables(res)
	}
	if e := res.EndOfLife; e != nil {
		fmt.Fprintf(out, "support data refreshed: %s (as of %s; replaced the %s copy)\n", e.Path, e.AsOf.Format(time.RFC3339), e.Replaced)
		for _, p := range e.Products {
			fmt.Fprintf(out, "  %-11s %3d cycles  %s\n", p.Product, p.Cycles,
				notes(note{"new cycles", p.Added, ", "}, note{"latest", p.Latest, ", "}, note{"changed", p.Changed, "; "}, note{"dropped", p.Dropped, ", "}))
		}
	}
	if len(res.Tables) > 0 {
		var kept string
		for _, k := range res.Kept {
			kept = strings.TrimPrefix(kept+", "+k.Table, ", ")
		}
		if kept != "" {
			kept = "; not refreshed, kept as they were: " + kept
		}
		fmt.Fprintf(out, "compatibility tables refreshed: %s (as of %s%s)\n", res.Written[0], res.AsOf.Format(time.RFC3339), kept)
	}
	for _, t := range res.Tables {
		fmt.Fprintf(out, "  %-12s %3d rows    %s (replaced the %s copy)\n", t.Table, t.Rows, notes(note{"added", t.Added, ", "},
			note{"changed", t.Changed, "; "}, note{"retired (end-of-life)", t.Retired, ", "}, note{"dropped", t.Dropped, ", "}), t.Replaced)
		for _, ov := range t.Overrides {
			fmt.Fprintf(out, "    override %s (%s): %s\n", ov.Row, ov.Reason, overrideVerdict(ov))
		}
	}
	return keptTables(res)
}

// keptTables is the failure of a refresh that wrote the tables it could
// and kept the others (nil when it kept none): exit 1, as a report that
// holds failures, apart from success (0) and from a refresh that wrote
// nothing (3, or 1 for rows missing).
func keptTables(res *compatdata.Result) error {
	err := res.KeptError()
	if err == nil {
		return nil
	}
	hint := "the tables refreshed are written; each table named keeps its copy in use until a refresh of it succeeds: " +
		"fix what its line says (data: sources:, mirrors:, the network), or wait until upstream publishes the page, then run the same command again"
	if errors.Is(err, compatdata.ErrDropped) || errors.Is(err, supportdata.ErrDropped) {
		hint += "; for rows or cycles missing, find out why (a partial mirror, a page rewritten?); if they really are gone, run again with --allow-dropped"
	}
	return checkFailed(err, hint)
}

// note is one kind of change a refresh reports: "added 1.37".
type note struct {
	word  string
	items []string
	sep   string
}

// notes says in one line what a refresh changed, or "no change".
func notes(ns ...note) string {
	var out []string
	for _, n := range ns {
		if len(n.items) > 0 {
			out = append(out, n.word+" "+strings.Join(n.items, n.sep))
		}
	}
	if len(out) == 0 {
		return "no change"
	}
	return strings.Join(out, "; ")
}

// overrideVerdict says how upstream's row compares with an override.
func overrideVerdict(o compatdata.OverrideStatus) string {
	switch {
	case o.Agrees:
		return "upstream now says the same: the override can go"
	case o.Upstream == "":
		return "upstream has no such row"
	}
	return "upstream says " + o.Upstream
}

// dataStatusJSON is `updeb data status --json`: the end-of-life data's copy,
// date and products as before, and every table's line.
type dataStatusJSON struct {
	Copy       string    `json:"copy"`
	AsOf       time.Time `json:"as_of"`
	AgeDays    int       `json:"age_days"`
	MaxAgeDays int       `json:"max_age_days"`
	Products   []string  `json:"products"`
	Repository string    `json:"repository,omitempty"`
	// MissingFile is the file data: file: names when it does not exist
	// (the other copies are used instead).
	MissingFile string                   `json:"missing_file,omitempty"`
	Tables      []compatdata.TableStatus `json:"tables"`
}

func newDataStatusCmd(g *globalOptions) *cobra.Command {
	return jsonOutput(&cobra.Command{
		Use:   "status",
		Short: "List every data table with the copy commands use, its source, date and age",
		Long: `status lists the end-of-life data and every compatibility table: which copy commands
use (bundled, refreshed in the state folder, or the recipes repository's data file), the
URLs it was fetched from, its date (a snapshot's day, or when a refresh fetched it), its
age, its rows and the overrides in use, and warns about each table older than data:
max-age-days: (default 30).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			now := time.Now()
			set, err := g.dataSet(cfg, now, true)
			if err != nil {
				return err
			}
			maxAge := cfg.Data.MaxAge()
			st := set.Status(now, maxAge)
			out := cmd.OutOrStdout()
			if g.json {
				days, _ := set.EOL.Age(now)
				return printJSON(out, cmd, dataStatusJSON{Copy: set.EOL.Name(), AsOf: set.EOL.Data.AsOf, AgeDays: days,
					MaxAgeDays: int(maxAge.Hours() / 24), Products: set.EOL.Data.Products(), Repository: set.Repository, MissingFile: missingDataFile(cfg), Tables: st})
			}
			fmt.Fprintf(out, "%s\nproducts: %s\n\n", set.EOL.Describe(now), strings.Join(set.EOL.Data.Products(), ", "))
			fmt.Fprintf(out, "%-12s %-10s %-10s %5s %5s  %s\n", "TABLE", "COPY", "AS OF", "AGE", "ROWS", "SOURCE")
			for _, t := range st {
				kind, _, _ := strings.Cut(t.Copy, " ")
				src := strings.Join(t.Sources, " ")
				if src == "" {
					src = "(a snapshot: see its header)"
				}
				mark, age := "", fmt.Sprintf("%dd", t.AgeDays)
				switch {
				case t.Stale && supportdata.AfterToday(t.AsOf, time.Now()):
					// No age: the date is wrong, not recent.
					mark, age = " (stale: dated after today)", "-"
				case t.Stale:
					mark = " (stale)"
				}
				fmt.Fprintf(out, "%-12s %-10s %-10s %5s %5d  %s%s\n", t.Table, kind, t.AsOf.Format(time.DateOnly), age, t.Rows, src, mark)
				for _, o := range t.Overrides {
					fmt.Fprintf(out, "%12s override %s (%s): %s\n", "", o.Row, o.Reason, overrideVerdict(o))
				}
			}
			if files := copyFiles(st); len(files) > 0 {
				fmt.Fprintf(out, "\nfiles: %s\n", strings.Join(files, ", "))
			}
			return nil
		},
	}, 1)
}

// copyFiles are the files the tables were read from, each once.
func copyFiles(st []compatdata.TableStatus) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range st {
		if _, path, ok := strings.Cut(t.Copy, " "); ok && !seen[path] {
			seen[path] = true
			out = append(out, path)
		}
	}
	return out
}
