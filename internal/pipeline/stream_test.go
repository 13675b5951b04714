package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/cache"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/digest"
)

// tarGz makes a .tar.gz holding the named members, in the order given, each
// with its name as content (repeated, so that members are not tiny).
func tarGz(t *testing.T, names ...string) []byte {
	t.Helper()
	var files []string
	for _, n := range names {
		files = append(files, "multi/"+n, strings.Repeat(n+"\n", 5000))
	}
	return tarballOf(t, files...)
}

// multiRecipe adds recipe "multi" to the project: source multi.tar.gz (data)
// and the packages given, each as "name: member>dest member>dest ...".
func multiRecipe(t *testing.T, root, mirror string, data []byte, packages ...string) {
	t.Helper()
	var b strings.Builder
	for _, p := range packages {
		name, files, _ := strings.Cut(p, ": ")
		fmt.Fprintf(&b, "  - name: %s\n    summary: streaming fixture\n    description: |\n      Members streamed or spooled.\n    section: utils\n    files:\n", name)
		for _, f := range strings.Fields(files) {
			src, dest, _ := strings.Cut(f, ">")
			fmt.Fprintf(&b, "      - {source: multi, path: multi/%s, dest: %s, mode: \"0755\"}\n", src, dest)
		}
	}
	tarballRecipe(t, root, mirror, "multi", data, b.String())
}

var spooledRE = regexp.MustCompile(`msg=spooled .*source=multi member=multi/(\S+)`)

// buildMulti builds recipe multi and returns the .debs' bytes by name and the
// members spooled, from the build's debug log.
func buildMulti(t *testing.T, root, mirror string, spoolAll bool) (map[string][]byte, []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	var log bytes.Buffer
	opts.Source.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.SpoolAll = spoolAll
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "multi"), opts); err != nil {
		t.Fatal(err)
	}
	built := map[string][]byte{}
	for _, p := range debs(t, out) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		built[filepath.Base(p)] = b
	}
	var spooled []string
	for _, m := range spooledRE.FindAllStringSubmatch(log.String(), -1) {
		spooled = append(spooled, m[1])
	}
	slices.Sort(spooled)
	return built, spooled
}

// Streaming and spooling give the same bytes; a member is spooled only when
// the writer cannot take it as it streams: it arrives before the writer needs
// it, it becomes two files, or it belongs to a later package of the source.
func TestStreamMatchesSpool(t *testing.T) {
	for _, tt := range []struct {
		name     string
		order    []string
		packages []string
		spooled  []string // when streaming
	}{
		{"archive in dpkg order", []string{"a", "b", "c"}, []string{"multi: a>/usr/bin/a b>/usr/bin/b c>/usr/bin/c"}, nil},
		{"member out of order", []string{"c", "a", "b"}, []string{"multi: a>/usr/bin/a b>/usr/bin/b c>/usr/bin/c"}, []string{"c"}},
		{"member not wanted first", []string{"b", "z", "a"}, []string{"multi: a>/usr/bin/a b>/usr/bin/b"}, []string{"b"}},
		{"member used twice", []string{"a", "b"}, []string{"multi: a>/usr/bin/a a>/usr/bin/a2 b>/usr/bin/b"}, []string{"a"}},
		{"two packages", []string{"a", "b", "c", "d"}, []string{"multi: a>/usr/bin/a c>/usr/bin/c", "multi-extra: b>/usr/lib/multi/b d>/usr/lib/multi/d"}, []string{"b", "d"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root, mirror := project(t)
			multiRecipe(t, root, mirror, tarGz(t, tt.order...), tt.packages...)
			streamed, spooled := buildMulti(t, root, mirror, false)
			reference, all := buildMulti(t, root, mirror, true)
			if !slices.Equal(spooled, tt.spooled) {
				t.Errorf("streaming spooled %q, want %q", spooled, tt.spooled)
			}
			var wanted []string
			for _, p := range tt.packages {
				_, files, _ := strings.Cut(p, ": ")
				for _, f := range strings.Fields(files) {
					src, _, _ := strings.Cut(f, ">")
					wanted = append(wanted, src)
				}
			}
			slices.Sort(wanted)
			if wanted = slices.Compact(wanted); !slices.Equal(all, wanted) {
				t.Errorf("SpoolAll spooled %q, want every wanted member %q", all, wanted)
			}
			if len(streamed) != len(tt.packages) || len(reference) != len(streamed) {
				t.Fatalf("built %d and %d packages, want %d", len(streamed), len(reference), len(tt.packages))
			}
			for name, b := range reference {
				if !bytes.Equal(streamed[name], b) {
					t.Errorf("%s: streamed and spooled builds differ", name)
				}
			}
		})
	}
}

