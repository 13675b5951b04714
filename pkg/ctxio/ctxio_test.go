package ctxio

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader("abcdef"))
	b := make([]byte, 3)
	if n, err := r.Read(b); n != 3 || err != nil || string(b) != "abc" {
		t.Fatalf("before cancel: %d %v %q", n, err, b)
	}
	cancel()
	if n, err := r.Read(b); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %d %v, want 0 and context.Canceled", n, err)
	}
	if _, err := io.ReadAll(r); !errors.Is(err, context.Canceled) {
		t.Fatalf("io.ReadAll after cancel: %v", err)
	}
}
