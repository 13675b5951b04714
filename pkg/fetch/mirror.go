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

func checkMirrors(ms []Mirror) error {
	for _, m := range ms {
		p, err := url.Parse(m.Prefix)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("fetch: mirror prefix %q: want an http:// or https:// URL prefix", m.Prefix)
		}
		t, err := url.Parse(m.To)
		if err != nil {
			return fmt.Errorf("fetch: mirror %q: to %q: %w", m.Prefix, m.To, err)
		}
		switch {
		case t.Scheme == "file" && strings.HasPrefix(t.Path, "/") && (t.Host == "" || t.Host == "localhost"):
		case (t.Scheme == "http" || t.Scheme == "https") && t.Host != "":
		default:
			return fmt.Errorf("fetch: mirror %q: to %q: want file:///ABSOLUTE/PATH/, http:// or https://", m.Prefix, m.To)
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
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(src, f.o.MaxSize+1))
	if err != nil {
		return &NetworkError{URL: upstream, Target: tu.String(), Attempts: 1, Err: err}
	}
	if n > f.o.MaxSize {
		return &SizeError{URL: upstream, Limit: f.o.MaxSize, Size: n}
	}
	return nil
}

