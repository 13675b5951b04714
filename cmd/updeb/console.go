package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/term"

	"github.com/updeb/updeb/internal/console"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/pipeline"
)

// What goes to stderr, decided here once (the libraries only get a logger):
//
//	stderr is          default level      format                 progress bars
//	a terminal         info               no timestamps, colour  yes (not with -q)
//	anything else      warnings, errors   RFC 3339 timestamps    never
//	--log-format json  info               slog JSON objects      never
//
// -v is debug and -q errors only, everywhere. So a pipe or a cron job gets
// the results on stdout and nothing on stderr unless something is wrong.

// terminalInfo is what the command layer knows about stderr.
type terminalInfo struct {
	tty   bool       // a terminal that moves its cursor (TERM set, not dumb)
	color bool       // and NO_COLOR is not set
	width func() int // its columns now
}

// detectTerminal looks at w and the environment (TERM, NO_COLOR). A terminal
// without TERM (env -i, cron through script(1), some CI runners) is taken for
// a dumb one, as ncurses and less do.
func detectTerminal(w io.Writer) terminalInfo {
	f, ok := w.(*os.File)
	if t := getenv("TERM"); !ok || !term.IsTerminal(int(f.Fd())) || t == "" || t == "dumb" {
		return terminalInfo{}
	}
	fd := int(f.Fd())
	return terminalInfo{
		tty:   true,
		color: getenv("NO_COLOR") == "",
		width: func() int {
			w, _, err := term.GetSize(fd)
			if err != nil {
				return 0
			}
			return w
		},
	}
}

// logFormats are the values of --log-format.
var logFormats = []string{"human", "json"}

// console returns stderr's console, made on first use from the flags.
func (g *globalOptions) console() *console.Console {
	if g.con != nil {
		return g.con
	}
	level := slog.LevelWarn
	switch {
	case g.verbose:
		level = slog.LevelDebug
	case g.quiet:
		level = slog.LevelError
	case g.term.tty || g.logFormat == "json":
		level = slog.LevelInfo
	}
	o := console.Options{
		Terminal: g.term.tty,
		Bars:     g.term.tty && !g.quiet && g.logFormat != "json",
		Color:    g.term.color,
		Width:    g.term.width,
		Level:    level,
		JSON:     g.logFormat == "json",
	}
	if wd, err := os.Getwd(); err == nil {
		o.Shorts = append(o.Shorts, console.Short{Dir: wd})
	}
	g.con = console.New(g.stderr, o)
	return g.con
}

// logger is the one logger of the run: every library gets this one.
func (g *globalOptions) logger() *slog.Logger {
	if g.log == nil {
		g.log = g.console().Logger()
	}
	return g.log
}

// shortenCache makes log lines name files in the cache as $CACHE/...
func (g *globalOptions) shortenCache(dir string) {
	if abs, err := filepath.Abs(dir); err == nil {
		g.console().AddShort(console.Short{Dir: abs, Name: "$CACHE"})
	}
}

// closeConsole removes the bars before the final error and hint lines.
func (g *globalOptions) closeConsole() {
	if g.con != nil {
		g.con.Close()
	}
}

// fetchProgress shows downloads and re-hashes of cached files as bars; nil
// when no bars are drawn.
func (g *globalOptions) fetchProgress() fetch.ProgressFunc {
	con := g.console()
	if !con.Bars() {
		return nil
	}
	return func(p fetch.Progress) {
		id := "fetch " + p.URL
		if p.Done {
			con.Finish(id)
			return
		}
		phase := "fetch"
		if p.Cached {
			phase = "verify"
		}
		con.Update(id, console.Status{Phase: phase, Name: path.Base(p.URL), Done: p.Received, Total: p.Total, Out: -1})
	}
}

// buildProgress shows each package being compressed: bytes in, bytes out.
func (g *globalOptions) buildProgress() func(pipeline.Progress) {
	con := g.console()
	if !con.Bars() {
		return nil
	}
	return func(p pipeline.Progress) {
		id := "write " + p.File
		if p.Done {
			con.Finish(id)
			return
		}
		con.Update(id, console.Status{Phase: "compress", Name: p.File, Done: p.In, Out: p.Out})
	}
}

// warnf logs a warning through the one logger: on a terminal above the bars,
// elsewhere with a timestamp, one JSON object with --log-format json, and
// nothing with -q. Every warning of a command goes through here or through a
// library's logger, never straight to stderr.
func (g *globalOptions) warnf(format string, args ...any) {
	g.logger().Warn(fmt.Sprintf(format, args...))
}

// note tells people something about the run that is neither a result nor a
// warning, and that they see whatever stderr is (which copy of the support
// data a command read): "updeb: MESSAGE" through the console, above any bars;
// with --log-format json an info record; nothing with -q.
func (g *globalOptions) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	switch {
	case g.quiet:
	case g.logFormat == "json":
		g.logger().Info(msg)
	default:
		fmt.Fprintf(g.console(), "updeb: %s\n", msg)
	}
}
