package main

import (
	"net"
	"net/url"
	"strings"
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
	// listings keeps the run's GitHub release listings: every recipe
	// (and every Options made for the run) that watches a repository
	// shares one listing of it.
	listings track.Listings
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
	o := track.Options{Client: f, GitHubAPI: first(t.githubAPI, c.GitHubAPI), Now: func() time.Time { return time.Now().UTC() }, Listings: &t.listings}
	o.GitHubToken = githubToken(first(o.GitHubAPI, track.DefaultGitHubAPI), f)
	if t.now != "" {
		day, err := time.Parse(time.DateOnly, t.now)
		if err != nil {
			return o, usageErrorf("--now %q: want a day as YYYY-MM-DD", t.now)
		}
		o.Now = func() time.Time { return day }
	}
	return o, nil
}

// githubToken is GITHUB_TOKEN for the GitHub API at api, or "" where plain
// http would carry it to another machine: everyone on the path, the proxy
// too, could read it and use it. The API is then asked without it (a test
// server on this machine, over http, still gets it, unless f sends the
// request through a proxy on another machine: HTTPS_PROXY without
// NO_PROXY=localhost). Whitespace around the token is not part of it: a
// token read from a file (a Kubernetes secret, a CI variable pasted with
// its line break) often ends in a newline, which no HTTP header may hold,
// and every request would fail as if the network were down.
func githubToken(api string, f *fetch.Fetcher) string {
	token := strings.TrimSpace(getenv("GITHUB_TOKEN"))
	u, err := url.Parse(api)
	switch {
	case token == "" || err != nil:
		return ""
	case strings.EqualFold(u.Scheme, "https"):
		return token
	}
	if p := f.ProxyOf(u); thisMachine(u) && (p == nil || thisMachine(p)) {
		return token
	}
	return ""
}

// thisMachine reports whether u names this machine: localhost or a
// loopback address.
func thisMachine(u *url.URL) bool {
	host := u.Hostname()
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}
