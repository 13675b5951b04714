package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CgoBinary builds a cgo program (os/user: it calls libc's getpwuid_r) as
// Go's own linker lays it out, as containerd's release binaries are: a
// dynamically linked ET_EXEC executable without RELRO or BIND_NOW, whose
// dynamic segment's strings and version needs lie just before it, past the
// first MiB. It returns the binary's path.
func CgoBinary(t testing.TB) string {
	t.Helper()
	tools := RequireTool(t, "go", "gcc")
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module cgouser\n\ngo 1.22\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os/user\"\n)\n\nfunc main() { fmt.Println(user.Current()) }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(tools[0], "build", "-o", "cgouser", ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-ldflags=-linkmode=internal")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "cgouser")
}
