package gate

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// anchors is what vouches for one source besides its pinned digest, read
// from the recipe and from the files it names. Templates are rendered for
// each architecture with the version left out (recipe.RenderPerArch), so
// that a version bump changes nothing and a new name or upstream
// architecture name that changes what a template stands for is a change.
type anchors struct {
	form        string // one of the signature forms (formNames)
	none        string // the reason, for `signature: none`
	keyring     *keyringFacts
	signers     []string          // allow-list of the detached signature; empty: any key of the keyring
	identity    string            // Sigstore: the exact identity as written, or "matching RE"
	identityIs  map[string]string // what it stands for, per architecture (rendered): what is compared
	issuer      string
	sourceRepo  string            // Sigstore: the repository whose CI run must have signed
	predicates  string            // Sigstore: the predicate types attestations count by, as listed; "" for SLSA provenance
	keyFile     string            // Sigstore: the pinned public key, as the recipe names it
	key         string            // its fingerprint (SHA256:base64), or why it is unreadable
	checksums   string            // the checksum file URL template; "" when there is no cross-check
	checksumsIs map[string]string // what it stands for, per architecture (rendered): what is compared
	sumsKeyring *keyringFacts
	sumsSigners []string
	url         string            // where the source is downloaded from: its URL template
	urlIs       map[string]string // what it stands for, per architecture (rendered): what is compared
	pinned      map[string]digest.Set
}

// The signature forms, as review items name them, and their words.
const (
	formOpenPGP  = "openpgp"
	formCosign   = "sigstore-cosign"
	formBundle   = "sigstore-bundle"
	formGitHub   = "github-attestations"
	formNone     = "none"
	dateInReview = "2006-01-02"
)

var formNames = map[string]string{
	formOpenPGP: "detached OpenPGP signature",
	formCosign:  "cosign signature and certificate (Sigstore)",
	formBundle:  "Sigstore bundle",
	formGitHub:  "GitHub attestations (Sigstore)",
	formNone:    "no signature",
}

// keyringFacts is an OpenPGP keyring as a reviewer compares it: its file,
// its bytes, and per primary key the facts that decide what it may sign.
type keyringFacts struct {
	path  string // as the recipe names it (relative to the project root)
	data  []byte
	fprs  []string            // primary fingerprints, sorted
	facts map[string][]string // fingerprint -> facts (user IDs, subkeys, expiry, revocation, capabilities)
	err   error               // the file could not be read or parsed
}

// maxKeyringRead bounds a keyring read for review (pkg/verify/openpgp
// refuses keyrings over 16 MiB anyway).
const maxKeyringRead = 16<<20 + 1

// readKeyring reads the keyring at root/rel for review.
func readKeyring(root, rel string) *keyringFacts {
	k := &keyringFacts{path: rel, facts: map[string][]string{}}
	path := filepath.Join(root, filepath.FromSlash(rel))
	k.data, k.err = confined.ReadFile(path, maxKeyringRead)
	if k.err != nil {
		return k
	}
	kr, err := openpgp.ParseKeyring(bytes.NewReader(k.data), rel)
	if err != nil {
		k.err = err
		return k
	}
	// The facts compared do not depend on the time given: validity warnings
	// are not among them.
	for _, p := range kr.List(time.Unix(0, 0)) {
		k.fprs = append(k.fprs, p.Fingerprint)
		k.facts[p.Fingerprint] = keyFacts(p)
	}
	slices.Sort(k.fprs)
	k.fprs = slices.Compact(k.fprs)
	return k
}

