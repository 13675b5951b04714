package diskfull

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// TestQuotaAndFullDisk: EDQUOT (a spent quota) is a full disk as ENOSPC is,
// however deep it is wrapped; Dir names the folder (Wrap's, else the
// failed path's), and the message says which of the two it is.
func TestQuotaAndFullDisk(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		what  string
	}{{syscall.ENOSPC, "is full"}, {syscall.EDQUOT, "is over its quota"}} {
		pe := &fs.PathError{Op: "write", Path: "/var/cache/updeb/tmp/part-1", Err: tc.errno}
		deep := fmt.Errorf("fetch https://h/x: %w", pe)
		if !Is(deep) || Dir(deep) != "/var/cache/updeb/tmp" {
			t.Errorf("%v: Is %v, Dir %q", tc.errno, Is(deep), Dir(deep))
		}
		w := Wrap(deep, "/var/cache/updeb")
		if !errors.Is(w, tc.errno) || Dir(w) != "/var/cache/updeb" || !strings.Contains(w.Error(), "the disk holding /var/cache/updeb "+tc.what) {
			t.Errorf("%v: %v (Dir %q)", tc.errno, w, Dir(w))
		}
		if Wrap(w, "/elsewhere") != w {
			t.Errorf("%v: wrapped twice", tc.errno)
		}
	}
	other := errors.New("connection reset")
	if Is(other) || Wrap(other, "/x") != other || Dir(other) != "" || Wrap(nil, "/x") != nil {
		t.Error("an error that is no full disk is left alone")
	}
}
