package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/track"
)

// trackFlags are the options updeb outdated and bump share.
type trackFlags struct {
	githubAPI string
	now       string // YYYY-MM-DD; "" = today
}

func (t *trackFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.githubAPI, "github-api", "", "GitHub API base URL (default: github-api: in the config, else "+track.DefaultGitHubAPI+")")
	cmd.Flags().StringVar(&t.now, "now", "", "the day for end-of-life status and signature checks, YYYY-MM-DD (default: today, UTC)")
}

// options builds track.Options: the fetcher (proxy, mirrors) from the config,
// and the GitHub token from GITHUB_TOKEN (sent only to the API, never logged).
func (t *trackFlags) options(g *globalOptions, c *config.Config, f *fetch.Fetcher) (track.Options, error) {
	// Today is UTC's (--now's default), as for compat: a local clock a day
	// ahead would check end-of-life for another day than the plan's.
	o := track.Options{Client: f, GitHubAPI: t.githubAPI, GitHubToken: getenv("GITHUB_TOKEN"), Now: func() time.Time { return time.Now().UTC() }}
	if o.GitHubAPI == "" {
		o.GitHubAPI = c.GitHubAPI
	}
	if t.now != "" {
		day, err := time.Parse(time.DateOnly, t.now)
		if err != nil {
			return o, usageErrorf("--now %q: want a day as YYYY-MM-DD", t.now)
		}
		o.Now = func() time.Time { return day }
	}
	return o, nil
}
