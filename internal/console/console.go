// Package console is updeb's stderr: log lines and progress bars through one
// writer. On a terminal the bars of the tasks in progress (downloads, re-hashes
// of cached files, packages being compressed) stay below the log lines and are
// redrawn in place, as apt, docker and cargo do: a log line clears the bars,
// is written, and the bars are drawn again under it; a finished task's bar
// disappears (its log line is the record). Anywhere else (a pipe, a file,
// TERM=dumb or unset) there are no bars and no escape sequences, only the log lines.
//
// The package reads no environment: the command layer says what the terminal
// is (Options) and passes the logger (Logger) to the libraries.
package console

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Options describe the writer; the command layer fills them from the
// environment (terminal detection, TERM, NO_COLOR, the terminal's width).
type Options struct {
	// Terminal: w is a terminal that moves its cursor on ANSI sequences.
	// Bars are drawn only then; log lines then carry no timestamp.
	Terminal bool
	// Bars: draw progress bars (Terminal, and not -q or a JSON log).
	Bars  bool
	Color bool       // colour the level of warnings and errors
	Width func() int // the terminal's columns now; nil or <= 0 means 80

	Level  slog.Leveler // the least level logged (nil: Info)
	JSON   bool         // log lines as JSON objects (slog's JSONHandler) instead of the human format
	Shorts []Short      // folders whose paths are shortened in human log lines (see AddShort)

	Now func() time.Time // for elapsed times on bars; nil means time.Now
	// Tick is how often the bars are redrawn while tasks run, so that a
	// task that reports nothing for a while (an xz block being compressed)
	// still shows its time moving: 0 means every second, < 0 never.
	Tick time.Duration
}

// Short shortens paths below Dir to Name + the rest ("" Name: relative to Dir).
type Short struct {
	Dir  string // absolute and clean
	Name string // for example "$CACHE"; "" for the working folder
}

// redrawEvery is the least time between two redraws caused by progress
// alone; finishing a shown task, and a log line, redraw at once.
const redrawEvery = 100 * time.Millisecond

// showAfter is how long a task runs before its bar is shown: a small file
// fetched in a blink gets no bar that flashes and vanishes.
const showAfter = 250 * time.Millisecond

// Console is one stderr shared by the logger and the progress bars. It is
// safe for concurrent use.
type Console struct {
	mu       sync.Mutex
	w        io.Writer
	o        Options
	tasks    []*task
	byID     map[string]*task
	drawn    int       // bar lines on the screen below the log lines
	lastDraw time.Time // of the last redraw
	partial  []byte    // a log write without its newline yet
	closed   bool
	ticking  bool // a ticker goroutine runs (while there are tasks)
}

// Status is what a bar shows about one task.
type Status struct {
	Phase string // a short verb: "fetch", "verify", "compress"
	Name  string // what: a file name
	Done  int64  // bytes done (read, received, hashed)
	Total int64  // bytes in all; <= 0 when unknown
	// Out is the bytes written so far when the task turns Done bytes into
	// other bytes (compression); < 0 when it does not.
	Out int64
}

type task struct {
	id    string
	s     Status
	start time.Time
}

// New returns a console writing to w.
func New(w io.Writer, o Options) *Console {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick == 0 {
		o.Tick = time.Second
	}
	if o.Level == nil {
		o.Level = slog.LevelInfo
	}
	o.Shorts = slices.Clone(o.Shorts)
	slices.SortStableFunc(o.Shorts, func(a, b Short) int { return len(b.Dir) - len(a.Dir) })
	if !o.Terminal {
		o.Bars, o.Color = false, false
	}
	return &Console{w: w, o: o, byID: map[string]*task{}}
}

// AddShort adds a folder whose paths log lines shorten; the longest folder
// that matches wins.
func (c *Console) AddShort(s Short) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A new array: shorten reads the old one without the lock.
	c.o.Shorts = slices.Concat(c.o.Shorts, []Short{s})
	slices.SortStableFunc(c.o.Shorts, func(a, b Short) int { return len(b.Dir) - len(a.Dir) })
}

// Bars reports whether progress is drawn (callers may skip computing it).
func (c *Console) Bars() bool { return c != nil && c.o.Bars }

// Update shows s as the bar of task id, adding the bar when id is new.
func (c *Console) Update(id string, s Status) {
	if !c.Bars() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	t, ok := c.byID[id]
	if !ok {
		t = &task{id: id, start: c.o.Now()}
		c.byID[id] = t
		c.tasks = append(c.tasks, t)
		if !c.ticking && c.o.Tick > 0 {
			c.ticking = true
			go c.tick()
		}
	}
	t.s = s
	now := c.o.Now()
	if now.Sub(t.start) < showAfter || now.Sub(c.lastDraw) < redrawEvery {
		return
	}
	c.redraw(nil)
}

