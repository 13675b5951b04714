// Package digest holds the content digests updeb pins and checks (sha256, sha512),
// and a hasher that computes several of them in the one pass that reads the bytes.
//
// The contract: only strong algorithms exist here (md5 is never a trust
// anchor); a Digest's hex is lower case and of the algorithm's length, and
// every parse error wraps ErrMalformed. Hasher.Check compares the pinned
// algorithms the hasher computed: all must match, at least one must be
// compared (ErrNoPin otherwise), and a mismatch is a *MismatchError that
// carries both values.
package digest

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// Algorithm names a digest algorithm. Only strong ones exist here on purpose:
// md5 is computed for dpkg's md5sums only, never as a trust anchor.
type Algorithm string

const (
	SHA256 Algorithm = "sha256"
	SHA512 Algorithm = "sha512"
)

// Size returns the digest length in bytes, or 0 for an unknown algorithm.
func (a Algorithm) Size() int {
	switch a {
	case SHA256:
		return sha256.Size
	case SHA512:
		return sha512.Size
	}
	return 0
}

func (a Algorithm) new() hash.Hash {
	switch a {
	case SHA256:
		return sha256.New()
	case SHA512:
		return sha512.New()
	}
	panic("digest: unknown algorithm " + string(a))
}

// ErrMalformed is wrapped by every parse error.
var ErrMalformed = errors.New("malformed digest")

func unknownAlgorithm(a Algorithm) error {
	return fmt.Errorf("%w: unknown algorithm %q (want sha256 or sha512)", ErrMalformed, a)
}

// Digest is one algorithm and its value as lowercase hex.
type Digest struct {
	Algorithm Algorithm
	Hex       string
}

// String returns "algorithm:hex".
func (d Digest) String() string { return string(d.Algorithm) + ":" + d.Hex }

// New checks hex for algorithm a and returns the digest (hex is lowercased).
func New(a Algorithm, hexValue string) (Digest, error) {
	if a.Size() == 0 {
		return Digest{}, unknownAlgorithm(a)
	}
	h := strings.ToLower(hexValue)
	if len(h) != 2*a.Size() {
		return Digest{}, fmt.Errorf("%w: %s digest must be %d hex characters, found %d in %q", ErrMalformed, a, 2*a.Size(), len(h), hexValue)
	}
	if _, err := hex.DecodeString(h); err != nil {
		return Digest{}, fmt.Errorf("%w: %s digest %q is not hexadecimal", ErrMalformed, a, hexValue)
	}
	return Digest{Algorithm: a, Hex: h}, nil
}

// Parse reads "sha256:hex" or "sha512:hex".
func Parse(s string) (Digest, error) {
	a, h, ok := strings.Cut(s, ":")
	if !ok {
		return Digest{}, fmt.Errorf("%w: %q has no \"algorithm:\" prefix (want sha256:HEX or sha512:HEX)", ErrMalformed, s)
	}
	return New(Algorithm(a), h)
}

// Set is the digests pinned for one artifact: at most one per algorithm.
type Set map[Algorithm]string

// Add puts d in the set; a different value for the same algorithm is an error.
func (s Set) Add(d Digest) error {
	if old, ok := s[d.Algorithm]; ok && old != d.Hex {
		return fmt.Errorf("%w: two different %s values pinned: %s and %s", ErrMalformed, d.Algorithm, old, d.Hex)
	}
	s[d.Algorithm] = d.Hex
	return nil
}

// Needed returns the algorithms to compute for bytes addressed by sha256 and
// checked against pinned: sha256 always, every pinned algorithm and every
// algorithm in also that this package knows (a pin of another algorithm
// cannot be checked: Check does not compare it), each once, in a stable order. Computing only these (not
// every algorithm known) keeps a download of a sha256-pinned file from paying
// for sha512, the slowest hash, while every pin is still checked.
func Needed(pinned Set, also ...Algorithm) []Algorithm {
	s := Set{SHA256: ""}
	for a := range pinned {
		if a.Size() != 0 {
			s[a] = ""
		}
	}
	for _, a := range also {
		if a.Size() != 0 {
			s[a] = ""
		}
	}
	return s.Algorithms()
}

