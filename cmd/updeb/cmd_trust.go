package main

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/plural"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// newTrustCmd is the parent of the commands about the Sigstore trusted root.

// maxTUFRoot bounds the TUF root.json given with --tuf-root (Sigstore's is
// about 7 KB).
const maxTUFRoot = 1 << 20

func newTrustCmd(g *globalOptions) *cobra.Command {
	trust := &cobra.Command{
		Use:   "trust",
		Short: "Show and refresh the Sigstore trusted root (Fulcio CAs, Rekor logs) verification uses",
		Long: `Sigstore signatures are verified against a trusted root: the certificate authorities
(Fulcio), transparency logs (Rekor), CT logs and timestamp authorities to trust. The
root in use is, first found: the config's sigstore: trusted-root: FILE (a private
Sigstore deployment, or a copy on an air-gapped site); the one 'updeb trust refresh'
stored in the state folder; the public-good snapshot bundled with updeb. A build never
downloads one.`,
		Example: `  updeb trust show
  updeb trust refresh
  updeb trust refresh --tuf-url https://tuf.internal/ --tuf-root /etc/updeb/tuf-root.json`,
	}
	trust.AddCommand(
		newTrustShowCmd(g),
		newTrustRefreshCmd(g),
	)
	return trust
}

// trustShow is what updeb trust show prints (and --json writes).
type trustShow struct {
	Source      string         `json:"source"` // flag, config, refreshed or bundled
	File        string         `json:"file,omitempty"`
	Name        string         `json:"name"`
	SHA256      string         `json:"sha256"`
	Since       string         `json:"since,omitempty"` // RFC 3339: refreshed or copied, or the bundled snapshot's day
	AgeDays     int            `json:"age_days"`
	RefreshedAt string         `json:"refreshed_file"` // where updeb trust refresh stores a root
	RekorURL    string         `json:"rekor_url"`
	Authorities []trustedParty `json:"authorities"`
}

type trustedParty struct {
	Kind  string `json:"kind"`
	URL   string `json:"url"`
	ID    string `json:"id,omitempty"`
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`
}

func newTrustShowCmd(g *globalOptions) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Say which Sigstore trusted root is in use, where it comes from, its age and what it trusts",
		Long: `show says which Sigstore trusted root verification uses (the config's sigstore:
trusted-root:, else the one 'updeb trust refresh' stored, else the bundled public-good
snapshot), its sha256 and age, and what it trusts. --trusted-root FILE shows FILE
instead: a root to review before a config names it. Only a stored root that is not
there gives way to the bundled one: one that cannot be read, or looked for (a state
folder this user may not read), is an error (exit 2), here and in every verification.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTrustShow(cmd, g, file, time.Now())
		},
	}
	cmd.Flags().StringVar(&file, "trusted-root", "", "show this trusted_root.json instead of the one in use")
	return jsonOutput(cmd, 1)
}

func runTrustShow(cmd *cobra.Command, g *globalOptions, file string, now time.Time) error {
	w := cmd.OutOrStdout()
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	tr, err := g.trustedRootFlag(cfg, file)
	if err != nil {
		return err
	}
	out := trustShow{Source: tr.Source, File: tr.File, Name: tr.root.Name(), SHA256: tr.root.SHA256(),
		RekorURL: first(cfg.Sigstore.RekorURL, sigstore.DefaultRekorURL)}
	if dir, err := g.stateDirFor(cfg); err == nil {
		out.RefreshedAt = filepath.Join(dir, refreshedRootFile)
	}
	if !tr.Since.IsZero() {
		out.Since = tr.Since.UTC().Format(time.RFC3339)
		out.AgeDays = int(now.Sub(tr.Since).Hours() / 24)
	}
	for _, a := range tr.root.Authorities() {
		p := trustedParty{Kind: a.Kind, URL: a.URL, ID: a.ID}
		if !a.Start.IsZero() {
			p.Start = a.Start.UTC().Format(time.DateOnly)
		}
		if !a.End.IsZero() {
			p.End = a.End.UTC().Format(time.DateOnly)
		}
		out.Authorities = append(out.Authorities, p)
	}
	if g.json {
		return printJSON(w, cmd, out)
	}
	from := map[string]string{
		"flag":      "--trusted-root",
		"config":    "the config's sigstore: trusted-root:",
		"refreshed": "refreshed by 'updeb trust refresh'",
		"bundled":   "the public-good snapshot bundled with updeb",
	}[tr.Source]
	fmt.Fprintf(w, "trusted root: %s\n", from)
	if tr.File != "" {
		fmt.Fprintf(w, "  file     %s\n", tr.File)
	}
	fmt.Fprintf(w, "  name     %s\n  sha256   %s\n", out.Name, out.SHA256)
	if out.Since != "" {
		fmt.Fprintf(w, "  since    %s (%s ago)\n", tr.Since.UTC().Format(time.DateOnly), plural.Days(out.AgeDays))
	}
	fmt.Fprintf(w, "  rekor    %s (where cosign signatures are looked up)\n", out.RekorURL)
	if out.RefreshedAt != "" && tr.Source != "refreshed" {
		fmt.Fprintf(w, "  refresh  'updeb trust refresh' stores %s\n", out.RefreshedAt)
	}
	for _, p := range out.Authorities {
		valid := p.Start + ".."
		if p.End != "" {
			valid += p.End
		}
		fmt.Fprintf(w, "  %-6s %s (valid %s)\n", p.Kind, p.URL, valid)
	}
	return nil
}

