package main

// The support data as the commands that read it (outdated, compat, plan, data
// status) load it.

import (
	"time"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/supportdata"
)

// supportData loads the support data the commands use (supportdata.Load)
// from the state folder, says on stderr which copy it is and how old on now's
// day, and warns when it is older than the config allows. Without a state
// folder (no HOME) the bundled copy is used.
func (g *globalOptions) supportData(cfg *config.Config, now time.Time) (*supportdata.Copy, error) {
	state, err := g.stateDirFor(cfg)
	if err != nil {
		state = ""
	}
	c, warnings, err := supportdata.Load(state)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		g.warnf("%s", w)
	}
	g.note("support data: %s", c.Describe(now))
	if c.Stale(now, cfg.Data.MaxAge()) {
		g.warnf("the support data is older than %d days (data: max-age-days:): run 'updeb data refresh'", int(cfg.Data.MaxAge().Hours()/24))
	}
	return c, nil
}
