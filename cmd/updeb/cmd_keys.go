package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/pkg/verify"
)

// newKeysCmd is the parent of the key commands; each subcommand is one line in
// its AddCommand list.
func newKeysCmd(g *globalOptions) *cobra.Command {
	keys := &cobra.Command{
		Use:   "keys",
		Short: "Inspect OpenPGP keyrings (keys/*.asc) and make repository signing keys",
		Example: `  updeb keys list                      # every keyring in keys/
  updeb keys list --json keys/helm.asc
  updeb keys generate --name "Example apt repository" --email apt@example.org --out /etc/updeb/repo-signing`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErrorf("keys needs a subcommand: %s", subcommandNames(cmd))
		},
	}
	keys.AddCommand(
		newKeysListCmd(g),
		newKeysGenerateCmd(g),
	)
	return keys
}

func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	return strings.Join(names, ", ")
}

type keysListOptions struct {
	files []string
}

func newKeysListCmd(g *globalOptions) *cobra.Command {
	o := &keysListOptions{}
	return jsonOutput(&cobra.Command{
		Use:   "list [FILE...]",
		Short: "Show each key and subkey of keyrings: fingerprint, algorithm, UIDs, dates, capabilities, warnings",
		Long: `Show each primary key and subkey of the given keyring files (default: keys/*.asc in the
working folder): fingerprint, algorithm and size, user IDs, creation, expiry, revocation
and capabilities, with warnings for weak, expired or revoked keys.`,
		Example: `  updeb keys list
  updeb keys list keys/helm.asc
  updeb keys list --json keys/runc.asc`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return runKeysList(cmd, g, o, time.Now())
		},
	}, 1)
}

// keyringListing is one file's keys, as printed by keys list --json.
type keyringListing struct {
	File string                  `json:"file"`
	Keys []verify.PrimaryKeyInfo `json:"keys"`
}

func runKeysList(cmd *cobra.Command, g *globalOptions, o *keysListOptions, now time.Time) error {
	w := cmd.OutOrStdout()
	files := o.files
	if len(files) == 0 {
		var err error
		if files, err = filepath.Glob(filepath.Join("keys", "*.asc")); err != nil || len(files) == 0 {
			return usageErrorf("no keyring given and no keys/*.asc in the working folder")
		}
	}
	var out []keyringListing
	for _, f := range files {
		kr, err := loadKeyring(f)
		if err != nil {
			return err
		}
		out = append(out, keyringListing{File: f, Keys: kr.List(now)})
	}
	if g.json {
		return printJSON(w, cmd, struct {
			Keyrings []keyringListing `json:"keyrings"`
		}{out})
	}
	for i, l := range out {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %d primary keys\n", l.File, len(l.Keys))
		for _, k := range l.Keys {
			printKey(w, "pub", k.KeyInfo)
			for _, u := range k.UserIDs {
				fmt.Fprintf(w, "      uid %s\n", u)
			}
			for _, s := range k.Subkeys {
				printKey(w, "  sub", s)
			}
		}
	}
	return nil
}

func printKey(w io.Writer, kind string, k verify.KeyInfo) {
	line := fmt.Sprintf("%s %-9s %s created %s", kind, k.Algorithm, k.Fingerprint, k.Created.Format(time.DateOnly))
	if k.Expires != nil {
		line += " expires " + k.Expires.Format(time.DateOnly)
	}
	if k.Revoked != nil {
		line += " REVOKED " + k.Revoked.Format(time.DateOnly)
	}
	fmt.Fprintf(w, "%s [%s]\n", line, strings.Join(k.Capabilities, ","))
	for _, warn := range k.Warnings {
		fmt.Fprintf(w, "      warning: %s\n", warn)
	}
}

// loadKeyring opens a keyring file the user named: one that cannot be read is
// invalid input (exit 2), like a malformed one (verify.ErrKeyring).
func loadKeyring(path string) (*verify.Keyring, error) {
	kr, err := verify.LoadKeyring(path)
	switch {
	case err == nil:
		return kr, nil
	case errors.Is(err, os.ErrNotExist):
		return nil, invalidInput(err, "give the path of an OpenPGP keyring, such as keys/helm.asc")
	case errors.Is(err, verify.ErrKeyring):
		return nil, err
	}
	return nil, invalidInput(err, "")
}
