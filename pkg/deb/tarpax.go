package deb

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PAX extended headers, which tarReader reads in control.tar only
// (tarReader.gnuTar): dpkg-deb extracts control.tar with GNU tar, which
// reads them (tar --format=pax, Python's tarfile and bsdtar write them),
// while dpkg's own reader, unpacking data.tar, refuses them ("unsupported
// PAX tar header type"). What GNU tar 1.34 makes of them, measured through
// dpkg-deb --info and dpkg -i, is what applyPAX does:
//
//   - an extended header ('x') sets the next entry's path, linkpath, size,
//     mtime, uid, gid, uname and gname; a global one ('g') every later
//     entry's (GNU tar applies a global path to all of them, and so
//     loses the control file: refused, as are a global linkpath and size);
//   - an mtime, atime or ctime that is not a decimal number of seconds, a
//     uid or gid out of 0..4294967295, a size that is no decimal number
//     and a malformed record fail GNU tar, and so dpkg-deb;
//   - other keywords (comment, charset, hdrcharset, SCHILY.xattr.*, which
//     GNU tar applies only with --xattrs, and unknown ones, with a
//     warning) change nothing.
//
// Stricter than GNU tar: no sparse file (GNU.sparse.*: GNU tar reads its
// map from the data, or fails on it, and extracts other bytes than the
// data; GNU.sparse.size alone it takes as the file's size), a header of
// at most maxPAXHeader bytes, a value for each keyword set, one extended
// header per entry, none with nothing after it, and not with a GNU long
// name or link for the same entry (which of them names it is a question
// of implementation).
const (
	tarPAX       = 'x'
	tarPAXGlobal = 'g'
)

// maxPAXHeader bounds a PAX header (GNU tar's is unbounded; a path and
// link of Linux's 4096 bytes and a few times, owners and comments take
// far less).
const maxPAXHeader = 64 << 10

// paxRecord is one "LENGTH KEYWORD=VALUE\n" record of a PAX header.
type paxRecord struct{ key, value string }

// parsePAX splits a PAX header's data into its records: LENGTH, in
// decimal, counts the whole record, its newline included. NULs after the
// last record are padding.
func parsePAX(b []byte) ([]paxRecord, error) {
	var recs []paxRecord
	for len(bytes.TrimRight(b, "\x00")) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp <= 0 || sp > 8 {
			return nil, errors.New("a PAX record without its length, which GNU tar refuses")
		}
		n, err := strconv.Atoi(string(b[:sp]))
		if err != nil || n <= sp+1 || n > len(b) || b[n-1] != '\n' {
			return nil, fmt.Errorf("a PAX record of length %q that does not end in a newline there, which GNU tar refuses", b[:sp])
		}
		key, value, ok := strings.Cut(string(b[sp+1:n-1]), "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("PAX record %q is not KEYWORD=VALUE, which GNU tar refuses", b[:n-1])
		}
		recs = append(recs, paxRecord{key, value})
		b = b[n:]
	}
	return recs, nil
}

// paxGlobal are the keywords of global headers that applyPAX keeps for
// every later entry: one value each, however many headers set them.
type paxGlobal map[string]string

// add checks recs, a global header's records, and keeps the ones that
// change later entries.
func (g paxGlobal) add(recs []paxRecord) error {
	for _, r := range recs {
		switch r.key {
		case "path", "linkpath", "size":
			return fmt.Errorf("a global PAX header sets %s=%q, which GNU tar applies to every entry that follows (a path, to the control file too, which is then lost)", r.key, r.value)
		}
		if err := applyPAX(&tarEntry{}, r); err != nil {
			return err
		}
		if paxKeys[r.key] {
			g[r.key] = r.value
		}
	}
	return nil
}

// paxKeys are the keywords applyPAX sets in an entry.
var paxKeys = map[string]bool{"path": true, "linkpath": true, "size": true, "mtime": true, "uid": true, "gid": true, "uname": true, "gname": true}

// applyPAX sets what r says in h, as GNU tar does, or says why GNU tar
// fails on it.
func applyPAX(h *tarEntry, r paxRecord) error {
	if r.value == "" && (paxKeys[r.key] || r.key == "atime" || r.key == "ctime") {
		return fmt.Errorf("PAX record %s= has no value (stricter than GNU tar, which then takes the header's)", r.key)
	}
	switch r.key {
	case "path":
		h.Name = r.value
	case "linkpath":
		h.Linkname = r.value
	case "uname":
		h.Uname = r.value
	case "gname":
		h.Gname = r.value
	case "size":
		n, err := strconv.ParseInt(r.value, 10, 64)
		if err != nil || n < 0 || r.value[0] == '+' {
			return fmt.Errorf("PAX size=%q is not a size in bytes, which GNU tar refuses", r.value)
		}
		h.Size = n
	case "uid", "gid":
		n, err := strconv.ParseInt(r.value, 10, 64)
		if err != nil || n < 0 || n > math.MaxUint32 || r.value[0] == '+' {
			return fmt.Errorf("PAX %s=%q is out of range 0..%d, which GNU tar refuses", r.key, r.value, uint32(math.MaxUint32))
		}
		if r.key == "uid" {
			h.UID = n
		} else {
			h.GID = n
		}
	case "mtime", "atime", "ctime":
		secs, err := paxTime(r.value)
		if err != nil {
			return fmt.Errorf("PAX %s=%q: %v, which GNU tar refuses", r.key, r.value, err)
		}
		if r.key == "mtime" {
			h.MTime = secs
		}
	default:
		if strings.HasPrefix(r.key, "GNU.sparse.") {
			return fmt.Errorf("PAX record %s: a sparse file's, which GNU tar extracts as other bytes than its data, or fails on (stricter than GNU tar)", r.key)
		}
	}
	return nil
}

// paxTime reads a PAX time, seconds with an optional fraction ("-1.5"),
// as the whole seconds at or before it.
func paxTime(v string) (int64, error) {
	whole, frac, dot := strings.Cut(v, ".")
	digits := strings.TrimPrefix(whole, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" || dot && (frac == "" || strings.Trim(frac, "0123456789") != "") {
		return 0, errors.New("not a decimal number of seconds")
	}
	secs, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, errors.New("out of range")
	}
	if whole[0] == '-' && strings.Trim(frac, "0") != "" {
		if secs == math.MinInt64 {
			return 0, errors.New("out of range")
		}
		secs--
	}
	return secs, nil
}
