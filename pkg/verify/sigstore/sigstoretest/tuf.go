package sigstoretest

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// TUF is an http.Handler serving a TUF repository in the layout of
// Sigstore's (consistent snapshots: N.root.json, timestamp.json,
// N.snapshot.json, N.targets.json, targets/SHA256.trusted_root.json), made
// with go-tuf's metadata API and one Ed25519 key per role.
type TUF struct {
	mu      sync.Mutex
	keys    map[string]ed25519.PrivateKey
	files   map[string][]byte
	anchor  []byte
	version int64
}

// NewTUF makes a repository with its version 1 root and no target yet.
func NewTUF() (*TUF, error) {
	r := &TUF{keys: map[string]ed25519.PrivateKey{}, files: map[string][]byte{}}
	root := metadata.Root(time.Now().Add(365 * 24 * time.Hour))
	for _, role := range []string{metadata.ROOT, metadata.TARGETS, metadata.SNAPSHOT, metadata.TIMESTAMP} {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		r.keys[role] = k
		key, err := metadata.KeyFromPublicKey(k.Public())
		if err != nil {
			return nil, err
		}
		if err := root.Signed.AddKey(key, role); err != nil {
			return nil, err
		}
	}
	b, err := r.signed(root, metadata.ROOT)
	if err != nil {
		return nil, err
	}
	r.anchor = b
	r.files["/1.root.json"] = b
	return r, nil
}

// Root is the repository's version 1 root.json: the trust anchor a client
// starts from.
func (r *TUF) Root() []byte { return append([]byte(nil), r.anchor...) }

// signed signs m with the role's key and returns its bytes.
func (r *TUF) signed(m interface {
	Sign(signature.Signer) (*metadata.Signature, error)
	ToBytes(bool) ([]byte, error)
}, role string) ([]byte, error) {
	s, err := signature.LoadSigner(r.keys[role], crypto.Hash(0))
	if err != nil {
		return nil, err
	}
	if _, err := m.Sign(s); err != nil {
		return nil, err
	}
	return m.ToBytes(false)
}

// Publish makes a new version of the repository whose trusted_root.json
// target is target; the timestamp expires at expires.
func (r *TUF) Publish(target []byte, expires time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version++
	week := time.Now().Add(7 * 24 * time.Hour)
	targets := metadata.Targets(week)
	targets.Signed.Version = r.version
	tf, err := metadata.TargetFile().FromBytes("trusted_root.json", target, "sha256")
	if err != nil {
		return err
	}
	targets.Signed.Targets["trusted_root.json"] = tf
	snapshot := metadata.Snapshot(week)
	snapshot.Signed.Version = r.version
	snapshot.Signed.Meta["targets.json"] = metadata.MetaFile(r.version)
	ts := metadata.Timestamp(expires)
	ts.Signed.Version = r.version
	ts.Signed.Meta["snapshot.json"] = metadata.MetaFile(r.version)
	files := map[string][]byte{}
	for name, m := range map[string]struct {
		role string
		m    interface {
			Sign(signature.Signer) (*metadata.Signature, error)
			ToBytes(bool) ([]byte, error)
		}
	}{
		fmt.Sprintf("/%d.targets.json", r.version):  {metadata.TARGETS, targets},
		fmt.Sprintf("/%d.snapshot.json", r.version): {metadata.SNAPSHOT, snapshot},
		"/timestamp.json":                           {metadata.TIMESTAMP, ts},
	} {
		b, err := r.signed(m.m, m.role)
		if err != nil {
			return err
		}
		files[name] = b
	}
	for name, b := range files {
		r.files[name] = b
	}
	r.files[fmt.Sprintf("/targets/%s.trusted_root.json", tf.Hashes["sha256"])] = append([]byte(nil), target...)
	return nil
}

func (r *TUF) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	b, ok := r.files[req.URL.Path]
	r.mu.Unlock()
	if !ok {
		http.NotFound(w, req)
		return
	}
	w.Write(b)
}
