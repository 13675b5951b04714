package atomicfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/updeb/updeb/pkg/atomicfile"
)

// Replace a file so that a reader, or a crash, sees the old or the new
// content, never a part of it.
func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "atomicfile")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "Release")
	for _, content := range []string{"old\n", "new\n"} {
		if err := atomicfile.WriteFile(path, []byte(content), 0o644); err != nil {
			panic(err)
		}
	}
	data, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	fmt.Printf("%q, %d file(s) in the folder\n", data, len(entries))
	// Output: "new\n", 1 file(s) in the folder
}

// Stream into a file; until Commit, the target is untouched, and Abort (or a
// failure) leaves nothing behind.
func ExampleCreate() {
	dir, err := os.MkdirTemp("", "atomicfile")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pkg.deb")

	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		panic(err)
	}
	io.WriteString(f, "half a package")
	f.Abort()
	_, err = os.Stat(path)
	fmt.Println("after Abort:", os.IsNotExist(err))

	f, err = atomicfile.Create(path, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Abort() // does nothing once committed
	io.WriteString(f, "a whole package")
	if err := f.Commit(); err != nil {
		panic(err)
	}
	data, _ := os.ReadFile(path)
	fmt.Printf("after Commit: %q\n", data)
	// Output:
	// after Abort: true
	// after Commit: "a whole package"
}