// An archive's error found after the last wanted member (here the gzip
// checksum at its very end) aborts the package: no .deb, nothing left over.
func TestArchiveErrorAfterLastMember(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"gzip checksum", func(b []byte) []byte { b[len(b)-8] ^= 0xff; return b }, "gzip: invalid checksum"},
		{"trailing garbage", func(b []byte) []byte { return append(b, "garbage after the archive"...) }, "multi.tar.gz"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root, mirror := project(t)
			multiRecipe(t, root, mirror, tt.damage(tarGz(t, "a", "b", "z")), "multi: a>/usr/bin/a b>/usr/bin/b")
			out := filepath.Join(t.TempDir(), "out")
			_, err := Run(context.Background(), jobs(t, root, "amd64", "multi"), options(t, mirror, out))
			if !errors.Is(err, archive.ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrCorrupt mentioning %q", err, tt.want)
			}
			entries, _ := os.ReadDir(out)
			for _, e := range entries {
				if e.Name() != StateDir {
					t.Errorf("left %s in the output folder", e.Name())
				}
			}
		})
	}
}

// swapOnVerified is a log handler that renames a file over another when a
// source is logged verified: the cache file replaced after its verification
// and before a package reads it.
type swapOnVerified struct {
	from, to string
	err      error
}

func (h *swapOnVerified) Enabled(context.Context, slog.Level) bool { return true }
func (h *swapOnVerified) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *swapOnVerified) WithGroup(string) slog.Handler            { return h }
func (h *swapOnVerified) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "verified" && h.err == nil {
		h.err = os.Rename(h.from, h.to)
	}
	return nil
}

