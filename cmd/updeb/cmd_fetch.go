package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/digest"
)

type fetchOptions struct {
	sha256, sha512 string
	unpinned       bool
	key            string
	arches         []string
}

func newFetchCmd(g *globalOptions) *cobra.Command {
	o := &fetchOptions{}
	cmd := &cobra.Command{
		Use:   "fetch [RECIPE...] | fetch URL...",
		Short: "Download and verify sources into the cache",
		Long: `fetch downloads every source of each RECIPE (none means all recipes), with its
signature files (and a cosign signature's Rekor entry) and checksum file, through
the configured proxy into the cache, and verifies them exactly as build does
(pinned digests, OpenPGP and Sigstore signatures, checksum cross-checks), without
building: fill the cache before an --offline build. (GitHub attestations are
asked of GitHub's API at build time.)

Given URLs instead, it downloads each one and verifies it against its pin:
--sha256/--sha512 (one URL only) or a fragment, URL#sha256=HEX. A URL that fails
stops none of the others, as a recipe that fails stops no other recipe.

It prints "SHA256  SIZE  PATH  URL" per file. Files already cached are
re-verified and not downloaded again.`,
		Example: `  updeb fetch                     # every source of every recipe in recipes/
  updeb fetch helm runc --arch amd64
  updeb --offline fetch kubernetes-1.36   # lists what is not in the cache yet
  updeb fetch --sha256 11400fec... https://get.helm.sh/helm-v3.15.4-linux-amd64.tar.gz
  updeb fetch 'https://dl.k8s.io/release/v1.31.4/bin/linux/amd64/kubectl#sha256=298e19e9...'
  updeb fetch --unpinned https://github.com/helm/helm/releases/download/v3.15.4/helm-v3.15.4-linux-amd64.tar.gz.asc
  updeb --offline fetch 'https://example.org/a.tgz#sha256=...'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !isURLArgs(args) {
				return fetchRecipes(cmd, g, o, args)
			}
			reqs, err := o.requests(args)
			if err != nil {
				return err
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			f, err := g.newFetcher(cfg)
			if err != nil {
				return err
			}
			defer f.Close()
			res, err := f.FetchEach(cmd.Context(), reqs)
			if perr := printFetchResults(cmd, g, res, err); perr != nil && err == nil {
				err = perr
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.sha256, "sha256", "", "pinned sha256 of the (single) URL")
	fl.StringVar(&o.sha512, "sha512", "", "pinned sha512 of the (single) URL")
	fl.BoolVar(&o.unpinned, "unpinned", false, "allow URLs without a pin (signatures, checksum files)")
	fl.StringVar(&o.key, "key", "", "cache index key, e.g. \"helm 3.15.4\" (unpinned files are cached per URL and key)")
	fl.StringSliceVar(&o.arches, "arch", nil, "with recipes: only these architectures (default: every one)")
	return jsonOutput(cmd, 1)
}

// isURLArgs tells URL mode (every argument a URL) from recipe mode; a mix is
// treated as recipes, so a URL among them is reported as an unknown recipe.
func isURLArgs(args []string) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		if !strings.Contains(a, "://") {
			return false
		}
	}
	return true
}

// fetchRecipes downloads and verifies every source of the recipes.
func fetchRecipes(cmd *cobra.Command, g *globalOptions, o *fetchOptions, args []string) error {
	if o.sha256 != "" || o.sha512 != "" || o.unpinned || o.key != "" {
		return usageErrorf("--sha256, --sha512, --unpinned and --key go with URLs, not recipes")
	}
	s, err := g.openSession(cmd.Context(), args, o.arches)
	if err != nil {
		return err
	}
	defer s.Close()
	opts, err := s.sourceOptions()
	if err != nil {
		return err
	}
	res, err := source.Fetch(cmd.Context(), s.jobs, resolveOptions(s.cfg), opts)
	if perr := printFetchResults(cmd, g, res, err); perr != nil && err == nil {
		err = perr
	}
	return err
}

// requests turns the arguments into fetch requests, reading pins from the flags
// or from each URL's #sha256=/#sha512= fragment.
func (o *fetchOptions) requests(args []string) ([]fetch.Request, error) {
	if len(o.arches) > 0 {
		return nil, usageErrorf("--arch goes with recipes, not URLs: a URL names one file")
	}
	if (o.sha256 != "" || o.sha512 != "") && len(args) != 1 {
		return nil, usageErrorf("--sha256/--sha512 pin a single URL; pin several with URL#sha256=HEX")
	}
	var reqs []fetch.Request
	for _, a := range args {
		u, frag, _ := strings.Cut(a, "#")
		r := fetch.Request{URL: u, AllowUnpinned: o.unpinned, Key: o.key, Pinned: digest.Set{}}
		pins := []string{}
		if frag != "" {
			pins = strings.Split(frag, "&")
		}
		for alg, v := range map[digest.Algorithm]string{digest.SHA256: o.sha256, digest.SHA512: o.sha512} {
			if v != "" {
				pins = append(pins, string(alg)+"="+v)
			}
		}
		for _, p := range pins {
			alg, hex, _ := strings.Cut(p, "=")
			d, err := digest.New(digest.Algorithm(alg), hex)
			if err == nil {
				err = r.Pinned.Add(d)
			}
			if err != nil {
				return nil, usageErrorf("%s: %v", a, err)
			}
		}
		if len(r.Pinned) == 0 && !o.unpinned {
			return nil, usageErrorf("%s: no pinned digest (use --sha256 HEX, URL#sha256=HEX, or --unpinned for signatures and checksum files)", a)
		}
		reqs = append(reqs, r)
	}
	return reqs, nil
}

// fetchFailure is one thing fetch --json reports as not fetched: a file
// (url) not in the cache or corrupt there (--offline), or an error of a
// recipe's or a URL's fetch.
type fetchFailure struct {
	URL   string `json:"url,omitempty"`
	Error string `json:"error"`
}

// fetchFailures splits err (the failures of every recipe or URL, joined)
// into what fetch --json lists under "failed": [] when err is nil.
func fetchFailures(err error) []fetchFailure {
	out := []fetchFailure{}
	if err == nil {
		return out
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if off, ok := errors.AsType[*fetch.OfflineError](e); ok {
			for _, u := range off.Missing {
				out = append(out, fetchFailure{u, "not in the cache (--offline)"})
			}
			for _, u := range off.Corrupt {
				out = append(out, fetchFailure{u, "in the cache, but failed its digest, and was removed (--offline)"})
			}
			continue
		}
		out = append(out, fetchFailure{Error: e.Error()})
	}
	return out
}

// printFetchResults prints what was fetched; with --json, what failed
// (err) too, so that a script sees which files are missing.
func printFetchResults(cmd *cobra.Command, g *globalOptions, res []*fetch.Result, err error) error {
	w := cmd.OutOrStdout()
	if g.json {
		type row struct {
			URL       string            `json:"url"`
			Path      string            `json:"path"`
			Size      int64             `json:"size"`
			Digests   map[string]string `json:"digests"`
			FromCache bool              `json:"from_cache"`
			Via       string            `json:"via"`
		}
		rows := make([]row, 0, len(res))
		for _, r := range res {
			d := map[string]string{}
			for a, v := range r.Digests {
				d[string(a)] = v
			}
			rows = append(rows, row{r.URL, r.Path, r.Size, d, r.FromCache, r.Via})
		}
		return printJSON(w, cmd, struct {
			Files  []row          `json:"files"`
			Failed []fetchFailure `json:"failed"`
		}{rows, fetchFailures(err)})
	}
	for _, r := range res {
		if _, err := fmt.Fprintf(w, "%s  %d  %s  %s\n", r.Digests[digest.SHA256], r.Size, r.Path, r.URL); err != nil {
			return err
		}
	}
	return nil
}
