package lockfile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/updeb/updeb/pkg/lockfile"
)

// Serialise the processes that write one folder: whoever holds the lock
// writes; the others wait (here at most a second) for it.
func ExampleAcquire() {
	dir, _ := os.MkdirTemp("", "lockfile-example-")
	defer os.RemoveAll(dir)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l, err := lockfile.Acquire(ctx, filepath.Join(dir, ".lock"), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Unlock()
	fmt.Println("locked")
	// Output: locked
}

// A temporary folder that a later process may remove if this one is
// killed before it removes the folder itself.
func ExampleTempDir() {
	parent, _ := os.MkdirTemp("", "lockfile-example-")
	defer os.RemoveAll(parent)

	d, err := lockfile.TempDir(parent, "build-", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Remove()
	fmt.Println(filepath.Dir(d.Path) == parent, len(d.Swept))
	// Output: true 0
}
