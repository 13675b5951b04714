package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
)

const helloAsset = "hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz"

// A signature or checksum file that does not verify (an HTML error page
// served with 200, a damaged copy) is never served from the cache again:
// the build fetches it once more at once, and when that copy fails too the
// error says the file was discarded; once upstream (or the proxy) is fixed,
// the next build succeeds without --force.
func TestBadAuxFileIsDiscarded(t *testing.T) {
	testenv.RequireTool(t, "gpg")
	html := []byte("<html><body>502 Bad Gateway</body></html>\n")
	for _, tc := range []struct {
		name, file, what string
		want             error
	}{
		{"signature page", helloAsset + ".asc", "the signature file fetched from", openpgp.ErrSignature},
		{"checksum page", helloAsset + ".sha256sum", "the checksum file fetched from", digest.ErrChecksums},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, mirror := project(t)
			good, err := os.ReadFile(filepath.Join(mirror, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(mirror, tc.file), html, 0o644)
			out := filepath.Join(t.TempDir(), "out")
			opts := options(t, mirror, out)
			_, err = Run(context.Background(), jobs(t, root, "amd64", "hello"), opts)
			var ae *source.AuxError
			if !errors.As(err, &ae) || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.what+" https://releases.example.org/"+tc.file) ||
				!strings.Contains(err.Error(), "upstream may be compromised or the proxy is serving something else") {
				t.Fatalf("err = %v, want an AuxError naming %s", err, tc.file)
			}
			if d := debs(t, out); len(d) != 0 {
				t.Fatalf("built %v", d)
			}
			// Upstream fixed: the next build fetches the file again (no --force).
			os.WriteFile(filepath.Join(mirror, tc.file), good, 0o644)
			if _, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), opts); err != nil {
				t.Fatalf("after the fix: %v", err)
			}
		})
	}
}

// A bad copy already in the cache (fetched when the proxy served an error
// page) is replaced within the same run: the build recovers by itself.
func TestBadCachedAuxFileIsRefetched(t *testing.T) {
	testenv.RequireTool(t, "gpg")
	root, mirror := project(t)
	sig := filepath.Join(mirror, helloAsset+".asc")
	good, _ := os.ReadFile(sig)
	os.WriteFile(sig, []byte("<html>error</html>"), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	js := jobs(t, root, "amd64", "hello")
	plan, err := js[0].Recipe.Resolve("amd64", opts.ResolveOptions)
	if err != nil {
		t.Fatal(err)
	}
	// The bad copy goes into the cache under the build's own key.
	if _, err := opts.Source.Fetcher.Fetch(context.Background(), fetch.Request{URL: plan.Sources[0].Signature.URL, AllowUnpinned: true, Key: source.CacheKey(plan)}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(sig, good, 0o644)
	if _, err := Run(context.Background(), js, opts); err != nil {
		t.Fatalf("the cached bad signature was not replaced: %v", err)
	}
	if len(debs(t, out)) != 1 {
		t.Fatalf("outputs %v", debs(t, out))
	}
}
