package sigstore

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/updeb/updeb/pkg/lockfile"
)

// tufRepo is a TUF repository made with go-tuf's metadata API, in the layout
// Sigstore's has (consistent snapshots: N.root.json, timestamp.json,
// N.snapshot.json, N.targets.json, targets/HASH.trusted_root.json), served on
// 127.0.0.1.
type tufRepo struct {
	t       *testing.T
	srv     *httptest.Server
	keys    map[string]ed25519.PrivateKey
	root    *metadata.Metadata[metadata.RootType]
	mu      sync.Mutex
	files   map[string][]byte
	status  map[string]int
	version int64
	anchor  []byte   // 1.root.json
	olds    [][]byte // every timestamp.json published
}

func newTUFRepo(t *testing.T) *tufRepo {
	r := &tufRepo{t: t, keys: map[string]ed25519.PrivateKey{}, files: map[string][]byte{}, status: map[string]int{}}
	r.root = metadata.Root(time.Now().Add(365 * 24 * time.Hour))
	for _, role := range []string{metadata.ROOT, metadata.TARGETS, metadata.SNAPSHOT, metadata.TIMESTAMP} {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		r.keys[role] = k
		key, err := metadata.KeyFromPublicKey(k.Public())
		if err != nil {
			t.Fatal(err)
		}
		if err := r.root.Signed.AddKey(key, role); err != nil {
			t.Fatal(err)
		}
	}
	r.sign(r.root, metadata.ROOT)
	r.anchor = r.bytes(r.root)
	r.files["/1.root.json"] = r.anchor
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if s := r.status[req.URL.Path]; s != 0 {
			http.Error(w, "unavailable", s)
			return
		}
		b, ok := r.files[req.URL.Path]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *tufRepo) sign(m interface {
	Sign(signature.Signer) (*metadata.Signature, error)
}, role string) {
	r.t.Helper()
	s, err := signature.LoadSigner(r.keys[role], crypto.Hash(0))
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := m.Sign(s); err != nil {
		r.t.Fatal(err)
	}
}

func (r *tufRepo) bytes(m interface{ ToBytes(bool) ([]byte, error) }) []byte {
	r.t.Helper()
	b, err := m.ToBytes(false)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// publish makes a new version listing target as trusted_root.json; expires
// is the timestamp's expiry.
func (r *tufRepo) publish(target []byte, expires time.Time) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version++
	week := time.Now().Add(7 * 24 * time.Hour)
	targets := metadata.Targets(week)
	targets.Signed.Version = r.version
	tf, err := metadata.TargetFile().FromBytes(trustedRootTarget, target, "sha256")
	if err != nil {
		r.t.Fatal(err)
	}
	targets.Signed.Targets[trustedRootTarget] = tf
	r.sign(targets, metadata.TARGETS)
	snapshot := metadata.Snapshot(week)
	snapshot.Signed.Version = r.version
	snapshot.Signed.Meta["targets.json"] = metadata.MetaFile(r.version)
	r.sign(snapshot, metadata.SNAPSHOT)
	ts := metadata.Timestamp(expires)
	ts.Signed.Version = r.version
	ts.Signed.Meta["snapshot.json"] = metadata.MetaFile(r.version)
	r.sign(ts, metadata.TIMESTAMP)
	r.files[fmt.Sprintf("/%d.targets.json", r.version)] = r.bytes(targets)
	r.files[fmt.Sprintf("/%d.snapshot.json", r.version)] = r.bytes(snapshot)
	r.files["/timestamp.json"] = r.bytes(ts)
	r.olds = append(r.olds, r.files["/timestamp.json"])
	r.files[fmt.Sprintf("/targets/%s.%s", tf.Hashes["sha256"], trustedRootTarget)] = target
}

func (r *tufRepo) refresh(dir string) (*TrustedRoot, error) {
	return Refresh(r.t.Context(), RefreshOptions{HTTPClient: &http.Client{}, RepositoryURL: r.srv.URL, Root: r.anchor, Dir: dir, Timeout: 5 * time.Second})
}