type trustRefreshOptions struct {
	tufURL  string
	tufRoot string
}

// trustRefreshed is what updeb trust refresh --json writes.
type trustRefreshed struct {
	Repository     string `json:"repository"`
	File           string `json:"file"`
	SHA256         string `json:"sha256"`
	PreviousSHA256 string `json:"previous_sha256,omitempty"`
	Changed        bool   `json:"changed"`
	InUse          bool   `json:"in_use"` // false when the config's sigstore: trusted-root: takes precedence
}

func newTrustRefreshCmd(g *globalOptions) *cobra.Command {
	o := &trustRefreshOptions{}
	cmd := &cobra.Command{
		Use:   "refresh",
		Short: "Update the Sigstore trusted root through TUF (through the proxy) into the state folder",
		Long: `refresh fetches Sigstore's trusted root the way Sigstore clients do, through the
proxy and mirrors: the TUF repository's metadata must chain to the TUF root anchor
(signatures, thresholds, expiry, no rollback) before its trusted_root.json is stored,
atomically, as STATE/sigstore/trusted_root.json (--state, state: in the config, else
$XDG_STATE_HOME/updeb). Verification then uses it instead of the bundled snapshot,
unless the config names sigstore: trusted-root:. Nothing is stored when anything fails.
An air-gapped site copies the file (and names it with sigstore: trusted-root:).

Exit codes: 0 refreshed; 1 the repository's answer did not verify; 2 usage or a bad
--tuf-root; 3 the repository could not be reached.`,
		Example: `  updeb trust refresh
  updeb trust refresh --tuf-url https://tuf.internal/ --tuf-root /etc/updeb/tuf-root.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTrustRefresh(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.tufURL, "tuf-url", "", "TUF repository (default: sigstore: tuf-url: in the config, else Sigstore's public-good "+sigstore.DefaultTUFURL+")")
	f.StringVar(&o.tufRoot, "tuf-root", "", "TUF root.json to start from (default: sigstore: tuf-root: in the config, else the public-good root built in)")
	return jsonOutput(cmd, 1)
}

func runTrustRefresh(cmd *cobra.Command, g *globalOptions, o *trustRefreshOptions) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	if g.offline {
		return usageErrorf("trust refresh asks the TUF repository: it cannot run --offline")
	}
	state, err := g.stateDirFor(cfg)
	if err != nil {
		return err
	}
	ro := sigstore.RefreshOptions{
		RepositoryURL: first(o.tufURL, cfg.Sigstore.TUFURL),
		Dir:           filepath.Join(state, "sigstore", "tuf"),
		UserAgent:     "updeb/" + version,
		Timeout:       sigstoreTimeout(cfg),
	}
	if anchor := first(o.tufRoot, cfg.Sigstore.TUFRoot); anchor != "" {
		if ro.Root, err = confined.ReadFile(anchor, maxTUFRoot); err != nil {
			return invalidInput(err, "--tuf-root (sigstore: tuf-root:) names the TUF root.json of the repository")
		}
	}
	f, err := g.newFetcher(cfg)
	if err != nil {
		return err
	}
	defer f.Close()
	ro.HTTPClient = &http.Client{Transport: f.Transport()}
	file := filepath.Join(state, refreshedRootFile)
	res := trustRefreshed{Repository: first(ro.RepositoryURL, sigstore.DefaultTUFURL), File: file, Changed: true,
		InUse: cfg.Sigstore.TrustedRoot == ""}
	// the root is stored once the TUF metadata that vouches for it is in
	// place: a failure here (a full disk) puts both back as they were.
	// Store runs under the TUF folder's lock, which every refresh holds: a
	// temporary copy of the root beside it is a killed refresh's, and goes
	// (nothing else would ever remove it).
	ro.Store = func(tr *sigstore.TrustedRoot) error {
		atomicfile.RemoveLeftovers(filepath.Dir(file), filepath.Base(file))
		res.SHA256 = tr.SHA256()
		if old, err := confined.ReadFile(file, maxTUFRoot); err == nil {
			if prev, err := sigstore.ParseTrustedRoot(file, old); err == nil {
				res.PreviousSHA256 = prev.SHA256()
			}
			res.Changed = !bytes.Equal(old, tr.JSON())
		}
		return atomicfile.WriteFile(file, tr.JSON(), 0o644)
	}
	if _, err := sigstore.Refresh(cmd.Context(), ro); err != nil {
		return err
	}
	if g.json {
		return printJSON(cmd.OutOrStdout(), cmd, res)
	}
	w := cmd.OutOrStdout()
	changed := "changed"
	if !res.Changed {
		changed = "unchanged"
	}
	fmt.Fprintf(w, "refreshed the Sigstore trusted root from %s (%s)\n  stored  %s\n  sha256  %s\n", res.Repository, changed, file, res.SHA256)
	if !res.InUse {
		g.warnf("%s names sigstore: trusted-root: %s, which verification uses instead of the refreshed root", cfg.File, cfg.Sigstore.TrustedRoot)
	}
	return nil
}
