package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/repo"
)

func newRepoHistoryCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	cmd := &cobra.Command{
		Use:   "history [SUITE]",
		Short: "List a suite's generations: when, which operation, what changed, which can be rolled back to",
		Long: `history lists every generation of a suite (of every suite when none is named), oldest
first: its Date, the operation that made it (publish, remove, refresh, promote, rollback),
what it changed (packages added and removed, where promoted packages came from, settings),
and its state: live, kept (a rollback target) or gone (collected). --json gives every
package with its pool file and SHA256: the suite's provenance.`,
		Example: `  updeb repo history --repo /srv/apt bookworm-wikimedia
  updeb --json repo history --repo /srv/apt`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			suite, err := suiteOf(o.suite, args, "")
			if err != nil {
				return err
			}
			r, _, err := o.openReadOnly(g)
			if err != nil {
				return err
			}
			hist, err := r.History(suite)
			if err != nil {
				return err
			}
			if g.json {
				gens := []historyJSON{}
				for _, h := range hist {
					gens = append(gens, historyOf(h))
				}
				return printJSON(cmd.OutOrStdout(), cmd, struct {
					Generations []historyJSON `json:"generations"`
				}{gens})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SUITE\tGEN\tDATE\tSTATE\tOPERATION\tBY\tCHANGES")
			for _, h := range hist {
				state := "gone"
				switch {
				case h.Live:
					state = "live"
				case h.Kept:
					state = "kept"
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", h.Suite, h.Generation, h.Date.UTC().Format(time.RFC3339), state, h.Operation, first(h.By, "-"), summary(h.Record))
			}
			return tw.Flush()
		},
	}
	o.addFlags(cmd, false)
	cmd.Flags().Lookup("suite").Usage = "only this suite (or as an argument; default: every suite)"
	return jsonOutput(cmd, 1)
}

// summary is one line saying what a generation changed.
func summary(rec repo.Record) string {
	var parts []string
	list := func(sign string, es []repo.Entry) {
		for i, e := range es {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("%s%d more", sign, len(es)-3))
				break
			}
			parts = append(parts, fmt.Sprintf("%s%s=%s (%s)", sign, e.Package, e.Version, e.Architecture))
		}
	}
	list("+", rec.Added)
	list("-", rec.Removed)
	if rec.From != "" {
		parts = append(parts, "from "+rec.From)
	}
	parts = append(parts, rec.Settings...)
	if rec.ValidUntil != nil && (rec.Operation == "refresh" || len(parts) == 0) {
		parts = append(parts, "valid until "+rec.ValidUntil.UTC().Format(time.RFC3339))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// historyJSON is a generation as --json shows it: the stored record's
// hyphenated keys (signing-keys, valid-until, kept as they are in the
// repository's history files) in snake_case like every other key.
type historyJSON struct {
	repo.HistoryEntry
	SigningKeys []string   `json:"signing_keys,omitempty"`
	ValidUntil  *time.Time `json:"valid_until,omitempty"`
}

func historyOf(h repo.HistoryEntry) historyJSON {
	out := historyJSON{HistoryEntry: h, SigningKeys: h.SigningKeys, ValidUntil: h.ValidUntil}
	out.HistoryEntry.SigningKeys, out.HistoryEntry.ValidUntil = nil, nil // omitempty: hidden
	return out
}