// keyFacts lists what about one certificate decides what it may sign:
// user IDs, capabilities, expiry, revocation, and the same per subkey.
func keyFacts(p openpgp.PrimaryKeyInfo) []string {
	var out []string
	for _, u := range p.UserIDs {
		out = append(out, "user ID "+u)
	}
	out = append(out, lifeFacts("", p.KeyInfo)...)
	for _, s := range p.Subkeys {
		out = append(out, "subkey "+s.Fingerprint)
		out = append(out, lifeFacts("subkey "+s.Fingerprint+" ", s)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func lifeFacts(prefix string, k openpgp.KeyInfo) []string {
	out := []string{prefix + "can " + joinOr(k.Capabilities, "do nothing")}
	if k.Expires != nil {
		out = append(out, prefix+"expires "+k.Expires.UTC().Format(dateInReview))
	} else {
		out = append(out, prefix+"does not expire")
	}
	if k.Revoked != nil {
		out = append(out, prefix+"revoked "+k.Revoked.UTC().Format(dateInReview))
	}
	return out
}

// sourceAnchors reads the anchors of every source of r, by source name.
// A nil r (a recipe the base does not have) has none.
func sourceAnchors(r *recipe.Recipe) map[string]*anchors {
	m := map[string]*anchors{}
	if r == nil {
		return m
	}
	for _, s := range r.Sources {
		a := &anchors{}
		sig := s.Signature
		switch {
		case sig.URL != "":
			a.form = formOpenPGP
			a.keyring = readKeyring(r.Root, sig.Keyring)
			a.signers = normalizedFprs(sig.Signers)
		case sig.Sigstore != nil:
			ss := sig.Sigstore
			switch {
			case ss.SigURL != "":
				a.form = formCosign
			case ss.BundleURL != "":
				a.form = formBundle
			default:
				a.form = formGitHub
			}
			a.predicates = strings.Join(ss.PredicateTypes, ", ")
			switch {
			case ss.PublicKey != "":
				a.keyFile = ss.PublicKey
				fpr, err := trust.KeyFingerprint(&recipe.ResolvedSigstore{PublicKeyPath: filepath.Join(r.FilesDir, filepath.FromSlash(ss.PublicKey))})
				if err != nil {
					fpr = "unreadable: " + err.Error()
				}
				a.key = fpr
			case ss.IdentityRegexp != "":
				a.identity, a.issuer, a.sourceRepo = "matching "+ss.IdentityRegexp, ss.Issuer, ss.SourceRepository
				a.identityIs = map[string]string{}
				for _, arch := range r.ArchNames() {
					a.identityIs[arch] = a.identity
				}
			default:
				a.identity, a.issuer, a.sourceRepo = ss.Identity, ss.Issuer, ss.SourceRepository
				a.identityIs = r.RenderPerArch(ss.Identity)
			}
		default:
			a.form, a.none = formNone, sig.None
		}
		if c := s.Checksums; c != nil {
			a.checksums, a.checksumsIs = c.URL, r.RenderPerArch(c.URL)
			if c.Clearsigned != nil {
				a.sumsKeyring = readKeyring(r.Root, c.Clearsigned.Keyring)
				a.sumsSigners = normalizedFprs(c.Clearsigned.Signers)
			}
		}
		a.url, a.urlIs, a.pinned = s.URL, r.RenderPerArch(s.URL), map[string]digest.Set{}
		for arch, set := range s.Digests {
			a.pinned[arch] = set
		}
		m[s.Name] = a
	}
	return m
}

// slsaDefault names the predicate types an attestation counts by when a
// recipe lists none.
var slsaDefault = "SLSA provenance (" + strings.Join(sigstore.DefaultPredicateTypes(), ", ") + ")"

// shown is how a review line names a template's old and new value: as
// written, unless only what it stands for changed (the same text, another
// name or upstream architecture name): then as rendered.
func shown(n, o, nIs, oIs string) (string, string) {
	if n == o && nIs != oIs {
		return nIs, oIs
	}
	return n, o
}

// onShared is what templates rendered per architecture (n now, o at the
// base) stand for on the architectures both have, when they share one: an
// architecture added or removed renders the same template for another
// architecture, and what it stands for on the others is what is compared.
func onShared(n, o map[string]string) (string, string) {
	sn, so := map[string]string{}, map[string]string{}
	for a, v := range n {
		if w, ok := o[a]; ok {
			sn[a], so[a] = v, w
		}
	}
	if len(sn) == 0 {
		return perArch(n), perArch(o)
	}
	return perArch(sn), perArch(so)
}

// perArch is one value for a template rendered per architecture: the
// rendering when every architecture has the same, else each with its
// architecture ("amd64: X, arm64: Y").
func perArch(m map[string]string) string {
	arches := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(arches))
	for i, a := range arches {
		parts[i] = a + ": " + m[a]
	}
	if len(slices.Compact(slices.Sorted(maps.Values(m)))) > 1 {
		return strings.Join(parts, ", ")
	}
	if len(arches) == 0 {
		return ""
	}
	return m[arches[0]]
}

func normalizedFprs(list []string) []string {
	out := make([]string, 0, len(list))
	for _, f := range list {
		out = append(out, strings.ToUpper(strings.ReplaceAll(f, " ", "")))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// diffTrust adds to rv every change of what vouches for the sources of r
// since old (nil: r is new at rev): a new recipe and every anchor it
// brings, signature forms, keyrings (keys added, removed, changed),
// signer lists, Sigstore identities, source repositories, issuers, keys and predicate types, cross-checks and the
// keyrings of clearsigned checksum files, and pinned digest algorithms.
func diffTrust(r, old *recipe.Recipe, rev string, rv *reviews) {
	na, oa := sourceAnchors(r), sourceAnchors(old)
	var names []string
	for _, s := range r.Sources {
		names = append(names, s.Name)
	}
	if old == nil {
		rv.add(ReviewItem{Kind: KindNewRecipe, New: names},
			fmt.Sprintf("new recipe %s (not at %s): review the trust of each of its sources (%s)", r.Name, rev, strings.Join(names, ", ")))
	}
	if old != nil {
		diffWatch(r.Watch, old.Watch, rv)
	}
	// A source removed takes its anchors with it: the package diff shows
	// it, and nothing is trusted that was not before. A source renamed in
	// place (the old name gone, the new one new, at the same place in the
	// list) is compared with what it was.
	for i, name := range names {
		o := oa[name]
		if o == nil && old != nil && i < len(old.Sources) && na[old.Sources[i].Name] == nil {
			o = oa[old.Sources[i].Name]
		}
		diffSource(name, na[name], o, rv)
	}
}

// diffWatch reviews what decides the releases a recipe's watch (n now, o
// at the base) finds: where it lists them, which tags are the recipe's (its
// tag prefix: in a repository of several components, another prefix is
// another component's releases) and whether pre-releases count. Its track
// is not: bump --new-minor moves it.
func diffWatch(n, o *recipe.Watch, rv *reviews) {
	const takes = "updeb outdated, bump and plan --apply take the next versions and release days from"
	if nSrc, oSrc := watchSource(n), watchSource(o); nSrc != oSrc {
		rv.add(ReviewItem{Kind: KindWatch, Old: one(oSrc), New: one(nSrc)},
			fmt.Sprintf("release source (watch) %s, was %s: %s it, and plan's description links its release notes; review that it is upstream's (not a fork) before merging",
				cmp.Or(nSrc, "none"), cmp.Or(oSrc, "none"), takes))
	}
	if n == nil || o == nil {
		return
	}
	if n.TagPrefix != o.TagPrefix {
		rv.add(ReviewItem{Kind: KindWatch, Subject: "tag-prefix", Old: one(o.TagPrefix), New: one(n.TagPrefix)},
			fmt.Sprintf("release tags (watch tag-prefix) %q, was %q: %s the tags with this prefix alone (in a repository of several components, another prefix is another component's releases); review that they are this recipe's before merging",
				n.TagPrefix, o.TagPrefix, takes))
	}
	if n.Prereleases != o.Prereleases {
		now := "pre-releases count now (watch prereleases: true), they did not: %s release candidates and other pre-releases too; review that nodes should get them before merging"
		if !n.Prereleases {
			now = "pre-releases no longer count (watch prereleases: false), they did: %s releases alone; review that before merging"
		}
		rv.add(ReviewItem{Kind: KindWatch, Subject: "prereleases", Old: []string{strconv.FormatBool(o.Prereleases)}, New: []string{strconv.FormatBool(n.Prereleases)}},
			fmt.Sprintf(now, takes))
	}
}

// watchSource is where a recipe's watch lists releases: the GitHub
// repository, or the URL and the pattern read there ("" for no watch).
func watchSource(w *recipe.Watch) string {
	switch {
	case w == nil:
		return ""
	case w.GitHub != "":
		return "github " + strings.ToLower(w.GitHub) // GitHub matches names in any case
	}
	return fmt.Sprintf("%s (pattern %s)", w.URL, w.Pattern)
}

// diffSource compares the anchors of one source; o is nil when the source
// is new.
func diffSource(name string, n, o *anchors, rv *reviews) {
	suffix := ""
	switch {
	case o == nil:
		o, suffix = &anchors{}, " (new source)"
	case n.form != o.form && n.form != formNone:
		rv.add(ReviewItem{Kind: KindSignatureForm, Source: name, Old: []string{o.form}, New: []string{n.form}},
			fmt.Sprintf("signature form changed: %s, was %s", formNames[n.form], formNames[o.form]))
	}
	if n.form == formNone && (o.form != formNone || suffix != "") {
		var was []string
		if o.form != "" {
			was = []string{o.form}
		}
		msg := fmt.Sprintf("no signature: %q%s", n.none, suffix)
		if o.form != "" {
			msg = fmt.Sprintf("no signature now: %q (was %s)", n.none, formNames[o.form])
		}
		rv.add(ReviewItem{Kind: KindSignatureNone, Source: name, Old: was, New: []string{formNone, n.none}}, msg)
	}
	diffKeyring(KindKeyring, "keyring", name, n.keyring, o.keyring, suffix, rv)
	diffSigners(KindSigners, "signers", name, n.signers, o.signers, n.keyring, o.keyring, suffix, rv)
	if nIs, oIs := onShared(n.identityIs, o.identityIs); nIs != oIs {
		nv, ov := shown(n.identity, o.identity, nIs, oIs)
		diffValue(KindSigstoreIdentity, "Sigstore identity", name, "", nv, ov, suffix, rv)
	}
	diffValue(KindSigstoreIssuer, "Sigstore issuer", name, "", n.issuer, o.issuer, suffix, rv)
	diffValue(KindSigstoreSource, "Sigstore source repository", name, "", n.sourceRepo, o.sourceRepo, suffix, rv)
	if n.predicates != o.predicates {
		// Unlisted is SLSA provenance, not "none required".
		typesOf := func(a *anchors) string {
			if a.form != formCosign && a.form != formBundle && a.form != formGitHub {
				return "" // no Sigstore signature: no types at all
			}
			return cmp.Or(a.predicates, slsaDefault)
		}
		np, op := typesOf(n), typesOf(o)
		diffValue(KindSigstorePredicates, "Sigstore predicate types", name, "", np, op, suffix, rv)
	}
	subject := n.keyFile
	if subject == "" {
		subject = o.keyFile
	}
	if n.key != o.key { // the same key under another file name is no change
		diffValue(KindSigstoreKey, "Sigstore public key "+subject, name, subject, n.key, o.key, suffix, rv)
	}
	nSums, oSums := onShared(n.checksumsIs, o.checksumsIs)
	switch {
	case n.checksums != "" && o.checksums == "":
		rv.add(ReviewItem{Kind: KindCrossCheck, Source: name, New: []string{n.checksums}},
			fmt.Sprintf("cross-check against the upstream checksum file %s%s", n.checksums, orNew(suffix)))
	case n.checksums == "" && o.checksums != "":
		rv.add(ReviewItem{Kind: KindCrossCheck, Source: name, Old: []string{o.checksums}},
			fmt.Sprintf("cross-check against the upstream checksum file %s removed", o.checksums))
	case nSums != oSums:
		// The file the pins are checked against comes from elsewhere: the
		// pins now agree with whatever that host serves.
		nv, ov := shown(n.checksums, o.checksums, nSums, oSums)
		rv.add(ReviewItem{Kind: KindCrossCheck, Source: name, Old: []string{ov}, New: []string{nv}},
			fmt.Sprintf("cross-check against the upstream checksum file %s, was %s", nv, ov))
	}
	diffKeyring(KindChecksumsKeyring, "checksum file keyring", name, n.sumsKeyring, o.sumsKeyring, suffix, rv)
	diffSigners(KindChecksumsSigners, "checksum file signers", name, n.sumsSigners, o.sumsSigners, n.sumsKeyring, o.sumsKeyring, suffix, rv)
	// New bytes from another URL are what that URL serves: the pins of a
	// bump are taken from where it downloads, and those of an architecture
	// added from what the template, as written, says now. The same bytes
	// from elsewhere are no trust change (the package diff notes the move)
	// where a signature or a cross-check vouches for the next bump's bytes;
	// where nothing but the URL does (signature: none, no cross-check), the
	// move is the trust change, and the next bump, from an unchanged URL,
	// gives no line: a move in one merge request and a bump in the next
	// took a source to another host unreviewed.
	newBytes := pinsChanged(n.pinned, o.pinned) || n.url != o.url && archAdded(n.pinned, o.pinned)
	urlOnly := n.form == formNone && n.checksums == ""
	if nURL, oURL := onShared(n.urlIs, o.urlIs); suffix == "" && nURL != oURL && (newBytes || urlOnly) {
		nv, ov := shown(n.url, o.url, nURL, oURL)
		msg := fmt.Sprintf("downloaded from %s, was %s, with other pinned bytes: they are what the new URL serves", nv, ov)
		if !newBytes {
			msg = fmt.Sprintf("downloaded from %s, was %s, the same pinned bytes: nothing but its URL vouches for a source without a signature or cross-check, so the pins of its next bump will be what the new URL serves", nv, ov)
		}
		rv.add(ReviewItem{Kind: KindSourceURL, Source: name, Old: []string{ov}, New: []string{nv}}, msg)
	}
	if nAlgs, oAlgs, nv, ov := pinnedAlgorithms(n.pinned, o.pinned); suffix == "" && nv != ov {
		rv.add(ReviewItem{Kind: KindPins, Source: name, Old: oAlgs, New: nAlgs},
			fmt.Sprintf("pinned digests %s, were %s", nv, ov))
	}
}

// pinnedAlgorithms is what the digest algorithms pinned (n now, o at the
// base, by architecture) are on the architectures both pin, or on all when
// they share none (as onShared compares templates): per architecture, since
// sha512 dropped from one architecture while another keeps it leaves that
// architecture's bytes vouched for by sha256 alone, though the recipe as a
// whole still pins both. An architecture added pins what it pins: it had
// nothing to lose. It returns the lists (the algorithms when every
// architecture pins the same, else "ARCH: ALG, ALG" per architecture) and
// how a line shows them.
func pinnedAlgorithms(n, o map[string]digest.Set) (nList, oList []string, nShown, oShown string) {
	sn, so := map[string]digest.Set{}, map[string]digest.Set{}
	for arch, p := range n {
		if q, ok := o[arch]; ok {
			sn[arch], so[arch] = p, q
		}
	}
	if len(sn) == 0 {
		sn, so = n, o
	}
	nList, nShown = algorithmsByArch(sn)
	oList, oShown = algorithmsByArch(so)
	return nList, oList, nShown, oShown
}

func algorithmsByArch(pinned map[string]digest.Set) ([]string, string) {
	per := map[string][]string{}
	for arch, set := range pinned {
		for alg := range set {
			per[arch] = append(per[arch], string(alg))
		}
		slices.Sort(per[arch])
	}
	arches := slices.Sorted(maps.Keys(per))
	uniform := true
	for _, arch := range arches {
		uniform = uniform && slices.Equal(per[arch], per[arches[0]])
	}
	if len(arches) == 0 || uniform {
		var algs []string
		if len(arches) > 0 {
			algs = per[arches[0]]
		}
		return algs, joinOr(algs, "none")
	}
	list := make([]string, len(arches))
	for i, arch := range arches {
		list[i] = arch + ": " + strings.Join(per[arch], ", ")
	}
	return list, strings.Join(list, "; ")
}

// pinsChanged reports whether the pins of a source (n now, o at the base,
// by architecture) name other bytes on an architecture both have.
func pinsChanged(n, o map[string]digest.Set) bool {
	for arch, p := range n {
		if q, ok := o[arch]; ok && !samePins(p, q) {
			return true
		}
	}
	return false
}

// archAdded reports whether a source pins bytes (n now, o at the base, by
// architecture) for an architecture the base did not.
func archAdded(n, o map[string]digest.Set) bool {
	for arch := range n {
		if _, ok := o[arch]; !ok {
			return true
		}
	}
	return false
}

// orNew is the suffix that says a source is new, or else " (new)" for an
// anchor new to a source that was there.
func orNew(suffix string) string {
	if suffix == "" {
		return " (new)"
	}
	return suffix
}

// diffValue reviews a setting with one value (an identity, an issuer, a
// key's fingerprint) that appeared, changed or went away.
func diffValue(kind Kind, what, source, subject, n, o, suffix string, rv *reviews) {
	it := ReviewItem{Kind: kind, Source: source, Subject: subject}
	switch {
	case n == o:
		return
	case o == "":
		it.New = []string{n}
		rv.add(it, fmt.Sprintf("%s %s%s", what, n, orNew(suffix)))
	case n == "":
		it.Old = []string{o}
		rv.add(it, fmt.Sprintf("%s no longer required (was %s)", what, o))
	default:
		it.Old, it.New = []string{o}, []string{n}
		rv.add(it, fmt.Sprintf("%s %s, was %s", what, n, o))
	}
}

// diffKeyring reviews a keyring that appeared, went away, or whose keys
// changed: each key added or removed by fingerprint, and each key in both
// whose certificate changed, with what changed. A keyring moved to another
// file with the same bytes is no change.
func diffKeyring(kind Kind, what, source string, n, o *keyringFacts, suffix string, rv *reviews) {
	switch {
	case n == nil && o == nil:
		return
	case o == nil:
		it := ReviewItem{Kind: kind, Source: source, Subject: n.path, New: n.fprs, Added: n.fprs}
		if n.err != nil {
			rv.add(it, fmt.Sprintf("%s %s%s: unreadable: %v", what, n.path, orNew(suffix), n.err))
			return
		}
		rv.add(it, fmt.Sprintf("%s %s%s: %d key(s): %s", what, n.path, orNew(suffix), len(n.fprs), joinOr(n.fprs, "none")))
		return
	case n == nil:
		rv.add(ReviewItem{Kind: kind, Source: source, Subject: o.path, Old: o.fprs, Removed: o.fprs},
			fmt.Sprintf("%s %s no longer used (it held %s)", what, o.path, joinOr(o.fprs, "no key")))
		return
	case n.data != nil && bytes.Equal(n.data, o.data): // the same bytes, unreadable or not, under any name
		return
	}
	it := ReviewItem{Kind: kind, Source: source, Subject: n.path, Old: o.fprs, New: n.fprs}
	it.Added, it.Removed = listDiff(o.fprs, n.fprs)
	var parts []string
	if n.path != o.path {
		parts = append(parts, "replaces "+o.path)
	}
	if n.err != nil {
		parts = append(parts, fmt.Sprintf("unreadable: %v", n.err))
	}
	for _, f := range it.Added {
		parts = append(parts, "key "+f+" added")
	}
	for _, f := range it.Removed {
		parts = append(parts, "key "+f+" removed")
	}
	for _, f := range n.fprs {
		of, ok := o.facts[f]
		if !ok {
			continue
		}
		gained, lost := listDiff(of, n.facts[f])
		if len(gained) == 0 && len(lost) == 0 {
			continue
		}
		it.Changed = append(it.Changed, f)
		var c []string
		if len(gained) > 0 {
			c = append(c, "now "+strings.Join(gained, ", "))
		}
		if len(lost) > 0 {
			c = append(c, "no longer "+strings.Join(lost, ", "))
		}
		parts = append(parts, "key "+f+" changed: "+strings.Join(c, "; "))
	}
	if len(parts) == 0 || len(parts) == 1 && n.path != o.path {
		parts = append(parts, "the same keys, user IDs, subkeys, expiry and revocations, other bytes (signatures or packets)")
	}
	rv.add(it, fmt.Sprintf("%s %s: %s", what, n.path, strings.Join(parts, "; ")))
}

// diffSigners reviews a signers: allow-list that changed (an empty list
// allows any key of the keyring).
func diffSigners(kind Kind, what, source string, n, o []string, newKeyring, oldKeyring *keyringFacts, suffix string, rv *reviews) {
	if sameSet(n, o) && (suffix == "" || len(n) == 0) {
		return
	}
	it := ReviewItem{Kind: kind, Source: source, Old: o, New: n}
	it.Added, it.Removed = listDiff(o, n)
	// A signer the keyring does not hold can never sign: say so.
	named := func(list []string) string {
		var out []string
		for _, f := range list {
			if newKeyring != nil && newKeyring.err == nil && !slices.Contains(newKeyring.fprs, f) {
				f += " (not in " + newKeyring.path + ")"
			}
			out = append(out, f)
		}
		return strings.Join(out, ", ")
	}
	switch {
	case suffix != "":
		rv.add(it, fmt.Sprintf("%s %s%s", what, named(n), suffix))
	case len(o) == 0 && oldKeyring == nil:
		rv.add(it, fmt.Sprintf("%s %s (new)", what, named(n)))
	case len(n) == 0 && newKeyring == nil:
		rv.add(it, fmt.Sprintf("%s no longer apply (were %s)", what, strings.Join(o, ", ")))
	case len(n) == 0:
		rv.add(it, fmt.Sprintf("%s: any key of %s now (were %s)", what, newKeyring.path, strings.Join(o, ", ")))
	case len(o) == 0:
		rv.add(it, fmt.Sprintf("%s: only %s now (was any key of %s)", what, named(n), oldKeyring.path))
	default:
		var parts []string
		if len(it.Added) > 0 {
			parts = append(parts, named(it.Added)+" added")
		}
		if len(it.Removed) > 0 {
			parts = append(parts, strings.Join(it.Removed, ", ")+" removed")
		}
		rv.add(it, fmt.Sprintf("%s: %s (now %s)", what, strings.Join(parts, "; "), strings.Join(n, ", ")))
	}
}
