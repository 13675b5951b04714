//go:build amd64 || arm64

package xzpar

import "unsafe"

const canPrefetch = true

// prefetch asks the CPU to bring the cache lines at a and b closer without
// waiting for them: unlike a load it never stalls, and it cannot fault. It
// only affects speed.
//
//go:noescape
func prefetch(a, b unsafe.Pointer)
