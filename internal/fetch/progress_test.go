package fetch

import (
	"bytes"
	"errors"
	"testing"
)

func TestBars(t *testing.T) {
	var out bytes.Buffer
	p := Bars(&out)
	p(Progress{URL: "https://x/a.tgz", Total: 2048})
	p(Progress{URL: "https://x/b.tgz", Total: -1, Received: 1536})
	p(Progress{URL: "https://x/a.tgz", Received: 2048, Total: 2048, Done: true})
	p(Progress{URL: "https://x/b.tgz", Received: 1536, Total: -1, Done: true, Err: errors.New("x")})
	want := "\x1b[2Ka.tgz                            [                              ]   0% 0 B / 2.0 KiB \n" +
		"\x1b[1A\x1b[2Ka.tgz                            [                              ]   0% 0 B / 2.0 KiB \n\x1b[2Kb.tgz                            1.5 KiB \n" +
		"\x1b[2A\x1b[2Ka.tgz                            [==============================] 100% 2.0 KiB / 2.0 KiB done\n\x1b[2Kb.tgz                            1.5 KiB \n" +
		"\x1b[1A\x1b[2Kb.tgz                            1.5 KiB failed\n"
	if out.String() != want {
		t.Errorf("got  %q\nwant %q", out.String(), want)
	}
}
