package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/mirror"
	"github.com/updeb/updeb/pkg/termtext"
)

func newMirrorCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Carry recipes' downloads to a host without a way out (export, verify)",
		Long: `mirror export writes every artifact, signature and checksum file of the recipes into a
folder, at their upstream URL paths (HOST/PATH), with a manifest of digests
(updeb-mirror.json). Carry the folder to the air-gapped host, check it there with
mirror verify, and point a mirrors: entry per host at it: the build reads the
folder as it would the upstream and verifies every byte again.`,
		Example: `  updeb mirror export /media/usb/updeb-mirror               # every recipe, every architecture
  updeb mirror export /media/usb/updeb-mirror helm runc --arch amd64
  updeb mirror verify /media/usb/updeb-mirror               # on the far side`,
	}
	cmd.AddCommand(newMirrorExportCmd(g), newMirrorVerifyCmd(g))
	return cmd
}

type mirrorExportOptions struct {
	arches []string
}

func newMirrorExportCmd(g *globalOptions) *cobra.Command {
	o := &mirrorExportOptions{}
	cmd := &cobra.Command{
		Use:   "export DIR [RECIPE...]",
		Short: "Write the recipes' verified downloads into DIR at their URL paths, with a manifest",
		Long: `export fetches and verifies every source of the recipes (none named: all) with its
signature and checksum file, exactly as build does, and copies each into DIR at
HOST/PATH of its upstream URL: the layout a mirrors: entry with a folder reads. The
answers verification needed from GitHub's API (the attestations of a recipe trusted
through github-attestations:, and the bundles they point at) go in too, under the API's
host, so that the far side verifies them offline. The manifest DIR/updeb-mirror.json
lists every file with its URL, size and digests (exporting again adds to it). It prints
the mirrors: entries for the far side: one for every host the folder holds, those of
earlier exports into it too. It writes only inside DIR: a symlink met there
is refused (exit 1) or, for a file, replaced. Exports into one DIR run one at a
time (a lock on DIR: a second waits, so that neither loses the other's manifest
entries), and one removes the temporary copies an export killed while copying
left in DIR. A listed file whose bytes upstream changed (a checksum file, a
signature) is unlisted before it is replaced: an export that stops half way leaves
it unlisted, never listed with the old bytes' digests, and the next export lists it.`,
		Example: `  updeb mirror export /media/usb/updeb-mirror
  updeb --config testdata/demo/updeb.yaml --recipes testdata/demo/recipes mirror export out/mirror hello pingd --arch amd64 --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := mirrorDir(args[0]); err != nil {
				return err
			}
			s, err := g.openSession(cmd.Context(), args[1:], o.arches)
			if err != nil {
				return err
			}
			defer s.Close()
			opts, err := s.sourceOptions()
			if err != nil {
				return err
			}
			// The Sigstore verifier's answers (GitHub's attestations) are
			// recorded as it verifies, and go into the folder too.
			so := sigstoreOptions(s.cfg, s.fetcher)
			rec := &mirror.Recorder{Next: so.HTTPClient.Transport}
			so.HTTPClient = &http.Client{Transport: rec}
			if opts.Sigstore, err = s.g.sigstoreVerifier(s.cfg, so); err != nil {
				return err
			}
			res, err := mirror.Export(cmd.Context(), s.jobs, resolveOptions(s.cfg), opts, args[0], rec)
			if h, ok := errors.AsType[*mirror.HalfExportedError](err); ok {
				return &halfDoneError{err, h.Done()}
			}
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				return printJSON(w, cmd, res)
			}
			for _, f := range res.Files {
				fmt.Fprintf(w, "%s  %d  %s\n", f.SHA256, f.Size, f.Path)
			}
			fmt.Fprintf(w, "%d file(s) in %s (manifest %s)\nOn the far side: updeb mirror verify DIR, then in the config:\nmirrors:\n", len(res.Files), res.Dir, mirror.ManifestName)
			for _, m := range res.Mirrors {
				fmt.Fprintf(w, "  - {prefix: %s, to: %s}\n", m.Prefix, m.To)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&o.arches, "arch", nil, "only these architectures (default: every one)")
	return jsonOutput(cmd, 1)
}

func newMirrorVerifyCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify DIR",
		Short: "Check a mirror folder against its manifest: missing and corrupt files",
		Long: `verify re-reads every file DIR/updeb-mirror.json lists: a file that is not there is
missing, one whose size or digest differs is corrupt, one that is not a regular file
inside its host's folder DIR/HOST, the folder a build reads it from (a symlink out of
it, a device), is refused. A file the manifest does not list is named unlisted (not
checked), a temporary copy an export that was stopped left there leftover (the next
export into DIR removes it); while an export into DIR runs, verify says so. Exit 0 when
every file is as
listed, 1 otherwise, 2 when DIR holds no manifest updeb wrote (one that lists a URL at
another path than the one a mirrors: entry reads for it is not one).`,
		Example: `  updeb mirror verify /media/usb/updeb-mirror
  updeb mirror verify /srv/mirror --json | jq '.files[] | select(.status != "ok")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := mirrorDir(args[0]); err != nil {
				return err
			}
			rep, verr := mirror.Verify(cmd.Context(), args[0])
			if rep == nil {
				return verr
			}
			w := cmd.OutOrStdout()
			if g.json {
				if err := printJSON(w, cmd, rep); err != nil {
					return err
				}
			} else {
				printMirrorReport(w, rep)
			}
			return verr
		},
	}
	return jsonOutput(cmd, 1)
}

