package lockfile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExclusiveAndReleasedOnExit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	l, err := Acquire(context.Background(), p, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, p, 5*time.Millisecond); err == nil || !strings.Contains(err.Error(), "another updeb process") {
		t.Fatalf("second Acquire = %v, want a timeout naming the holder", err)
	}
	l.Unlock()
	l2, err := Acquire(context.Background(), p, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	l2.Unlock()
}

// A process killed with SIGKILL while holding the lock must not leave it held.
func TestLockDiesWithProcess(t *testing.T) {
	if os.Getenv("LOCKFILE_HOLD") != "" {
		Acquire(context.Background(), os.Getenv("LOCKFILE_HOLD"), 0)
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		return
	}
	p := filepath.Join(t.TempDir(), "lock")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLockDiesWithProcess$")
	cmd.Env = append(os.Environ(), "LOCKFILE_HOLD="+p)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	out.Read(buf)
	cmd.Process.Kill()
	cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := Acquire(ctx, p, 5*time.Millisecond)
	if err != nil {
		t.Fatalf("lock still held after the holder was killed: %v", err)
	}
	l.Unlock()
}
