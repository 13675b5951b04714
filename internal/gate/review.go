package gate

import (
	"slices"
	"strings"
)

// Kind names what a review item is about. Each kind is one row of
// reviewKinds and of the table in docs/ci-gate.md.
type Kind string

// The kinds of review item. Trust kinds compare what vouches for a source;
// a change of any of them leaves the package bytes alone and never needs a
// version increase.
const (
	KindNewRecipe        Kind = "new-recipe"        // the recipe is not at the base revision
	KindSignatureForm    Kind = "signature-form"    // e.g. detached OpenPGP -> Sigstore bundle
	KindSignatureNone    Kind = "signature-none"    // the source is now `signature: none` (New: the reason)
	KindKeyring          Kind = "keyring"           // the OpenPGP keyring of a detached signature: keys added, removed, changed
	KindSigners          Kind = "signers"           // its `signers:` allow-list
	KindSigstoreIdentity Kind = "sigstore-identity" // the certificate identity (or identity regexp) required
	KindSigstoreIssuer   Kind = "sigstore-issuer"   // the OIDC issuer required
	// KindSigstoreSource: the repository whose CI run must have signed
	// (the certificate's Source Repository URI).
	KindSigstoreSource Kind = "sigstore-source-repository"
	KindSigstoreKey    Kind = "sigstore-key" // the pinned public key of a key-signed bundle (fingerprints)
	// KindSigstorePredicates: the predicate types an attestation counts by
	// (predicate-types:; none: SLSA provenance).
	KindSigstorePredicates Kind = "sigstore-predicate-types"
	KindCrossCheck         Kind = "cross-check"       // the upstream checksum file cross-check, added or removed
	KindChecksumsKeyring   Kind = "checksums-keyring" // the keyring of a clearsigned checksum file
	KindChecksumsSigners   Kind = "checksums-signers" // its `signers:` allow-list
	KindPins               Kind = "pins"              // the digest algorithms pinned (same bytes, other pins)
	KindSourceURL          Kind = "source-url"        // new pinned bytes downloaded from another URL template
	KindTrustedRoot        Kind = "trusted-root"      // the Sigstore trusted root in effect, a file of the repository, new or changed (no recipe's)
	KindConfig             Kind = "config"            // a setting of the config file, a file of the repository, that decides where sources come from or what Sigstore is checked against (no recipe's)
	KindGitAttributes      Kind = "gitattributes"     // a .gitattributes file of the repository added, changed or removed: it changes the bytes of files as git checks them out (no recipe's)
	KindPackageTakeover    Kind = "package-takeover"  // a package name another series of recipes shipped at the base, shipped now, or named by a Provides, Replaces, Conflicts or Breaks added
	KindSystemPackage      Kind = "system-package"    // a Provides, Replaces, Conflicts or Breaks added on a package no recipe ships (openssh-server, systemd), or a Pre-Depends, Depends or Recommends that has apt install one, or a package of a name no recipe shipped added to a recipe
	KindWatch              Kind = "watch"             // the release source of the recipe's watch (GitHub repository, or URL and pattern), its tag prefix or its pre-releases changed
	KindRecipeGone         Kind = "recipe-gone"       // a recipe file of the base gone from the recipes folder (removed, or renamed to NAME.yml): its packages are no longer built (no recipe's)
	// What a package asks of the installing system (privileges.go): its
	// bytes change, so they go with a version increase, and a human looks.
	KindSpecialBits    Kind = "special-bits"    // a setuid, setgid or sticky bit added, changed or removed
	KindOwner          Kind = "owner"           // an owner or group other than root, added or changed
	KindMode           Kind = "mode"            // a mode other than updeb's defaults added, or a mode changed
	KindScriptFragment Kind = "script-fragment" // a maintainer-script fragment added, changed or removed
	KindTriggers       Kind = "triggers"        // the package's dpkg triggers changed
	KindSystemUser     Kind = "system-user"     // the package's system user added, removed, or its home or group changed
	KindRootConfig     Kind = "root-config"     // a path added where the system reads root's configuration (sudoers.d, cron, PAM, apt's keys...), or a recipe file there changed
	KindAlternative    Kind = "alternative"     // an update-alternatives entry added, or its link, path or priority changed
	KindLocalFile      Kind = "local-file"      // a path a source's file was installed at, a file of the recipe's folder now: no upstream signature vouches for it
	// What dpkg leaves behind on an upgraded system (upgrade.go).
	KindAlternativeGone Kind = "alternative-gone"    // an alternative name no package of the recipe registers now: its link stays
	KindConffileGone    Kind = "conffile-gone"       // a conffile the package no longer ships: dpkg keeps it until purge
	KindConffilePlain   Kind = "conffile-plain"      // a conffile shipped now as a plain file: an upgrade overwrites local edits
	KindNowConffile     Kind = "conffile-from-plain" // a plain file shipped now as a conffile: an upgrade asks about it, or keeps the old content
	KindUnitGone        Kind = "unit-gone"           // a systemd unit no package of the recipe ships now: a running instance keeps running
	KindDirSymlink      Kind = "dir-symlink"         // a directory that is a symlink now, or the reverse: dpkg never changes one into the other
	KindPackageGone     Kind = "package-gone"        // a package the recipe dropped that no package of it breaks or conflicts with: it stays installed
	KindPathConflict    Kind = "path-conflict"       // a path another recipe's package (another name) installs: dpkg refuses to install both
)

