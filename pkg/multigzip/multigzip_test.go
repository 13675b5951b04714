package multigzip

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

func member(t *testing.T, data, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Name = name
	if _, err := io.WriteString(zw, data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readAll(in []byte, after After) ([]byte, error) {
	r, err := NewReader(context.Background(), bytes.NewReader(in), after)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// TestAgainstGzip reads each input under both rules and compares with
// gzip -dc: what gzip reads in full, both rules read alike (but for zero
// padding, which only ZeroPadding takes); what gzip refuses or reads only
// in part (it ignores trailing garbage), both refuse.
func TestAgainstGzip(t *testing.T) {
	gz := testenv.RequireTool(t, "gzip")[0]
	one, two := member(t, "first member\n", ""), member(t, strings.Repeat("second ", 1000), "data.tar")
	long := member(t, "x", strings.Repeat("n", 600))
	flag := slices.Clone(one)
	flag[3] |= 0x20
	crc := slices.Clone(one)
	crc[len(crc)-5] ^= 1
	cases := []struct {
		name    string
		in      []byte
		nothing string // the error under Nothing; "" reads
		padding string // under ZeroPadding
	}{
		{"one member", one, "", ""},
		{"two members", slices.Concat(one, two), "", ""},
		{"a member with a name", two, "", ""},
		{"zero padding", slices.Concat(one, two, make([]byte, 10240)), "gzip: 10240 bytes after the last member that are not gzip", ""},
		{"garbage", slices.Concat(one, []byte("garbage")), "gzip: 7 bytes after the last member that are not gzip", "neither another member nor zero padding"},
		{"zeros then garbage", slices.Concat(one, make([]byte, 40000), []byte("x")), "bytes after the last member", "neither another member nor zero padding"},
		{"a member after zeros", slices.Concat(one, make([]byte, 512), two), "bytes after the last member", "neither another member nor zero padding"},
		{"cut in the first header's name", two[:15], "gzip: member 1 ends inside its header: unexpected EOF", "gzip: member 1 ends inside its header: unexpected EOF"},
		{"cut in the second header's name", slices.Concat(one, two[:15]), "gzip: member 2 ends inside its header: unexpected EOF", "gzip: member 2 ends inside its header: unexpected EOF"},
		{"cut in the data", two[:len(two)-20], "unexpected EOF", "unexpected EOF"},
		{"one byte of a second member", slices.Concat(one, []byte{0x1f}), "1 bytes after the last member", "neither another member nor zero padding"},
		{"a reserved flag", slices.Concat(one, flag), "gzip: the header of member 2: reserved header flags 0x20 are set", "gzip: the header of member 2: reserved header flags 0x20 are set"},
		{"a bad CRC", crc, "gzip: invalid checksum", "gzip: invalid checksum"},
		{"not gzip", []byte("<html>404</html>"), `gzip: the header of member 1: not gzip (it starts with "<htm")`, `not gzip (it starts with "<htm")`},
		{"empty", nil, "gzip: empty, no member", "gzip: empty, no member"},
		// gzip -d reads it; Go's reader holds 511 bytes of a name.
		{"a name longer than 511 bytes", long, "its file name is longer than 511 bytes", "its file name is longer than 511 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(gz, "-dc")
			cmd.Stdin = bytes.NewReader(c.in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			want, gzErr := cmd.Output()
			gzClean := gzErr == nil && !strings.Contains(stderr.String(), "trailing garbage")
			for _, r := range []struct {
				after After
				want  string
			}{{Nothing, c.nothing}, {ZeroPadding, c.padding}} {
				got, err := readAll(c.in, r.after)
				if r.want == "" {
					if err != nil {
						t.Fatalf("after rule %d: %v", r.after, err)
					}
					if !gzClean || !bytes.Equal(got, want) {
						t.Fatalf("after rule %d: read %d bytes, gzip -dc %d (err %v, %s)", r.after, len(got), len(want), gzErr, stderr.String())
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), r.want) {
					t.Fatalf("after rule %d: error %v, want one containing %q", r.after, err, r.want)
				}
				if gzClean && c.name != "a name longer than 511 bytes" && c.name != "zero padding" {
					t.Fatalf("gzip -dc reads it cleanly; we refuse it: %v", err)
				}
			}
		})
	}
}

// TestErrors checks what the errors wrap: callers tell a cut file and a
// header from other corruption by them.
func TestErrors(t *testing.T) {
	one := member(t, "x", "name")
	if _, err := readAll(one[:13], Nothing); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut header: %v, want io.ErrUnexpectedEOF", err)
	}
	_, err := readAll([]byte("PK\x03\x04 not gzip at all"), ZeroPadding)
	if !errors.Is(err, gzip.ErrHeader) || !errors.Is(err, ErrNotGzip) {
		t.Errorf("not gzip: %v, want gzip.ErrHeader and ErrNotGzip", err)
	}
	flag := slices.Clone(one)
	flag[3] |= 0x40
	if _, err := readAll(flag, Nothing); !errors.Is(err, gzip.ErrHeader) || errors.Is(err, ErrNotGzip) {
		t.Errorf("reserved flag: %v, want gzip.ErrHeader, not ErrNotGzip", err)
	}
	if _, err := readAll(nil, Nothing); err != ErrEmpty {
		t.Errorf("empty: %v, want ErrEmpty", err)
	}
}

// TestPaddingStopsOnCancel: a long run of zero padding is read under the
// context, so a cancelled command does not read it to the end.
func TestPaddingStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	z := &zeros{cancel: cancel, reads: 100} // then endless, were the context not read
	r, err := NewReader(ctx, io.MultiReader(bytes.NewReader(member(t, "x", "")), z), ZeroPadding)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if string(got) != "x" || !errors.Is(err, context.Canceled) {
		t.Fatalf("read %q, %v; want \"x\", context.Canceled", got, err)
	}
}

// zeros is an endless run of zero bytes that cancels a context after some
// reads.
type zeros struct {
	cancel context.CancelFunc
	reads  int
}

func (z *zeros) Read(p []byte) (int, error) {
	if z.reads--; z.reads == 0 {
		z.cancel()
	}
	clear(p)
	return len(p), nil
}

// TestErrorSticks: after an error every Read returns it, with no data.
func TestErrorSticks(t *testing.T) {
	in := slices.Concat(member(t, "abc", ""), []byte("junk"))
	r, err := NewReader(context.Background(), bytes.NewReader(in), Nothing)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if string(got) != "abc" || err == nil {
		t.Fatalf("read %q, %v", got, err)
	}
	for range 2 {
		if n, again := r.Read(make([]byte, 8)); n != 0 || again.Error() != err.Error() {
			t.Fatalf("read again: %d, %v; want 0, %v", n, again, err)
		}
	}
	if n, err := r.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
}
