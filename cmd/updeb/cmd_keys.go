package main

import "github.com/spf13/cobra"

// newKeysCmd is the keys parent command. On this branch it only holds
// generate; the lead merges it with the keys list branch.
func newKeysCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "keys",
		Short:   "Repository signing keys and keyrings",
		Example: `  updeb keys generate --name "Example apt" --email apt@example.com --out repo`,
	}
	cmd.AddCommand(newKeysGenerateCmd(g))
	return cmd
}