// tick redraws the bars every Options.Tick while there are tasks.
func (c *Console) tick() {
	t := time.NewTicker(c.o.Tick)
	defer t.Stop()
	for range t.C {
		c.mu.Lock()
		if c.closed || len(c.tasks) == 0 {
			c.ticking = false
			c.mu.Unlock()
			return
		}
		c.redraw(nil)
		c.mu.Unlock()
	}
}

// Finish removes task id's bar (a no-op for an unknown id).
func (c *Console) Finish(id string) {
	if !c.Bars() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.byID[id]
	if !ok {
		return
	}
	delete(c.byID, id)
	for i, x := range c.tasks {
		if x == t {
			c.tasks = append(c.tasks[:i], c.tasks[i+1:]...)
			break
		}
	}
	if !c.closed && c.drawn > 0 {
		c.redraw(nil)
	}
}

// Write writes log text above the bars: complete lines at once, a trailing
// partial line once its newline arrives (or at Close).
func (c *Console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	i := strings.LastIndexByte(string(c.partial), '\n')
	if i < 0 {
		return len(p), nil
	}
	lines := c.partial[:i+1]
	c.partial = append([]byte(nil), c.partial[i+1:]...)
	if !c.o.Bars || c.closed || (c.drawn == 0 && len(c.tasks) == 0) {
		_, err := c.w.Write(lines)
		return len(p), err
	}
	return len(p), c.redraw(lines)
}

// Close removes the bars and writes what is left of a partial line. Later
// log lines are written plainly; later progress is ignored.
func (c *Console) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.tasks, c.byID = nil, map[string]*task{}
	var err error
	if c.drawn > 0 {
		err = c.redraw(nil)
	}
	c.closed = true
	if len(c.partial) > 0 {
		_, werr := c.w.Write(append(c.partial, '\n'))
		c.partial = nil
		if err == nil {
			err = werr
		}
	}
	return err
}

// redraw moves the cursor back over the bars drawn last, clears to the end
// of the screen, writes lines (log text, whole lines) and draws the bars
// again, in one write so that the terminal never shows a half-drawn state.
// The cursor rests at the start of the line below the last bar.
func (c *Console) redraw(lines []byte) error {
	var b strings.Builder
	if c.drawn > 0 {
		fmt.Fprintf(&b, "\r\x1b[%dA", c.drawn)
	}
	if c.drawn > 0 || len(lines) > 0 {
		b.WriteString("\x1b[J")
	}
	b.Write(lines)
	width := 80
	if c.o.Width != nil {
		if w := c.o.Width(); w > 0 {
			width = w
		}
	}
	now := c.o.Now()
	shown := 0
	for _, t := range c.tasks {
		if now.Sub(t.start) < showAfter {
			continue
		}
		// One column short of the width: a line that fills the last column
		// wraps on some terminals, and the next redraw would miss a line.
		b.WriteString(fit(barLine(t, now), width-1))
		b.WriteByte('\n')
		shown++
	}
	c.drawn = shown
	c.lastDraw = now
	_, err := io.WriteString(c.w, b.String())
	return err
}

// barWidth is the number of cells of a bar's gauge.
const barWidth = 24

// barLine renders one task: phase, name, a gauge with the percentage when the
// total is known, the bytes (and bytes out), the time taken so far.
func barLine(t *task, now time.Time) string {
	s := t.s
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-34s ", s.Phase, fit(s.Name, 34))
	if s.Total > 0 {
		done := min(max(s.Done, 0), s.Total)
		fill := int(float64(barWidth) * float64(done) / float64(s.Total))
		b.WriteString("[" + strings.Repeat("=", fill) + strings.Repeat(" ", barWidth-fill) + "]")
		fmt.Fprintf(&b, " %3d%% %s/%s", done*100/s.Total, Bytes(done), Bytes(s.Total))
	} else {
		b.WriteString(Bytes(s.Done))
	}
	if s.Out >= 0 {
		fmt.Fprintf(&b, " -> %s", Bytes(s.Out))
	}
	if d := now.Sub(t.start); d >= time.Second {
		fmt.Fprintf(&b, " %s", d.Truncate(time.Second))
	}
	return b.String()
}

// fit cuts s to n characters, marking a cut with "...".
func fit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 3 {
		return string([]rune(s)[:max(n, 0)])
	}
	return string([]rune(s)[:n-3]) + "..."
}

// Bytes renders a byte count for people: 512 B, 3.1 KiB, 712.4 MiB.
func Bytes(n int64) string {
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