// reviewKinds maps each kind to the check whose REVIEW line shows it. A new
// kind of review item (file modes, maintainer-script fragments) is a
// constant above, a row here (and, a recipe's trust kind, one of recipeTrust),
// and a call of reviews.add where it is found.
var reviewKinds = map[Kind]string{
	KindNewRecipe:          "trust",
	KindSignatureForm:      "trust",
	KindSignatureNone:      "trust",
	KindKeyring:            "trust",
	KindSigners:            "trust",
	KindSigstoreIdentity:   "trust",
	KindSigstoreIssuer:     "trust",
	KindSigstoreSource:     "trust",
	KindSigstoreKey:        "trust",
	KindSigstorePredicates: "trust",
	KindCrossCheck:         "trust",
	KindChecksumsKeyring:   "trust",
	KindChecksumsSigners:   "trust",
	KindPins:               "trust",
	KindSourceURL:          "trust",
	KindTrustedRoot:        "trust",
	KindConfig:             "trust",
	KindGitAttributes:      "trust",
	KindPackageTakeover:    "trust",
	KindSystemPackage:      "trust",
	KindRecipeGone:         "trust",
	KindWatch:              "trust",
	KindSpecialBits:        "privileges",
	KindOwner:              "privileges",
	KindMode:               "privileges",
	KindScriptFragment:     "privileges",
	KindTriggers:           "privileges",
	KindSystemUser:         "privileges",
	KindRootConfig:         "privileges",
	KindAlternative:        "privileges",
	KindLocalFile:          "privileges",
	KindAlternativeGone:    "upgrade",
	KindConffileGone:       "upgrade",
	KindConffilePlain:      "upgrade",
	KindNowConffile:        "upgrade",
	KindDirSymlink:         "upgrade",
	KindUnitGone:           "upgrade",
	KindPackageGone:        "upgrade",
	KindPathConflict:       "upgrade",
}

// recipeTrust names, in the words of the trust PASS line that says a
// recipe has none, what its own trust review compares, with the kinds of
// item each finds. Every trust kind is here but the configuration's (no
// recipe's: trusted-root, config, gitattributes, recipe-gone) and
// new-recipe (a recipe the base lacks is never a PASS).
var recipeTrust = []struct {
	what  string
	kinds []Kind
}{
	{"signature forms", []Kind{KindSignatureForm, KindSignatureNone}},
	{"keyrings", []Kind{KindKeyring, KindChecksumsKeyring}},
	{"signers", []Kind{KindSigners, KindChecksumsSigners}},
	{"Sigstore identities, source repositories, issuers, keys and predicate types", []Kind{KindSigstoreIdentity, KindSigstoreSource, KindSigstoreIssuer, KindSigstoreKey, KindSigstorePredicates}},
	{"cross-checks", []Kind{KindCrossCheck}},
	{"pinned algorithms", []Kind{KindPins}},
	{"download URLs of new bytes", []Kind{KindSourceURL}},
	{"the watch's release source, tag prefix and pre-releases", []Kind{KindWatch}},
	{"packages of other recipes", []Kind{KindPackageTakeover}},
	{"the system's packages in provides, replaces, conflicts, breaks, pre-depends, depends and recommends, and in new package names", []Kind{KindSystemPackage}},
}

// recipeTrustChecked is the list of recipeTrust, for the trust PASS line.
func recipeTrustChecked() string {
	what := make([]string, len(recipeTrust))
	for i, t := range recipeTrust {
		what[i] = t.what
	}
	return strings.Join(what, ", ")
}

// ReviewItem is one change a human must review before merging: a REVIEW
// line of `updeb verify`, and one element of the report's "review" list.
// Old and New are the values before and after (fingerprints for keyrings,
// signers and keys; the identity, issuer, form or reason otherwise): empty
// when there was none or is none now. Added and Removed are what a list
// gained and lost; Changed the keys present in both whose certificate
// changed (user IDs, subkeys, expiry, revocation).
type ReviewItem struct {
	Kind    Kind     `json:"kind"`
	Recipe  string   `json:"recipe"`
	Source  string   `json:"source,omitempty"`  // the source concerned; "" for the recipe as a whole
	Subject string   `json:"subject,omitempty"` // the file or setting: a keyring's or key's path as the recipe names it
	Old     []string `json:"old"`
	New     []string `json:"new"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Message string   `json:"message"` // the REVIEW line: "source S: " and what changed
}

// reviews collects one recipe's review items in the order they were found.
type reviews struct {
	recipe string
	items  []ReviewItem
}

// add is the one place a review item is made: it names the recipe, makes
// the lists JSON arrays (never null), and prefixes the message with the
// source. message says what changed, for people.
func (rv *reviews) add(it ReviewItem, message string) {
	if _, ok := reviewKinds[it.Kind]; !ok {
		panic("gate: review kind " + string(it.Kind) + " is not in reviewKinds")
	}
	it.Recipe = rv.recipe
	for _, l := range []*[]string{&it.Old, &it.New} {
		if *l == nil {
			*l = []string{}
		}
	}
	if it.Source != "" {
		message = "source " + it.Source + ": " + message
	}
	it.Message = message
	rv.items = append(rv.items, it)
}

// listDiff returns what b has that a lacks, and what a has that b lacks,
// each sorted (keyrings may hold thousands of keys: sets, not scans).
func listDiff(a, b []string) (added, removed []string) {
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, x := range a {
		inA[x] = true
	}
	for _, x := range b {
		inB[x] = true
		if !inA[x] {
			added = append(added, x)
		}
	}
	for _, x := range a {
		if !inB[x] {
			removed = append(removed, x)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return slices.Compact(added), slices.Compact(removed)
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	added, removed := listDiff(a, b)
	return len(added) == 0 && len(removed) == 0
}

// joinOr joins list with ", ", or says none.
func joinOr(list []string, none string) string {
	if len(list) == 0 {
		return none
	}
	return strings.Join(list, ", ")
}
