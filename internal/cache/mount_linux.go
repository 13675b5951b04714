package cache

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// mountOf returns what tells path's mount from another's: its file system
// (the device) and, where the kernel says (statx's STATX_MNT_ID, Linux
// 5.8), the mount, which a bind mount of the same file system changes and
// rename(2) refuses to cross (EXDEV) as well.
func mountOf(path string) ([2]uint64, error) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_MNT_ID, &st)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		// No statx (a kernel before 4.11, a seccomp profile that refuses
		// it): the device alone, as on other systems.
		var s unix.Stat_t
		if err := unix.Stat(path, &s); err != nil {
			return [2]uint64{}, &os.PathError{Op: "stat", Path: path, Err: err}
		}
		return [2]uint64{uint64(s.Dev)}, nil //nolint:unconvert // Dev's type differs by architecture
	}
	if err != nil {
		return [2]uint64{}, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	id := [2]uint64{unix.Mkdev(st.Dev_major, st.Dev_minor)}
	if st.Mask&unix.STATX_MNT_ID != 0 {
		id[1] = st.Mnt_id
	}
	return id, nil
}
