package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/lockfile"
)

func newKeysGenerateCmd(g *globalOptions) *cobra.Command {
	var name, email, kind, prefix string
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Make a repository signing key (Ed25519 by default)",
		Long: `generate writes PREFIX.secret.asc (the armored secret key, mode 0600, for --key),
PREFIX.gpg (the public key in the binary form apt's signed-by wants) and PREFIX.asc
(the public key, armored), both mode 0644 whatever the umask. It never overwrites an
existing file, and leaves none of the three when it cannot write all of them (a full
disk). Each is written whole in a hidden folder beside them, then linked into place: a
run killed on the way leaves that folder, and the next run with the same PREFIX removes
it with the key files it had placed. PREFIX's folder is created when missing (mode 0755
whatever the umask: the public keys in it are for others to read; the secret key file
is 0600 from the moment it exists).`,
		Example: `  updeb keys generate --name "Example apt repository" --email apt@example.com --out /etc/updeb/repo
  updeb keys generate --name "Example apt repository" --email apt@example.com --type rsa4096 --out repo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if prefix == "" {
				return usageErrorf("--out PREFIX is required")
			}
			// A folder is no prefix: "keys/" would give the hidden files
			// keys/.secret.asc, keys/.gpg and keys/.asc.
			if base := filepath.Base(prefix); strings.HasSuffix(prefix, "/") || base == "." || base == ".." {
				return usageErrorf("--out %s names a folder; PREFIX is the start of the key files' names: --out %s", prefix, filepath.Join(prefix, "repo"))
			}
			t, err := repo.ParseKeyType(kind)
			if err != nil {
				return invalidInput(err, "")
			}
			k, err := newKey(cmd.Context(), name, email, t)
			if err != nil {
				return err
			}
			files := []keyFile{
				{prefix + ".secret.asc", k.SecretArmored, 0o600},
				{prefix + ".gpg", k.PublicBinary, 0o644},
				{prefix + ".asc", k.PublicArmored, 0o644},
			}
			if err := atomicfile.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
				return invalidInput(err, "--out PREFIX names the key files: PREFIX.secret.asc, PREFIX.gpg, PREFIX.asc")
			}
			if err := writeKeyFiles(prefix, files); err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cmd, map[string]string{"fingerprint": k.Fingerprint, "secret": files[0].name, "public": files[1].name, "public_armored": files[2].name})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "key %s\nsecret key  %s (keep it private)\npublic key  %s (for signed-by), %s\n", k.Fingerprint, files[0].name, files[1].name, files[2].name)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "user ID name, for example \"Example apt repository\"")
	f.StringVar(&email, "email", "", "user ID email address")
	f.StringVar(&kind, "type", string(repo.Ed25519), "ed25519, rsa3072 or rsa4096")
	f.StringVar(&prefix, "out", "", "output prefix: writes PREFIX.secret.asc, PREFIX.gpg and PREFIX.asc")
	return jsonOutput(cmd, 1)
}

// newKey makes the key, or returns ctx's error as soon as ctx is done:
// the primes of an RSA key take seconds to find (two keys' worth: the
// OpenPGP library makes a subkey too), and nothing stops their search, so
// a signal would otherwise be answered seconds later by key files written
// and exit 0. The abandoned search ends with the process.
func newKey(ctx context.Context, name, email string, t repo.KeyType) (*repo.GeneratedKey, error) {
	type result struct {
		k   *repo.GeneratedKey
		err error
	}
	done := make(chan result, 1)
	go func() {
		k, err := repo.GenerateKey(name, email, t, time.Now(), rand.Reader)
		done <- result{k, err}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-done:
		if r.err != nil {
			return nil, invalidInput(r.err, "")
		}
		return r.k, nil
	}
}

// keyFile is one of the files keys generate writes.
type keyFile struct {
	name string
	data []byte
	mode os.FileMode
}

// writeKeyFiles writes files, all three or none, never over an existing file.
// They are written whole in a folder of this run beside them, then linked
// into place: a run killed on the way (kill -9, power) leaves that folder,
// and the next run with the same prefix removes it, with the key files it
// had linked, before it looks for existing ones. A file system without hard
// links (FAT) gets a copy instead, with only the full-disk guarantee.
func writeKeyFiles(prefix string, files []keyFile) error {
	work, err := lockfile.TempDir(filepath.Dir(prefix), keysWorkPrefix(prefix), func(dir string) { unlinkUnfinished(dir, files) })
	if err != nil {
		return keyFileError(err, files[0].name)
	}
	defer work.Remove()
	for _, f := range files {
		if _, err := os.Lstat(f.name); err == nil {
			return invalidInput(fmt.Errorf("%s already exists", f.name), "choose another --out prefix; updeb never overwrites a key")
		}
	}
	for _, f := range files {
		if err := writeNewFile(filepath.Join(work.Path, filepath.Base(f.name)), f.data, f.mode); err != nil {
			return keyFileError(err, f.name)
		}
	}
	for i, f := range files {
		err := os.Link(filepath.Join(work.Path, filepath.Base(f.name)), f.name)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			err = writeNewFile(f.name, f.data, f.mode)
		}
		if err != nil {
			for _, w := range files[:i] {
				err = errors.Join(err, os.Remove(w.name))
			}
			if errors.Is(err, fs.ErrExist) {
				return invalidInput(err, "another updeb keys generate wrote it meanwhile: choose another --out prefix; updeb never overwrites a key")
			}
			return err
		}
	}
	if err := atomicfile.SyncDir(filepath.Dir(prefix)); err != nil {
		return err
	}
	// Not needed once the folder is gone; a run killed before that (and
	// after this) keeps its files.
	writeNewFile(filepath.Join(work.Path, keysLinked), nil, 0o600) //nolint:errcheck // see above
	return nil
}

// keyFileError names the key file name in err, a failure to make the
// folder of this run or to write name in it (a full disk, a read-only
// file system), as atomicfile names a target: not the folder, which is
// gone when the error is read and which nobody asked for, and whose name
// a full disk's hint gave as the place to free.
func keyFileError(err error, name string) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return &fs.PathError{Op: "create", Path: name, Err: pe.Err}
	}
	return err
}

// keysWorkPrefix starts the name of the folder a keys generate of prefix
// writes its files in before linking them into place.
func keysWorkPrefix(prefix string) string { return "." + filepath.Base(prefix) + ".keys-generate-" }

// keysLinked, in a keys generate's folder, says that all three key files were
// linked into place: the run finished, whatever happened to it afterwards.
const keysLinked = "linked"

// unlinkUnfinished removes the key files that the killed keys
// generate whose folder is dir had linked into place before it could link
// them all: each only while it is still the file of that folder (a key file
// written since by someone else is not touched).
func unlinkUnfinished(dir string, files []keyFile) {
	if _, err := os.Lstat(filepath.Join(dir, keysLinked)); err == nil {
		return
	}
	for _, f := range files {
		ours, err := os.Lstat(filepath.Join(dir, filepath.Base(f.name)))
		if err != nil {
			continue
		}
		if placed, err := os.Lstat(f.name); err == nil && os.SameFile(ours, placed) {
			os.Remove(f.name)
		}
	}
}

// writeNewFile creates name (failing if it exists) with mode, whatever the
// umask (the public keys are for others to read), writes and fsyncs data.
func writeNewFile(name string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(err, os.Remove(name))
	}
	return nil
}
