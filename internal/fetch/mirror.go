package fetch

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/updeb/updeb/pkg/digest"
)

// Mirror maps upstream URLs starting with Prefix to To (see the package doc).
type Mirror struct {
	Prefix string // e.g. https://github.com/
	To     string // e.g. file:///srv/mirror/github.com/ or http://mirror.internal/github/
}

// Check reports a mirror whose Prefix is not an http(s) URL or whose To is not
// file:///ABSOLUTE/PATH/ or an http(s) URL.
func (m Mirror) Check() error {
	p, err := url.Parse(m.Prefix)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("mirror prefix %q: want an http:// or https:// URL prefix", m.Prefix)
	}
	t, err := url.Parse(m.To)
	switch {
	case err != nil:
	case t.Scheme == "file" && strings.HasPrefix(t.Path, "/") && (t.Host == "" || t.Host == "localhost"):
		return nil
	case (t.Scheme == "http" || t.Scheme == "https") && t.Host != "":
		return nil
	}
	return fmt.Errorf("mirror %q: to %q: want file:///ABSOLUTE/PATH/, http:// or https://", m.Prefix, m.To)
}

func checkMirrors(ms []Mirror) error {
	for _, m := range ms {
		if err := m.Check(); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
	}
	return nil
}

// mapMirror returns the URL to fetch for u: the longest matching mirror prefix
// replaced by its To, or u itself.
func mapMirror(ms []Mirror, u string) (target string, mirrored bool) {
	best := -1
	for i, m := range ms {
		if strings.HasPrefix(u, m.Prefix) && (best < 0 || len(m.Prefix) > len(ms[best].Prefix)) {
			best = i
		}
	}
	if best < 0 {
		return u, false
	}
	return ms[best].To + u[len(ms[best].Prefix):], true
}

// copyFile reads a file:// mirror URL into tmp, with the size limit.
func (f *Fetcher) copyFile(tu *url.URL, upstream string, tmp *os.File, h *digest.Hasher) error {
	src, err := os.Open(tu.Path)
	if err != nil {
		return &NetworkError{URL: upstream, Target: tu.String(), Attempts: 1, Err: err}
	}
	defer src.Close()
	n, err := io.CopyBuffer(io.MultiWriter(tmp, h), io.LimitReader(src, f.o.MaxSize+1), make([]byte, copyBuffer))
	if err != nil {
		return &NetworkError{URL: upstream, Target: tu.String(), Attempts: 1, Err: err}
	}
	if n > f.o.MaxSize {
		return &SizeError{URL: upstream, Limit: f.o.MaxSize, Size: n}
	}
	return nil
}
