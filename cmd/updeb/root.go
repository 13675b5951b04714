package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/updeb/updeb/internal/console"
	"github.com/updeb/updeb/pkg/lockfile"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.0.0-dev"

// globalOptions are the flags every command shares. They are read once, here, and
// passed down as values: library packages never look at flags or the environment.
type globalOptions struct {
	configFile string
	recipesDir string
	proxy      string
	cacheDir   string
	stateDir   string
	outDir     string
	offline    bool
	json       bool
	version    bool // --version: the version command
	verbose    bool
	quiet      bool
	logFormat  string

	stdout io.Writer
	stderr io.Writer
	term   terminalInfo // of stderr, read once by run

	con *console.Console // stderr's log lines and bars (console.go), made on first use
	log *slog.Logger

	// dataFileWarned: the warning that data: file: names no file was given
	// (once a run, however many times the data is loaded).
	dataFileWarned bool
}

func newRootCmd(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "updeb",
		Short: "Turn verified upstream release binaries into reproducible Debian packages",
		Long: `updeb fetches upstream release binaries through the configured web proxy, verifies
them against pinned digests and OpenPGP or Sigstore signatures, writes reproducible .deb files
itself, and publishes them to a signed apt repository.

Exit codes: 0 success; 1 a check failed (signature, checksum, verification);
2 usage or invalid input (flags, recipe, config); 3 network or I/O failure
after retries; 130 interrupted by SIGINT, SIGTERM, or SIGHUP unless started
under nohup (nothing half-done is left behind, or the error says what was
written and how to finish); 131 SIGQUIT (every goroutine's stack on stderr);
141 stdout's reader went away (updeb ... | head -1), nothing printed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	versionCmd := newVersionCmd(g)
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return invalidInput(err, helpHint(c))
	})
	f := root.PersistentFlags()
	f.StringVar(&g.configFile, "config", "", "config file (default updeb.yaml in the working folder, then /etc/updeb/config.yaml)")
	f.StringVar(&g.recipesDir, "recipes", "recipes", "recipes folder (RECIPE names resolve to DIR/NAME.yaml)")
	f.StringVar(&g.proxy, "proxy", "", "web proxy URL, http:// or https:// (default: config, then HTTPS_PROXY/HTTP_PROXY, then ALL_PROXY; a SOCKS proxy is refused)")
	f.StringVar(&g.cacheDir, "cache", "", "download cache folder (default: cache: in the config, else $XDG_CACHE_HOME/updeb, else ~/.cache/updeb)")
	f.StringVar(&g.stateDir, "state", "", "state folder: refreshed support data and Sigstore trusted root (default: state: in the config, else $XDG_STATE_HOME/updeb, else ~/.local/state/updeb)")
	f.StringVar(&g.outDir, "out", "", "output folder for packages (default: out: in the config, else ./out)")
	f.BoolVar(&g.offline, "offline", false, "use the cache only; never touch the network")
	f.BoolVar(&g.json, "json", false, "print the result as one JSON object, {\"schema\": \"updeb/COMMAND/vN\", ...} (commands that say so in their help, with the schema they print)")
	f.BoolVarP(&g.verbose, "verbose", "v", false, "debug detail on stderr")
	f.BoolVarP(&g.quiet, "quiet", "q", false, "only errors on stderr")
	// --version is the version command (below), not cobra's, which printed
	// text under --json and took any flag or argument (a mistyped --config,
	// 'updeb --version repo remove hello') without a word.
	root.Flags().BoolVar(&g.version, "version", false, "print updeb's version, as 'updeb version' does")
	f.StringVar(&g.logFormat, "log-format", "human", "stderr's format: human (progress bars and no timestamps on a terminal; warnings and errors only elsewhere) or json (one object per line, for machines)")
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if !slices.Contains(logFormats, g.logFormat) {
			return usageErrorf("--log-format %q: want %s", g.logFormat, strings.Join(logFormats, " or "))
		}
		if g.verbose && g.quiet {
			return usageErrorf("-v (debug detail) and -q (only errors) contradict each other: give one")
		}
		if err := checkEmptyFlags(c); err != nil {
			return err
		}
		g.logger() // made now, from the flags: a lock's wait notice may come from any goroutine
		// A config the user names is read whatever the command, also by
		// those that use none of it (lint, inspect, version): a mistyped
		// --config is exit 2, as any file the user names, not ignored.
		if g.configFile != "" && !isMeta(c) {
			if _, err := g.loadConfig(); err != nil {
				return err
			}
		}
		if c == root && g.version {
			c = versionCmd
		}
		return checkJSONFlag(c, g.json)
	}

	// Each command lives in its own cmd_<verb>.go file.
	root.AddCommand(
		versionCmd,
		newPublishCmd(g),
		newRepoCmd(g),
		newKeysCmd(g),
		newVerifySignatureCmd(g),
		newTrustCmd(g),
		newVerifyProvenanceCmd(g),
		newCompatCmd(g),
		newInspectCmd(g),
		newLintCmd(g),
		newFetchCmd(g),
		newBuildCmd(g),
		newOutdatedCmd(g),
		newBumpCmd(g),
		newVerifyCmd(g),
		newMirrorCmd(g),
		newDataCmd(g),
		newPlanCmd(g),
		newReportCmd(g),
		newCacheCmd(g),
	)
	// cobra would add completion only when the command runs: now, so that
	// the group gets the refusal below ('completion tcsh').
	root.InitDefaultCompletionCmd()
	// Bad arguments are usage errors (exit 2) for every command, and an unknown
	// command is one too, with a suggestion ("did you mean build?") when one
	// is near, at the top and in every group of commands (repo, keys, ...).
	// A group without its command is one as well ('updeb repo $CMD' with
	// CMD unset printed the help, exit 0), and so is 'updeb' alone ('updeb
	// $CMD'): the help is 'updeb --help'.
	walk(root, func(c *cobra.Command) {
		if c == root || c.HasSubCommands() {
			c.Args = unknownCommand
			c.SuggestionsMinimumDistance = 2
			if !c.Runnable() {
				c.RunE = func(c *cobra.Command, _ []string) error {
					what := "a subcommand"
					if c == root {
						what = "a command"
					}
					return invalidInput(fmt.Errorf("%s needs %s: %s", c.CommandPath(), what, subcommandNames(c)), helpHint(c))
				}
			}
		}
	})
	// help for a command that does not exist is refused as the command
	// would be (cobra shows the top help, exit 0).
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Args = func(c *cobra.Command, args []string) error {
				cmd, rest, err := c.Root().Find(args)
				if err != nil || !cmd.HasSubCommands() {
					return nil
				}
				return unknownCommand(cmd, rest)
			}
		}
	}
	needsCommand := root.RunE
	root.RunE = func(c *cobra.Command, args []string) error {
		if g.version {
			return versionCmd.RunE(versionCmd, args)
		}
		return needsCommand(c, args)
	}
	wrapArgs(root)
	addCompletions(g, root)
	return root
}

// fallbackFlags are the flags whose value, when not given, comes from the
// config (or the environment, or a default): given empty, they would give
// way to it silently, so an empty one is refused (verify --base "" would
// drop every check against the base).
var fallbackFlags = []string{"config", "recipes", "proxy", "cache", "state", "out", "repo", "suite", "component",
	"compression", "provenance-key", "tuf-url", "tuf-root", "trusted-root", "github-api", "provenance", "base",
	"to", "date", "now", "arch", "only", "table", "write", "metrics", "message", "output", "sigstore-source-repository"}

// checkEmptyFlags refuses a fallback flag given an empty value (--out "",
// an unset shell variable): the config's value would be used in its place
// without a word.
func checkEmptyFlags(c *cobra.Command) error {
	for _, name := range fallbackFlags {
		f := c.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		// --arch "" reads as no architecture at all: every one.
		if s, ok := f.Value.(pflag.SliceValue); f.Value.String() == "" || ok && len(s.GetSlice()) == 0 {
			return emptyFlag(name)
		}
	}
	return nil
}

// emptyFlag is the refusal of a fallback flag given an empty value.
func emptyFlag(name string) error {
	return invalidInput(fmt.Errorf("--%s is empty", name), fmt.Sprintf("give --%s a value, or leave it out to use the config's (or the default): an empty --%s would give way to it without a word", name, name))
}

// unknownCommand refuses arguments to a group of commands: the first is an
// unknown command, and the hint names the nearest commands.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	path := strings.TrimPrefix(c.CommandPath(), "updeb")
	hint := "see 'updeb" + path + " --help' for the list of commands"
	if sub, _, err := c.Find(args[:1]); err == nil && sub != c {
		// "updeb -- lint": a command read as an argument, since it
		// follows "--" (suggesting "lint" for "lint" helps nobody).
		return invalidInput(fmt.Errorf("%q after \"--\" is read as an argument of %s, not as the command %s", args[0], c.CommandPath(), sub.CommandPath()),
			"put \"--\" after the command and its flags: updeb"+path+" "+args[0]+" [flags] -- ARG...")
	}
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		hint = "did you mean " + strings.Join(s, " or ") + "? (" + hint + ")"
	}
	return invalidInput(fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath()), hint)
}

// wrapArgs makes every command's argument validator return a usage error.
func wrapArgs(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		if c.Args == nil {
			return
		}
		validate := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := validate(cmd, args); err != nil {
				if _, ok := errors.AsType[*inputError](err); ok {
					return err
				}
				if !cmd.HasSubCommands() && len(args) > 0 && strings.HasPrefix(err.Error(), "unknown command ") {
					// cobra.NoArgs calls an argument an unknown command, which
					// it is not: "updeb compat release-sets.yaml".
					err = fmt.Errorf("%s takes no arguments, got %q: what it reads is named by its flags", cmd.CommandPath(), args[0])
				}
				return invalidInput(err, helpHint(cmd))
			}
			return nil
		}
	})
}

// helpHint is the hint under a bad flag or argument: the command's own
// help, named by its whole path ('updeb help repo list'), or the top help.
func helpHint(c *cobra.Command) string {
	if !c.HasParent() {
		return "see '" + c.Name() + " --help'"
	}
	return "see '" + c.Root().Name() + " help " + strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") + "'"
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runOn(ctx, args, stdout, stderr, detectTerminal(stderr))
}

// runOn is run with what is known of stderr's terminal (tests pass their own).
func runOn(ctx context.Context, args []string, stdout, stderr io.Writer, tty terminalInfo) int {
	out := &resultWriter{w: stdout}
	g := &globalOptions{stdout: out, stderr: stderr, term: tty}
	root := newRootCmd(g)
	root.SetArgs(args)
	err := root.ExecuteContext(lockfile.WithWaitNotice(ctx, g.lockWaitNotice))
	g.closeConsole()
	if err == nil {
		err = out.err // results lost unnoticed by a command that wrote text
	}
	if err != nil {
		readLogFormat(root, args)
		err = interrupted(ctx, err)
		code, _ := exitStatus(err)
		if code != exitClosedPipe { // the reader of the results left: nothing to say
			printError(stderr, err, g.logFormat == "json")
		}
		return code
	}
	return exitOK
}

// lockWaitNotice says that the run waits for a lock another process holds
// (lockfile.WithWaitNotice). The first notice, after a second, is an info
// line: two runs taking turns are no news where no one watches. Those from
// lockfile.WarnAfter on are warnings, which a run whose stderr is no
// terminal (cron, CI) shows too: a job that never ends says why, and whom
// it waits for, now and then as long as it waits.
func (g *globalOptions) lockWaitNotice(path, holder string, waited time.Duration) {
	args := []any{"lock", path}
	if holder != "" {
		args = append(args, "holder", holder)
	}
	if waited < lockfile.WarnAfter {
		g.logger().Info("waiting for a lock that another updeb process holds (Ctrl-C stops waiting)", args...)
		return
	}
	args = append(args, "waited", waited.Round(time.Second).String())
	g.logger().Warn("still waiting for a lock that another updeb process holds; this run goes on once that process lets it go "+
		"(one stopped with Ctrl-Z or SIGSTOP goes on after kill -CONT), and Ctrl-C stops waiting", args...)
}

// resultWriter is stdout as the commands see it. It keeps the first write
// error, which ends every later write, so that results that could not be
// written (a full disk, an I/O error) fail the command with exit 3, also
// where a command prints its text without checking each write.
type resultWriter struct {
	w   io.Writer
	err error
}

func (r *resultWriter) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.w.Write(p)
	if err != nil {
		r.err = &stdoutError{err: err}
	}
	return n, r.err
}

// readLogFormat reads --log-format from args when parsing them stopped
// before it (an unknown flag or a bad value earlier on the line), so that
// the usage error is reported in the form asked for. The other flags are
// skipped as unknown ones.
func readLogFormat(root *cobra.Command, args []string) {
	f := root.PersistentFlags().Lookup("log-format")
	if f.Changed {
		return
	}
	fs := (&cobra.Command{}).Flags()
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.AddFlag(f)
	fs.Parse(args) // only errors of the line already reported
}

// first returns the first non-empty value: the settings' precedence, written
// flag first, then config, then environment or default.
func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// getenv is the single place the command layer reads the environment, so that
// tests can see every variable updeb depends on.
func getenv(key string) string { return os.Getenv(key) }

// subcommandNames lists a command's subcommands, for the error of a group
// command (keys, repo, ...) run without one.
func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	return strings.Join(names, ", ")
}