func TestRefresh(t *testing.T) {
	r := newTUFRepo(t)
	first := newVirtual(t).root.JSON()
	r.publish(first, time.Now().Add(24*time.Hour))
	dir := t.TempDir()
	tr, err := r.refresh(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tr.JSON(), first) || !strings.Contains(tr.Name(), r.srv.URL) {
		t.Errorf("refreshed %s: not the target", tr.Name())
	}
	cached, _ := filepath.Glob(filepath.Join(dir, "*", "timestamp.json"))
	if len(cached) != 1 {
		t.Errorf("TUF metadata not kept in %s: %v", dir, cached)
	}

	// A new version of the target is picked up by the next refresh.
	second := goodRoot(t).JSON()
	r.publish(second, time.Now().Add(24*time.Hour))
	if tr, err = r.refresh(dir); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tr.JSON(), second) {
		t.Error("second refresh did not return the new target")
	}

	// A mirror serving the older timestamp again is a rollback attack.
	r.mu.Lock()
	r.files["/timestamp.json"] = r.olds[0]
	r.mu.Unlock()
	if _, err := r.refresh(dir); err == nil {
		t.Error("a rolled-back timestamp was accepted")
	} else {
		t.Log(err)
	}
}

// The repository's URL with and without a trailing slash (updeb trust
// refresh --tuf-url https://tuf.internal/, the config's tuf-url:
// https://tuf.internal) is one repository: the metadata one refresh kept
// protects the next against a rollback whichever way it is spelled.
func TestRefreshRollbackAcrossSpellings(t *testing.T) {
	for _, spell := range [][2]string{{"/", ""}, {"", "/"}, {"/", "//"}} {
		r := newTUFRepo(t)
		first := newVirtual(t).root.JSON()
		r.publish(first, time.Now().Add(24*time.Hour))
		r.publish(goodRoot(t).JSON(), time.Now().Add(24*time.Hour))
		dir := t.TempDir()
		refresh := func(u string) (*TrustedRoot, error) {
			return Refresh(t.Context(), RefreshOptions{HTTPClient: &http.Client{}, RepositoryURL: u, Root: r.anchor, Dir: dir, Timeout: 5 * time.Second})
		}
		if _, err := refresh(r.srv.URL + spell[0]); err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		r.files["/timestamp.json"] = r.olds[0]
		r.mu.Unlock()
		tr, err := refresh(r.srv.URL + spell[1])
		switch {
		case err == nil && bytes.Equal(tr.JSON(), first):
			t.Errorf("%q then %q: a rolled-back timestamp was accepted, and the older trusted root with it", spell[0], spell[1])
		case !errors.Is(err, ErrTUF):
			t.Errorf("%q then %q: want ErrTUF, got %v", spell[0], spell[1], err)
		}
	}
}

func TestRefreshRefusals(t *testing.T) {
	target := newVirtual(t).root.JSON()
	for _, c := range []struct {
		name        string
		setup       func(r *tufRepo)
		unavailable bool
	}{
		{"target altered", func(r *tufRepo) {
			r.publish(target, time.Now().Add(time.Hour))
			for p := range r.files {
				if strings.HasPrefix(p, "/targets/") {
					r.files[p] = append(bytes.Clone(target[:len(target)-1]), ' ')
				}
			}
		}, false},
		{"timestamp signed by another key", func(r *tufRepo) {
			r.publish(target, time.Now().Add(time.Hour))
			_, k, _ := ed25519.GenerateKey(rand.Reader)
			r.keys[metadata.TIMESTAMP] = k
			r.publish(target, time.Now().Add(time.Hour))
		}, false},
		{"timestamp expired", func(r *tufRepo) { r.publish(target, time.Now().Add(-time.Hour)) }, false},
		{"target is no trusted root", func(r *tufRepo) { r.publish([]byte(`{"mediaType":"x"}`), time.Now().Add(time.Hour)) }, false},
		{"target lists a log twice", func(r *tufRepo) {
			shadowed, _ := shadowLog(t, "tlogs", func(e map[string]any) { e["baseUrl"] = "https://rekor.attacker.example" }, true)
			r.publish(shadowed, time.Now().Add(time.Hour))
		}, false},
		{"no timestamp (500)", func(r *tufRepo) {
			r.publish(target, time.Now().Add(time.Hour))
			r.status["/timestamp.json"] = 500
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTUFRepo(t)
			c.setup(r)
			tr, err := r.refresh(t.TempDir())
			if err == nil {
				t.Fatalf("refreshed %s", tr.Name())
			}
			t.Log(err)
			if got := errors.Is(err, ErrUnavailable); got != c.unavailable {
				t.Errorf("errors.Is(ErrUnavailable) = %v: %v", got, err)
			}
			if got := errors.Is(err, ErrTUF); got == c.unavailable {
				t.Errorf("errors.Is(ErrTUF) = %v: %v", got, err)
			}
		})
	}
}