// mirrorDir refuses an empty DIR (a script's unset variable): export wrote
// the mirror into the working folder, and verify said "open : no such
// file".
func mirrorDir(dir string) error {
	if dir == "" {
		return invalidInput(errors.New("DIR is empty"), "name the mirror folder: an empty DIR (an unset variable?) would be the working folder")
	}
	return nil
}

// printMirrorReport prints mirror verify's report for a person. The folder
// comes from elsewhere: its manifest's paths and URLs and its files' names
// reach the terminal escaped (termtext). A file that is there but could not
// be read (permission denied) or read to its end (an I/O error) is named
// with the reason: it is no file to bring over again.
func printMirrorReport(w io.Writer, rep *mirror.Report) {
	esc := termtext.Escape
	if rep.Exporting {
		fmt.Fprintf(w, "an export into %s is running: what it has not written and listed yet is not checked; verify again once it ends\n", esc(rep.Dir))
	}
	for _, c := range rep.Files {
		switch {
		case c.Status == mirror.Missing && c.Detail != "":
			fmt.Fprintf(w, "MISSING  %s (%s): %s\n", esc(c.Path), esc(c.URL), esc(c.Detail))
		case c.Status == mirror.Missing:
			fmt.Fprintf(w, "MISSING  %s (%s)\n", esc(c.Path), esc(c.URL))
		case c.Status == mirror.Corrupt && c.Detail != "":
			fmt.Fprintf(w, "CORRUPT  %s: %s\n", esc(c.Path), esc(c.Detail))
		case c.Status == mirror.Corrupt && c.GotSize == c.Size && c.GotSHA256 == c.SHA256:
			// Only the sha512 differs: the file is what the sha256 says,
			// and the manifest lists another sha512 beside it.
			fmt.Fprintf(w, "CORRUPT  %s: sha512 %s; the manifest says sha512 %s (its size and sha256 match)\n", esc(c.Path), c.GotSHA512, c.SHA512)
		case c.Status == mirror.Corrupt:
			fmt.Fprintf(w, "CORRUPT  %s: %d bytes, sha256 %s; the manifest says %d bytes, sha256 %s\n", esc(c.Path), c.GotSize, c.GotSHA256, c.Size, c.SHA256)
		case c.Status == mirror.Refused:
			fmt.Fprintf(w, "REFUSED  %s: %s\n", esc(c.Path), esc(c.Detail))
		}
	}
	unlisted := 0 // files; a folder it may not read ends in "/"
	for _, u := range rep.Unlisted {
		switch {
		case strings.HasSuffix(u, "/"):
			fmt.Fprintf(w, "unlisted %s (a folder updeb may not read: not checked)\n", esc(u))
		case mirror.Leftover(u) && rep.Exporting:
			fmt.Fprintf(w, "copying  %s (a temporary copy the running export writes)\n", esc(u))
		case mirror.Leftover(u):
			// Not a file to merge or carry: what an export stopped
			// while copying left (kill -9, a full disk).
			fmt.Fprintf(w, "leftover %s (a temporary copy of an export that was stopped: the next export into the folder removes it)\n", esc(u))
		default:
			fmt.Fprintf(w, "unlisted %s (not in the manifest: not checked)\n", esc(u))
			unlisted++
		}
	}
	fmt.Fprintf(w, "%d file(s): %d ok, %d missing, %d corrupt, %d refused\n", len(rep.Files), rep.Count(mirror.OK), rep.Count(mirror.Missing), rep.Count(mirror.Corrupt), rep.Count(mirror.Refused))
	if unlisted > 0 {
		// A build reads an unlisted file all the same when a recipe's
		// URL maps to it (and checks it against the recipe's pins):
		// two exports copied into one folder leave one manifest, and
		// the other's files unlisted.
		fmt.Fprintf(w, "%d file(s) not in the manifest, not checked; a build that reads one still checks it against its recipe. Exports merge when made into one folder (each adds to its manifest), not when copied over each other, and an export stopped before its end (Ctrl-C, a full disk) leaves the files it placed unlisted: the same export again lists them\n", unlisted)
	}
}
