package fetch

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressEvery is how often a download reports progress.
const progressEvery = 100 * time.Millisecond

// Progress is one report about one download.
type Progress struct {
	URL      string
	Received int64
	Total    int64 // -1 when unknown
	Done     bool
	Err      error // set with Done when the download failed
}

// ProgressFunc receives progress reports; it is called from several goroutines.
type ProgressFunc func(Progress)

func (f *Fetcher) progress(p Progress) {
	if f.o.Progress != nil {
		f.o.Progress(p)
	}
}

// Bars returns a ProgressFunc that draws one bar per running download on a
// terminal w (the caller decides that w is a terminal), redrawing in place.
func Bars(w io.Writer) ProgressFunc {
	b := &bars{w: w, rows: map[string]Progress{}}
	return b.update
}

type bars struct {
	mu    sync.Mutex
	w     io.Writer
	order []string
	rows  map[string]Progress
	drawn int // lines drawn last time, to move back over
}

func (b *bars) update(p Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.rows[p.URL]; !ok {
		b.order = append(b.order, p.URL)
	}
	b.rows[p.URL] = p
	var out strings.Builder
	if b.drawn > 0 {
		fmt.Fprintf(&out, "\x1b[%dA", b.drawn)
	}
	// Finished downloads are printed once, above the running ones, and forgotten.
	keep := b.order[:0]
	for _, u := range b.order {
		if r := b.rows[u]; r.Done {
			out.WriteString("\x1b[2K" + bar(r) + "\n")
			delete(b.rows, u)
		} else {
			keep = append(keep, u)
		}
	}
	b.order = keep
	for _, u := range b.order {
		out.WriteString("\x1b[2K" + bar(b.rows[u]) + "\n")
	}
	b.drawn = len(b.order)
	io.WriteString(b.w, out.String())
}

func bar(p Progress) string {
	name := p.URL
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i+1 < len(name) {
		name = name[i+1:]
	}
	if len(name) > 32 {
		name = name[:29] + "..."
	}
	status := ""
	switch {
	case p.Err != nil:
		status = "failed"
	case p.Done:
		status = "done"
	}
	const width = 30
	if p.Total > 0 {
		fill := int(float64(width) * float64(p.Received) / float64(p.Total))
		fill = min(max(fill, 0), width)
		return fmt.Sprintf("%-32s [%s%s] %3d%% %s / %s %s", name, strings.Repeat("=", fill), strings.Repeat(" ", width-fill),
			p.Received*100/p.Total, human(p.Received), human(p.Total), status)
	}
	return fmt.Sprintf("%-32s %s %s", name, human(p.Received), status)
}

func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