func TestRefreshCallerMistakes(t *testing.T) {
	for name, o := range map[string]RefreshOptions{
		"no client": {Dir: t.TempDir()},
		"no dir":    {HTTPClient: &http.Client{}},
		"bad URL":   {HTTPClient: &http.Client{}, Dir: t.TempDir(), RepositoryURL: "tuf-repo-cdn.sigstore.dev"},
	} {
		if _, err := Refresh(t.Context(), o); !errors.Is(err, ErrPolicy) {
			t.Errorf("%s: want ErrPolicy, got %v", name, err)
		}
	}
	// Nothing is written when nothing could be asked.
	dir := t.TempDir()
	if _, err := Refresh(t.Context(), RefreshOptions{Dir: dir}); err == nil {
		t.Fatal("no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("wrote %v", ents)
	}
}

// timestampOf returns the timestamp.json a TUF folder holds.
func timestampOf(t *testing.T, dir string) []byte {
	t.Helper()
	ts, _ := filepath.Glob(filepath.Join(dir, "*", "timestamp.json"))
	if len(ts) != 1 {
		t.Fatalf("%s holds %d timestamp.json, want 1", dir, len(ts))
	}
	b, err := os.ReadFile(ts[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRefreshFinishesAKilledOne: each state a refresh killed on the way
// leaves (a copy half made; Dir moved aside and the verified copy not yet in
// its place; the old Dir not yet removed) is finished or undone by the next
// refresh, and nothing is left beside Dir but its lock. Between the renames,
// the verified copy takes Dir's place: its metadata (version 2) refuses a
// mirror serving version 1 again, which Dir's old metadata would accept.
func TestRefreshFinishesAKilledOne(t *testing.T) {
	r := newTUFRepo(t)
	r.publish(newVirtual(t).root.JSON(), time.Now().Add(24*time.Hour))
	parent := t.TempDir()
	v1 := filepath.Join(parent, "v1")
	if _, err := r.refresh(v1); err != nil {
		t.Fatal(err)
	}
	r.publish(goodRoot(t).JSON(), time.Now().Add(24*time.Hour))
	v2 := filepath.Join(parent, "v2")
	if err := os.CopyFS(v2, os.DirFS(v1)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.refresh(v2); err != nil {
		t.Fatal(err)
	}
	serveV1Again := func() {
		r.mu.Lock()
		r.files["/timestamp.json"] = r.olds[0]
		r.mu.Unlock()
	}
	serveV2 := func() {
		r.mu.Lock()
		r.files["/timestamp.json"] = r.olds[1]
		r.mu.Unlock()
	}
	junk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "x", "half"), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		// lay out what the kill left in dir's parent, from copies of v1 and v2
		lay          func(t *testing.T, dir string)
		wantRollback bool // the recovered Dir holds version 2's metadata
	}{
		{"killed while staging", func(t *testing.T, dir string) {
			os.CopyFS(dir, os.DirFS(v1))
			junk(filepath.Join(filepath.Dir(dir), ".tuf.refresh-1"))
		}, false},
		{"killed between the renames", func(t *testing.T, dir string) {
			os.CopyFS(filepath.Join(filepath.Dir(dir), ".tuf.refresh-2.old"), os.DirFS(v1))
			os.CopyFS(filepath.Join(filepath.Dir(dir), ".tuf.refresh-2"), os.DirFS(v2))
			junk(filepath.Join(filepath.Dir(dir), ".tuf.refresh-3")) // a refresh killed before that one
		}, true},
		{"killed before the old copy went", func(t *testing.T, dir string) {
			os.CopyFS(dir, os.DirFS(v2))
			junk(filepath.Join(filepath.Dir(dir), ".tuf.refresh-4.old"))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tuf")
			tc.lay(t, dir)
			serveV1Again()
			defer serveV2()
			_, err := r.refresh(dir)
			if tc.wantRollback != (err != nil) {
				t.Errorf("refresh with version 1 served again: %v; want a rollback refused: %v", err, tc.wantRollback)
			}
			left, _ := os.ReadDir(filepath.Dir(dir))
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			if fmt.Sprint(names) != "[tuf tuf.lock]" {
				t.Errorf("beside the TUF folder: %v, want it and its lock", names)
			}
			want := timestampOf(t, v1)
			if tc.wantRollback {
				want = timestampOf(t, v2)
			}
			if got := timestampOf(t, dir); !tc.wantRollback && !bytes.Equal(got, want) {
				t.Errorf("the TUF folder holds another timestamp than version 1's")
			} else if tc.wantRollback && !bytes.Equal(got, want) {
				t.Errorf("the TUF folder holds another timestamp than version 2's")
			}
		})
	}
}

// TestRefreshKilledWhileStoring: a refresh killed while Store writes the
// new root (what the folder holds then is copied aside, as the kill leaves
// it) leaves metadata that refuses the old version served again: the root
// stored is version 2's, and a next refresh that took version 1 would store
// version 1's over it (a trusted root rolled back, with a key it had ended).
func TestRefreshKilledWhileStoring(t *testing.T) {
	r := newTUFRepo(t)
	r.publish(newVirtual(t).root.JSON(), time.Now().Add(24*time.Hour))
	parent := filepath.Join(t.TempDir(), "state")
	if _, err := r.refresh(filepath.Join(parent, "tuf")); err != nil {
		t.Fatal(err)
	}
	r.publish(goodRoot(t).JSON(), time.Now().Add(24*time.Hour))
	// A Store that fails (a full disk) leaves the metadata as it was.
	v1 := timestampOf(t, filepath.Join(parent, "tuf"))
	full := errors.New("no space left on device")
	o := RefreshOptions{HTTPClient: &http.Client{}, RepositoryURL: r.srv.URL, Root: r.anchor, Dir: filepath.Join(parent, "tuf"), Timeout: 5 * time.Second,
		Store: func(*TrustedRoot) error { return full }}
	if _, err := Refresh(t.Context(), o); !errors.Is(err, full) {
		t.Fatalf("Store failed: %v", err)
	}
	if !bytes.Equal(timestampOf(t, filepath.Join(parent, "tuf")), v1) {
		t.Errorf("a Store that failed left version 2's metadata")
	}
	if left, _ := os.ReadDir(parent); len(left) != 2 {
		t.Errorf("beside the TUF folder after a Store that failed: %v, want its lock only", left)
	}
	killed := filepath.Join(t.TempDir(), "state")
	o.Store = func(*TrustedRoot) error { return os.CopyFS(killed, os.DirFS(parent)) }
	if _, err := Refresh(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.files["/timestamp.json"] = r.olds[0]
	r.mu.Unlock()
	o.Dir = filepath.Join(killed, "tuf")
	o.Store = func(tr *TrustedRoot) error {
		t.Errorf("version 1 served again is stored over version 2's root: %s", tr.Name())
		return nil
	}
	if _, err := Refresh(t.Context(), o); !errors.Is(err, ErrTUF) {
		t.Errorf("refresh with version 1 served again after a kill while storing: %v, want a rollback refused", err)
	}
}

// TestRefreshesOneAtATime: a refresh waits while another holds Dir's lock
// (here the test), and gives up when its context ends, naming the lock.
// Refreshes started at once all succeed, and the root each stores is the one
// whose metadata stays in Dir.
func TestRefreshesOneAtATime(t *testing.T) {
	r := newTUFRepo(t)
	r.publish(newVirtual(t).root.JSON(), time.Now().Add(24*time.Hour))
	dir := filepath.Join(t.TempDir(), "tuf")
	held, err := lockfile.Acquire(t.Context(), dir+".lock", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = Refresh(ctx, RefreshOptions{HTTPClient: &http.Client{}, RepositoryURL: r.srv.URL, Root: r.anchor, Dir: dir, Timeout: 5 * time.Second})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), dir+".lock") {
		t.Errorf("refresh while the lock is held: %v, want the deadline and the lock named", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refresh that never got the lock made %s: %v", dir, err)
	}
	held.Unlock()

	// Four at once, a new version published after the first two started:
	// all succeed, and Dir ends with the new version's metadata (without the
	// lock, a refresh that staged and fetched version 1 could swap last and
	// put Dir back to it, or find Dir moved aside by another and fail).
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = Refresh(t.Context(), RefreshOptions{HTTPClient: &http.Client{}, RepositoryURL: r.srv.URL, Root: r.anchor, Dir: dir, Timeout: 5 * time.Second})
		})
		if i == 1 {
			r.publish(goodRoot(t).JSON(), time.Now().Add(24*time.Hour))
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	newest := r.olds[len(r.olds)-1]
	r.mu.Unlock()
	if !bytes.Equal(timestampOf(t, dir), newest) {
		t.Error("the TUF folder does not hold the newest version's metadata")
	}
	if left, _ := os.ReadDir(filepath.Dir(dir)); len(left) != 2 {
		t.Errorf("beside the TUF folder: %v, want it and its lock", left)
	}
}

// rotate publishes root version 2, which replaces the keys of the
// timestamp, snapshot and targets roles (version 1's are revoked, as after
// their compromise), and returns version 1's keys.
func (r *tufRepo) rotate() map[string]ed25519.PrivateKey {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	old := map[string]ed25519.PrivateKey{}
	for _, role := range []string{metadata.TARGETS, metadata.SNAPSHOT, metadata.TIMESTAMP} {
		old[role] = r.keys[role]
		for _, id := range r.root.Signed.Roles[role].KeyIDs {
			if err := r.root.Signed.RevokeKey(id, role); err != nil {
				r.t.Fatal(err)
			}
		}
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			r.t.Fatal(err)
		}
		r.keys[role] = k
		key, err := metadata.KeyFromPublicKey(k.Public())
		if err != nil {
			r.t.Fatal(err)
		}
		if err := r.root.Signed.AddKey(key, role); err != nil {
			r.t.Fatal(err)
		}
	}
	r.root.Signed.Version++
	r.root.ClearSignatures()
	r.sign(r.root, metadata.ROOT)
	r.files[fmt.Sprintf("/%d.root.json", r.root.Signed.Version)] = r.bytes(r.root)
	return old
}

// TestRefreshRootRollback: a root version that revoked keys binds every
// refresh after the one that took it. Each refresh walks the root versions
// up from the anchor, version 1, as far as the repository serves them: a
// mirror that answers 404 for version 2 (as if the repository had never
// gone past version 1), or serves a version 2 of its own making, and serves
// metadata signed with the revoked keys, had it accepted. The anchor stays
// what the walk starts from: another repository's anchor is refused, not
// passed over for the root kept.
func TestRefreshRootRollback(t *testing.T) {
	for _, c := range []struct {
		name   string
		attack func(r *tufRepo, revoked map[string]ed25519.PrivateKey)
		anchor func(r *tufRepo) []byte
		says   string
	}{
		{"version 2 gone", func(r *tufRepo, revoked map[string]ed25519.PrivateKey) {
			delete(r.files, "/2.root.json")
			r.keys = map[string]ed25519.PrivateKey{metadata.ROOT: r.keys[metadata.ROOT]}
			maps.Copy(r.keys, revoked)
		}, nil, "serves root versions up to 1 only, and an earlier refresh verified and kept version 2"},
		{"another version 2", func(r *tufRepo, revoked map[string]ed25519.PrivateKey) {
			r.keys = map[string]ed25519.PrivateKey{metadata.ROOT: r.keys[metadata.ROOT]}
			maps.Copy(r.keys, revoked)
			forked, err := metadata.Root(time.Now().Add(24 * time.Hour)).FromBytes(r.anchor)
			if err != nil {
				t.Fatal(err)
			}
			forked.Signed.Version = 2
			forked.ClearSignatures()
			r.sign(forked, metadata.ROOT)
			r.files["/2.root.json"] = r.bytes(forked)
		}, nil, "root version 2 is not the one an earlier refresh verified and kept"},
		{"another repository's anchor", func(*tufRepo, map[string]ed25519.PrivateKey) {}, func(*tufRepo) []byte { return newTUFRepo(t).anchor }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTUFRepo(t)
			r.publish(newVirtual(t).root.JSON(), time.Now().Add(24*time.Hour))
			dir := t.TempDir()
			if _, err := r.refresh(dir); err != nil {
				t.Fatal(err)
			}
			revoked := r.rotate()
			good := goodRoot(t).JSON()
			r.publish(good, time.Now().Add(24*time.Hour))
			if tr, err := r.refresh(dir); err != nil || !bytes.Equal(tr.JSON(), good) {
				t.Fatalf("refresh after the rotation: %v", err)
			}
			before := timestampOf(t, dir)
			r.mu.Lock()
			c.attack(r, revoked)
			r.mu.Unlock()
			r.publish(newVirtual(t).root.JSON(), time.Now().Add(24*time.Hour))
			anchor := r.anchor
			if c.anchor != nil {
				anchor = c.anchor(r)
			}
			tr, err := Refresh(t.Context(), RefreshOptions{HTTPClient: &http.Client{}, RepositoryURL: r.srv.URL, Root: anchor, Dir: dir, Timeout: 5 * time.Second})
			if err == nil {
				t.Fatalf("refreshed %s", tr.Name())
			}
			t.Log(err)
			if !errors.Is(err, ErrTUF) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("want ErrTUF saying %q, got %v", c.says, err)
			}
			if !bytes.Equal(timestampOf(t, dir), before) {
				t.Error("a refused refresh changed the TUF metadata kept")
			}
		})
	}
}