// A cached archive replaced by other bytes once it was verified, before the
// package reads its members, fails the package: nothing but verified bytes
// is packaged, and nothing reaches the output folder.
func TestArchiveChangedAfterVerification(t *testing.T) {
	root, mirror := project(t)
	good := tarGz(t, "a", "b")
	multiRecipe(t, root, mirror, good, "multi: a>/usr/bin/a b>/usr/bin/b")
	evil := tarballOf(t, "multi/a", "#!/bin/sh\necho evil\n", "multi/b", "#!/bin/sh\necho evil\n")
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	dir := t.TempDir()
	opts := options(t, mirror, filepath.Join(t.TempDir(), "out"))
	f, err := fetch.New(dir, fetch.Options{Mirrors: []fetch.Mirror{{Prefix: demoHost, To: "file://" + mirror + "/"}}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	swap := &swapOnVerified{from: filepath.Join(t.TempDir(), "evil.tar.gz"), to: c.BlobPath(sum(good))}
	if err := os.WriteFile(swap.from, evil, 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Source.Fetcher, opts.Source.Logger = f, slog.New(swap)
	_, err = Run(context.Background(), jobs(t, root, "amd64", "multi"), opts)
	if swap.err != nil {
		t.Fatal(swap.err)
	}
	var me *digest.MismatchError
	if !errors.As(err, &me) || me.Want != sum(good) || me.Got != sum(evil) {
		t.Fatalf("err = %v, want a sha256 mismatch of the verified and the packaged archive", err)
	}
	if built := debs(t, opts.OutDir); len(built) != 0 {
		t.Errorf("packaged bytes that were not verified: %q", built)
	}
}

// A package's lintian overrides come before its files under /usr/share/m...
// and later: such a file's facts are read ahead from the disk when a file
// holds it, and a spooled member is read through the spool's decoder, not as
// the compressed bytes it is stored as. The member here is a relocatable
// object with a symbol table: unstripped, not a static executable.
func TestOverridesReadSpooledMember(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	obj, err := os.ReadFile("/usr/lib/x86_64-linux-gnu/crt1.o") // libc6-dev (.ci/run)
	if err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	root, mirror := project(t)
	// The member belongs to two packages: the second one's copy is spooled.
	multiRecipe(t, root, mirror, tarballOf(t, "multi/obj", string(obj)),
		"multi: obj>/usr/lib/multi/obj", "multi-extra: obj>/usr/share/multi/obj")
	built, spooled := buildMulti(t, root, mirror, false)
	if !slices.Equal(spooled, []string{"obj"}) {
		t.Fatalf("spooled %q, want [obj]", spooled)
	}
	for name, data := range built {
		if !strings.HasPrefix(name, "multi-extra_") {
			continue
		}
		dir := t.TempDir()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ovs := string(testenv.Run(t, "sh", "-c", "dpkg-deb --fsys-tarfile "+p+" | tar -xOf - ./usr/share/lintian/overrides/multi-extra"))
		if !strings.Contains(ovs, "multi-extra: unstripped-binary-or-object [usr/share/multi/obj]") || strings.Contains(ovs, "statically-linked-binary") {
			t.Errorf("overrides of multi-extra, want the unstripped tag only for usr/share/multi/obj:\n%s", ovs)
		}
		return
	}
	t.Fatalf("no multi-extra package among %d built", len(built))
}

// A spooled member's file is named by the build, not by its source: a
// source name as long as a recipe may write (it has no limit) gave a spool
// file name longer than a file system takes (255 bytes on ext4 and tmpfs,
// 143 on eCryptfs), and the build failed with "file name too long" where
// the same recipe built in a folder whose names may be longer. The package
// is the same bytes as with a short name.
func TestSpoolLongSourceName(t *testing.T) {
	root, mirror := project(t)
	multiRecipe(t, root, mirror, tarGz(t, "a", "b"), "multi: a>/usr/bin/a a>/usr/bin/a2 b>/usr/bin/b")
	short, spooled := buildMulti(t, root, mirror, false)
	if !slices.Equal(spooled, []string{"a"}) {
		t.Fatalf("spooled %q, want [a]", spooled)
	}
	rp := filepath.Join(root, "recipes", "multi.yaml")
	text, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("s", 250)
	renamed := strings.Replace(string(text), "  - name: multi\n    url:", "  - name: "+long+"\n    url:", 1)
	renamed = strings.ReplaceAll(renamed, "{source: multi,", "{source: "+long+",")
	if strings.Count(renamed, long) != 4 {
		t.Fatalf("the source is not renamed everywhere in:\n%s", renamed)
	}
	if err := os.WriteFile(rp, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "multi"), options(t, mirror, out)); err != nil {
		t.Fatal(err)
	}
	built := debs(t, out)
	if len(built) != 1 || len(short) != 1 {
		t.Fatalf("built %q and %d packages, want one each", built, len(short))
	}
	b, err := os.ReadFile(built[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, short[filepath.Base(built[0])]) {
		t.Errorf("%s differs with the source's name", filepath.Base(built[0]))
	}
}

// The longest package name a recipe may have builds: the package and its
// provenance record, whose file name is 12 bytes longer, both fit in a file
// name. Lint passed names up to the package's own limit (255 bytes), and
// every build of the longest of them failed on the record's.
func TestLongestPackageNameBuilds(t *testing.T) {
	root, mirror := project(t)
	data := tarGz(t, "a")
	longest := 0
	for n := 255; n > 0 && longest == 0; n-- {
		multiRecipe(t, root, mirror, data, strings.Repeat("m", n)+": a>/usr/bin/a")
		if _, err := recipe.Load(filepath.Join(root, "recipes", "multi.yaml"), recipe.LoadOptions{}); err == nil {
			longest = n
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "multi"), options(t, mirror, out)); err != nil {
		t.Fatalf("the longest name lint takes, %d bytes: %v", longest, err)
	}
	built := debs(t, out)
	if len(built) != 1 {
		t.Fatalf("built %q", built)
	}
	if _, err := os.Stat(built[0] + ProvenanceSuffix); err != nil {
		t.Error(err)
	}
}

// A recipe's name has no length limit, but the build names its state
// record (NAME_ARCH.json) and commit journal (commit-NAME.json) after it: a
// name near 255 bytes passed lint, built every package and failed to move
// them into the output folder ("file name too long"). Such a name's files
// keep its first bytes and a digest of the whole: the recipe builds, and
// the next run finds it up to date.
func TestLongRecipeNameBuilds(t *testing.T) {
	root, mirror := project(t)
	multiRecipe(t, root, mirror, tarGz(t, "a"), "multi: a>/usr/bin/a")
	rp := filepath.Join(root, "recipes", "multi.yaml")
	text, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("r", 250)
	if !strings.HasPrefix(string(text), "name: multi\n") {
		t.Fatalf("the recipe starts otherwise:\n%s", text)
	}
	if err := os.WriteFile(rp, []byte("name: "+long+strings.TrimPrefix(string(text), "name: multi")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	for i, wantSkipped := range []bool{false, true} {
		res, err := Run(context.Background(), jobs(t, root, "amd64", "multi"), opts)
		if err != nil {
			t.Fatalf("build %d: %v", i+1, err)
		}
		if len(res) != 1 || res[0].Skipped != wantSkipped {
			t.Errorf("build %d: %+v, want skipped %v", i+1, res, wantSkipped)
		}
	}
	if built := debs(t, out); len(built) != 1 {
		t.Errorf("built %q", built)
	}
	if PendingCommit(out) {
		t.Error("a commit journal is left")
	}
}
