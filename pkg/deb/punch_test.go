package deb

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"testing/iotest"
)

// punchingReader hands out the file's bytes unchanged, in reads of any
// size, and (on Linux) the file's blocks are given back as it goes.
func TestPunchingReader(t *testing.T) {
	data := make([]byte, 3*punchEvery+12345)
	r := rand.New(rand.NewPCG(5, 5))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := io.Copy(&got, iotest.HalfReader(&punchingReader{f: f})); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatal("read other bytes than the file's")
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != int64(len(data)) {
		t.Errorf("size %d after the read, want %d kept", st.Size(), len(data))
	}
	if runtime.GOOS != "linux" {
		return
	}
	if blocks := st.Sys().(*syscall.Stat_t).Blocks * 512; blocks > punchEvery+1<<20 {
		t.Errorf("%d bytes of blocks left after reading %d: holes not punched", blocks, len(data))
	}
}
