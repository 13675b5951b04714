package sigstore

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	prototrustroot "github.com/sigstore/protobuf-specs/gen/pb-go/trustroot/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"google.golang.org/protobuf/proto"
)

// maxTrustedRootSize caps a trusted_root.json: the public-good one is 7 KB.
const maxTrustedRootSize = 1 << 20

// ErrTrustedRoot is wrapped by every error loading a trusted root.
var ErrTrustedRoot = errors.New("sigstore: bad trusted root")

//go:embed data/trusted_root.json
var publicGoodJSON []byte

//go:embed data/trusted_root.json.source
var publicGoodSource string

// TrustedRoot is a Sigstore trusted root (trusted_root.json): the keys of the
// transparency logs, the Fulcio certificate authorities, CT logs and
// timestamping authorities that verification trusts, each with its validity
// period. It is read-only and safe for concurrent use.
type TrustedRoot struct {
	name string
	raw  []byte
	tr   *root.TrustedRoot
}

// ParseTrustedRoot parses a trusted_root.json (media type
// application/vnd.dev.sigstore.trustedroot+json;version=0.1); name labels it in
// messages. A root that lists neither a transparency log nor a timestamp
// authority is refused: it could vouch for no signing time. (A root of a
// timestamp authority alone verifies key-signed bundles; one without
// certificate authorities verifies no keyless signature, which is refused
// when it is met.)
func ParseTrustedRoot(name string, b []byte) (*TrustedRoot, error) {
	if len(b) > maxTrustedRootSize {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", ErrTrustedRoot, name, maxTrustedRootSize)
	}
	tr, err := root.NewTrustedRootFromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: not a Sigstore trusted_root.json: %v", ErrTrustedRoot, name, err)
	}
	if err := uniqueLogIDs(name, b); err != nil {
		return nil, err
	}
	if len(tr.RekorLogs()) == 0 && len(tr.TimestampingAuthorities()) == 0 {
		return nil, fmt.Errorf("%w: %s: lists neither a transparency log (tlogs) nor a timestamp authority (timestampAuthorities): it vouches for no signing time", ErrTrustedRoot, name)
	}
	return &TrustedRoot{name: name, raw: bytes.Clone(b), tr: tr}, nil
}

// uniqueLogIDs refuses a root (b, which sigstore-go parsed) listing one log
// ID twice, among its transparency logs or its CT logs, in entries not
// alike. sigstore-go keys logs by ID and keeps the last entry, so which key,
// validity window or URL (a Rekor v2 checkpoint's origin) verifies would
// depend on the order of the file, and an entry appended to a root would
// shadow the log it names. The same entry twice is one log. (cosign reads
// the root through sigstore-go, alike.)
func uniqueLogIDs(name string, b []byte) error {
	pb, err := root.NewTrustedRootProtobuf(b)
	if err != nil {
		return fmt.Errorf("%w: %s: not a Sigstore trusted_root.json: %v", ErrTrustedRoot, name, err)
	}
	for _, list := range []struct {
		key  string
		logs []*prototrustroot.TransparencyLogInstance
	}{{"tlogs", pb.GetTlogs()}, {"ctlogs", pb.GetCtlogs()}} {
		seen := map[string]*prototrustroot.TransparencyLogInstance{}
		for _, l := range list.logs {
			id := base64.StdEncoding.EncodeToString(l.GetLogId().GetKeyId())
			first, ok := seen[id]
			if !ok {
				seen[id] = l
				continue
			}
			if proto.Equal(first, l) {
				continue
			}
			return fmt.Errorf("%w: %s: %s lists log ID (logId.keyId) %s twice, at %s and at %s, with %s: which one verifies would depend on their order; keep the entry the log's operator publishes and remove the other",
				ErrTrustedRoot, name, list.key, id, first.GetBaseUrl(), l.GetBaseUrl(), logDifference(first, l))
		}
	}
	return nil
}

// logDifference says how two entries of a root's logs differ.
func logDifference(a, b *prototrustroot.TransparencyLogInstance) string {
	ka, kb := a.GetPublicKey(), b.GetPublicKey()
	switch {
	case !bytes.Equal(ka.GetRawBytes(), kb.GetRawBytes()) || ka.GetKeyDetails() != kb.GetKeyDetails():
		return "different public keys"
	case !proto.Equal(ka.GetValidFor(), kb.GetValidFor()):
		return "different validity periods (publicKey.validFor)"
	case a.GetBaseUrl() != b.GetBaseUrl():
		return "the same key at different URLs (baseUrl)"
	}
	return "different entries (hashAlgorithm, checkpointKeyId)"
}

