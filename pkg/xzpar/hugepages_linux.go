package xzpar

import (
	"syscall"
	"unsafe"
)

// adviseHugePages asks the kernel to back t with huge pages where it can
// (where transparent huge pages are enabled for advised memory): the match
// finder's tables are read at random, and with 4 KiB pages most of those
// reads also miss the TLB. It only affects speed.
func adviseHugePages[T uint32 | byte](t []T) {
	const hugePage = 2 << 20
	n := cap(t) * int(unsafe.Sizeof(t[0]))
	if n < hugePage {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t))), n)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // only a hint: an error changes nothing
}
