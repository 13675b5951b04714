// Package verify checks OpenPGP signatures and checksum files against a strict,
// documented policy. It never fetches anything and never reads the clock: the
// caller passes the keyring, the allow-list and the current time.
//
// # Signature policy
//
// A signature counts only when every one of these holds:
//
//   - it is a document signature (binary or text, type 0x00/0x01) of version 4
//     or later, with an issuer key ID or fingerprint;
//   - its digest is SHA-224 or stronger: MD5, SHA-1 and RIPEMD-160 are refused;
//   - it was made by a key in the keyring: the primary key, or a subkey bound to
//     it by a valid binding signature (which, for a signing subkey, carries the
//     subkey's own cross-signature, as gpg requires). A key the keyring holds
//     more than once (cat old.asc new.asc) is one key with the signatures of
//     every copy, as sqv reads it: a revocation in any copy counts, and so
//     does a revocation certificate (gpg --gen-revoke) appended to the
//     keyring, armored or binary. A subkey bound to two primary keys (an old
//     one and its replacement) is judged under each: the signature counts
//     when it passes under either, as gpgv and sqv find;
//   - when Policy.Signers is not empty, the primary fingerprint of that key is
//     in it (an allow-list of primary fingerprints; subkeys are not listed);
//   - it verifies over exactly the data given;
//   - the signing key (and its primary key) is neither DSA (any size) nor RSA
//     under 2048 bits;
//   - the key that made it had the sign capability (key flag 0x02) in the self-
//     or binding signature valid at signing time (for a primary key whose
//     self-signature names no capabilities, in its direct-key signature, as
//     RFC 9580 5.2.3.10 has it): a certify-only primary, an encryption or
//     authentication subkey, or a key without key flags is refused;
//   - at the signature's creation time the primary key and the subkey were valid:
//     created before it, not expired, and not revoked. A revocation without a
//     reason or with reason "key compromised" counts as of always (anything the
//     key signed is suspect); "superseded" or "retired" revocations count from
//     their own creation time, so older signatures stay good. A revocation
//     made by a designated revoker the key names (gpg addrevoker, then
//     --desig-revoke) counts as the key's own when the revoker's primary
//     key is in the keyring and verifies it, as gpg counts it (gpgv says
//     REVKEYSIG, which apt refuses; sqv leaves such revocations out). The
//     self-signature (or binding) that speaks for that time is the newest one
//     made by then; when all are newer (extending a key's expiry makes gpg
//     replace them, so a refreshed key has none from before older releases),
//     the newest one, as gpgv judges a key: its expiry counts from the key's
//     creation, so it still says whether the key had expired then;
//   - it was not created in the future: more than ClockSkew (5 minutes) after
//     Policy.Now is refused. Nor has it expired at Policy.Now (when it carries an
//     expiration time).
//
// A key that expired or was softly revoked AFTER it made the signature does not
// invalidate the signature (releases stay verifiable after a key's expiry, as
// with gpgv); the Result carries a warning saying so.
//
// Several signatures on one file (a detached signature file may hold more than
// one, in one armored block or in several one after the other, as cat a.asc
// b.asc makes; every block is read, and text around the blocks is skipped, as
// gpgv and sqv do): one signature that passes
// suffices. Every other signature's refusal is
// reported in Result.Warnings. When none passes, the *RefusedError lists every
// signature's reason. The data is read once for every signature that hashes
// it alike (same digest, text or binary mode): a file of thousands of
// signatures costs one pass over a large artifact, not thousands. A v6
// signature hashes its own salt first and needs a pass of its own; past 32
// passes, the file's remaining signatures are refused unchecked.
// Self-signatures and binding signatures may use SHA-1 (as
// older keys in real upstream keyrings do, and gpgv accepts), never MD5 or
// RIPEMD-160; List warns about SHA-1 self-signatures.
//
// Every refusal wraps ErrSignature and is a *RefusedError whose Refusals say why,
// with a Reason a caller can branch on and a message for a person.
package openpgp