// LoadTrustedRoot reads and parses a trusted_root.json file.
func LoadTrustedRoot(path string) (*TrustedRoot, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block; refused below
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTrustedRoot, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s: not a regular file", ErrTrustedRoot, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTrustedRootSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrTrustedRoot, path, err)
	}
	return ParseTrustedRoot(path, b)
}

var publicGood = sync.OnceValues(func() (*TrustedRoot, error) {
	return ParseTrustedRoot(publicGoodName(), publicGoodJSON)
})

// PublicGood returns the bundled snapshot of Sigstore's public-good trusted
// root (data/trusted_root.json, a byte-for-byte copy of the TUF target; its
// source, snapshot and sha256 are in data/trusted_root.json.source). It is what
// verification trusts unless the caller loads another root or refreshes it
// with Refresh.
func PublicGood() (*TrustedRoot, error) { return publicGood() }

// PublicGoodRecord is the bundled root's provenance record
// (data/trusted_root.json.source): source repository, snapshot commit and date,
// length and sha256.
func PublicGoodRecord() string { return publicGoodSource }

// PublicGoodDate is the day of the bundled root's snapshot (zero when the
// record does not say).
func PublicGoodDate() time.Time {
	s := recordField(publicGoodSource, "snapshot")
	if i, j := strings.LastIndex(s, "("), strings.LastIndex(s, ")"); i >= 0 && j > i {
		if t, err := time.Parse(time.DateOnly, s[i+1:j]); err == nil {
			return t
		}
	}
	return time.Time{}
}

func publicGoodName() string {
	return fmt.Sprintf("bundled Sigstore public-good trusted root (snapshot %s, sha256 %s)",
		recordField(publicGoodSource, "snapshot"), recordField(publicGoodSource, "sha256"))
}

// recordField returns the value of a "key: value" line of a record.
func recordField(record, key string) string {
	for _, l := range strings.Split(record, "\n") {
		if v, ok := strings.CutPrefix(l, key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Name says where the root came from: a file path, or the bundled snapshot.
func (t *TrustedRoot) Name() string { return t.name }

// JSON returns the root's exact bytes, e.g. to store a refreshed root.
func (t *TrustedRoot) JSON() []byte { return bytes.Clone(t.raw) }

// SHA256 is the hex sha256 of JSON(), to name the root in a provenance record.
func (t *TrustedRoot) SHA256() string {
	s := sha256.Sum256(t.raw)
	return hex.EncodeToString(s[:])
}

// Authority is one trusted service of a root, for people (updeb keys list).
type Authority struct {
	Kind  string    // "tlog", "ca", "ctlog" or "tsa"
	URL   string    // base URL or URI
	ID    string    // log ID (hex sha256 of the log key) for tlogs and CT logs
	Start time.Time // validity start
	End   time.Time // validity end; zero when open
}

// Authorities lists the root's logs and authorities, sorted by kind, then URL,
// then start.
func (t *TrustedRoot) Authorities() []Authority {
	var out []Authority
	logs := func(kind string, m map[string]*root.TransparencyLog) {
		for id, l := range m {
			out = append(out, Authority{Kind: kind, URL: l.BaseURL, ID: id, Start: l.ValidityPeriodStart, End: l.ValidityPeriodEnd})
		}
	}
	logs("tlog", t.tr.RekorLogs())
	logs("ctlog", t.tr.CTLogs())
	for _, ca := range t.tr.FulcioCertificateAuthorities() {
		if f, ok := ca.(*root.FulcioCertificateAuthority); ok {
			out = append(out, Authority{Kind: "ca", URL: f.URI, Start: f.ValidityPeriodStart, End: f.ValidityPeriodEnd})
		}
	}
	for _, ta := range t.tr.TimestampingAuthorities() {
		if s, ok := ta.(*root.SigstoreTimestampingAuthority); ok {
			out = append(out, Authority{Kind: "tsa", URL: s.URI, Start: s.ValidityPeriodStart, End: s.ValidityPeriodEnd})
		}
	}
	slices.SortFunc(out, func(a, b Authority) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		if c := strings.Compare(a.URL, b.URL); c != 0 {
			return c
		}
		return a.Start.Compare(b.Start)
	})
	return out
}

// logURL returns the base URL of the transparency log with this key ID.
func (t *TrustedRoot) logURL(keyID []byte) string {
	if l, ok := t.tr.RekorLogs()[hex.EncodeToString(keyID)]; ok {
		return l.BaseURL
	}
	return ""
}