// Algorithms returns the set's algorithms in a stable order.
func (s Set) Algorithms() []Algorithm {
	out := make([]Algorithm, 0, len(s))
	for a := range s {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// MismatchError says which digest did not match, with both values.
type MismatchError struct {
	Subject   string // what was hashed: a URL, a file name
	Algorithm Algorithm
	Want, Got string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s digest mismatch for %s: pinned %s, got %s", e.Algorithm, e.Subject, e.Want, e.Got)
}

// ErrNoPin is returned when an artifact has no digest to check against.
var ErrNoPin = errors.New("no sha256 or sha512 digest pinned")

// Hasher is an io.Writer that computes every algorithm in the one pass.
type Hasher struct {
	algs   []Algorithm
	hashes []hash.Hash
	n      int64
}

// NewHasher returns a hasher for the given algorithms (sha256 and sha512 when
// none given). An algorithm this package does not know (Size 0, such as md5)
// is not computed: Sum leaves it out and Check does not compare it.
func NewHasher(algs ...Algorithm) *Hasher {
	if len(algs) == 0 {
		algs = []Algorithm{SHA256, SHA512}
	}
	h := &Hasher{}
	for _, a := range algs {
		if a.Size() == 0 {
			continue
		}
		h.algs = append(h.algs, a)
		h.hashes = append(h.hashes, a.new())
	}
	return h
}

// parallelMin is the smallest write whose hashes are computed in parallel:
// below it, starting goroutines costs more than it saves.
const parallelMin = 64 << 10

// Write feeds every hash; it never fails and does not retain p. A write of
// parallelMin bytes or more with several algorithms computes them at once,
// one goroutine each, and returns when all are done: such a write hashes at
// the speed of the slowest algorithm, not of the sum. Writers that receive
// small pieces (a socket's reads) gather them into larger writes to get
// this (internal/fetch gathers 1 MiB).
func (h *Hasher) Write(p []byte) (int, error) {
	if len(h.hashes) < 2 || len(p) < parallelMin {
		for _, x := range h.hashes {
			x.Write(p)
		}
	} else {
		var wg sync.WaitGroup
		for _, x := range h.hashes[1:] {
			wg.Go(func() { x.Write(p) })
		}
		h.hashes[0].Write(p)
		wg.Wait()
	}
	h.n += int64(len(p))
	return len(p), nil
}

// Reset forgets what was written; the hasher keeps its algorithms.
func (h *Hasher) Reset() {
	for _, x := range h.hashes {
		x.Reset()
	}
	h.n = 0
}

// Size returns how many bytes were written.
func (h *Hasher) Size() int64 { return h.n }

// Sum returns the digests of what was written so far.
func (h *Hasher) Sum() Set {
	s := Set{}
	for i, a := range h.algs {
		s[a] = hex.EncodeToString(h.hashes[i].Sum(nil))
	}
	return s
}

// Check compares what was written against the pinned set: every pinned
// algorithm the hasher computed must match, and at least one must have been
// compared (ErrNoPin otherwise).
func (h *Hasher) Check(subject string, pinned Set) error {
	got := h.Sum()
	compared := 0
	for _, a := range pinned.Algorithms() {
		g, ok := got[a]
		if !ok {
			continue
		}
		compared++
		if g != pinned[a] {
			return &MismatchError{Subject: subject, Algorithm: a, Want: pinned[a], Got: g}
		}
	}
	if compared == 0 {
		return fmt.Errorf("%s: %w", subject, ErrNoPin)
	}
	return nil
}

// File returns the digests of the file at path (sha256 and sha512 when no
// algorithm is given), read in one pass. An algorithm this package does not
// know is an error wrapping ErrMalformed.
func File(path string, algs ...Algorithm) (Set, error) {
	for _, a := range algs {
		if a.Size() == 0 {
			return nil, unknownAlgorithm(a)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := NewHasher(algs...)
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(), nil
}
