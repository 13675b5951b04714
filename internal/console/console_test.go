package console

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// screen is a fake terminal: it interprets what the console writes (text,
// "\n", "\r", cursor up, erase to the end of the screen or line, colours)
// into rows of cells, wrapping at width like a terminal.
type screen struct {
	width    int
	rows     []string
	row, col int
	raw      bytes.Buffer
}

var csiRE = regexp.MustCompile(`^\x1b\[([0-9;]*)([A-Za-z])`)

func (s *screen) Write(p []byte) (int, error) {
	s.raw.Write(p)
	str := string(p)
	for len(str) > 0 {
		if m := csiRE.FindStringSubmatch(str); m != nil {
			n := 1
			if m[1] != "" && !strings.Contains(m[1], ";") {
				n, _ = strconv.Atoi(m[1])
			}
			switch m[2] {
			case "A":
				s.row = max(s.row-n, 0)
			case "J":
				s.grow()
				s.rows[s.row] = cut(s.rows[s.row], s.col)
				s.rows = s.rows[:s.row+1]
			case "K":
				s.grow()
				s.rows[s.row] = cut(s.rows[s.row], s.col)
			case "m":
			default:
				return 0, errors.New("unexpected escape " + strconv.Quote(m[0]))
			}
			str = str[len(m[0]):]
			continue
		}
		c := str[0]
		str = str[1:]
		switch c {
		case '\n':
			s.row, s.col = s.row+1, 0
		case '\r':
			s.col = 0
		case 0x1b:
			return 0, errors.New("unknown escape")
		default:
			if s.col >= s.width {
				s.row, s.col = s.row+1, 0
			}
			s.grow()
			line := []byte(s.rows[s.row])
			for len(line) < s.col {
				line = append(line, ' ')
			}
			if s.col < len(line) {
				line[s.col] = c
			} else {
				line = append(line, c)
			}
			s.rows[s.row] = string(line)
			s.col++
		}
	}
	return len(p), nil
}

func (s *screen) grow() {
	for len(s.rows) <= s.row {
		s.rows = append(s.rows, "")
	}
}

func cut(line string, col int) string {
	if col < len(line) {
		return line[:col]
	}
	return line
}

// text is the screen's content, trailing empty rows dropped.
func (s *screen) text() string {
	rows := append([]string(nil), s.rows...)
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	return strings.Join(rows, "\n")
}

// clock is a settable clock for the bars' elapsed times and redraw pacing.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func terminal(width int) (*screen, *Console, *clock) {
	scr := &screen{width: width}
	clk := &clock{t: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	c := New(scr, Options{Terminal: true, Bars: true, Width: func() int { return width }, Now: clk.now, Tick: -1})
	return scr, c, clk
}

// TestBarsStayBelowLogLines drives a build's worth of events through a fake
// terminal and checks the screen after each step: the log lines in order at
// the top, the bars of the running tasks below them, no stale bar rows, no
// line wider than the terminal.
func TestBarsStayBelowLogLines(t *testing.T) {
	scr, c, clk := terminal(100)
	log := c.Logger()
	check := func(step, want string) {
		t.Helper()
		if got := scr.text(); got != want {
			t.Errorf("%s: screen\n%s\nwant\n%s", step, got, want)
		}
		for i, r := range scr.rows {
			if len(r) >= scr.width {
				t.Errorf("%s: row %d is %d wide on a %d-column terminal", step, i, len(r), scr.width)
			}
		}
	}
	c.Update("a", Status{Phase: "fetch", Name: "a.tar.gz", Total: 2048, Out: -1})
	c.Update("quick", Status{Phase: "fetch", Name: "quick.asc", Total: 200, Out: -1})
	c.Finish("quick")
	check("no bar for a task just started", "")
	clk.add(showAfter)
	c.Update("a", Status{Phase: "fetch", Name: "a.tar.gz", Total: 2048, Out: -1})
	check("one bar", "fetch    a.tar.gz                           [                        ]   0% 0 B/2.0 KiB")
	c.Update("b", Status{Phase: "fetch", Name: "b.sha256sum", Done: 1536, Out: -1})
	clk.add(showAfter)
	log.Info("resuming", "url", "https://x/a.tar.gz")
	check("log line above two bars", "resuming url=https://x/a.tar.gz\n"+
		"fetch    a.tar.gz                           [                        ]   0% 0 B/2.0 KiB\n"+
		"fetch    b.sha256sum                        1.5 KiB")
	clk.add(time.Second)
	c.Update("a", Status{Phase: "fetch", Name: "a.tar.gz", Done: 1024, Total: 2048, Out: -1})
	c.Finish("b")
	log.Warn("evicted a corrupt cache entry", "url", "https://x/b.sha256sum")
	check("finished bar gone", "resuming url=https://x/a.tar.gz\n"+
		"warning: evicted a corrupt cache entry url=https://x/b.sha256sum\n"+
		"fetch    a.tar.gz                           [============            ]  50% 1.0 KiB/2.0 KiB 1s")
	c.Finish("a")
	c.Update("p", Status{Phase: "compress", Name: "pingd_0.9.1-1_amd64.deb", Done: 5 << 20, Out: 1 << 20})
	clk.add(showAfter)
	log.Info("fetched", "url", "https://x/a.tar.gz", "size", int64(2048))
	check("compression bar", "resuming url=https://x/a.tar.gz\n"+
		"warning: evicted a corrupt cache entry url=https://x/b.sha256sum\n"+
		"fetched url=https://x/a.tar.gz size=2.0KiB\n"+
		"compress pingd_0.9.1-1_amd64.deb            5.0 MiB -> 1.0 MiB")
	// A name longer than the terminal is cut, never wrapped.
	c.Update("long", Status{Phase: "fetch", Name: strings.Repeat("n", 300), Done: 1, Total: 9, Out: 1 << 40})
	clk.add(showAfter)
	c.Update("long", Status{Phase: "fetch", Name: strings.Repeat("n", 300), Done: 1, Total: 9, Out: 1 << 40})
	if !strings.Contains(scr.text(), "fetch    nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...") {
		t.Errorf("long name: screen\n%s", scr.text())
	}
	check("long name", "resuming url=https://x/a.tar.gz\n"+
		"warning: evicted a corrupt cache entry url=https://x/b.sha256sum\n"+
		"fetched url=https://x/a.tar.gz size=2.0KiB\n"+
		"compress pingd_0.9.1-1_amd64.deb            5.0 MiB -> 1.0 MiB\n"+
		"fetch    nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn... [==                      ]  11% 1 B/9 B -> 1.0 TiB")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed", "resuming url=https://x/a.tar.gz\n"+
		"warning: evicted a corrupt cache entry url=https://x/b.sha256sum\n"+
		"fetched url=https://x/a.tar.gz size=2.0KiB")
	log.Error("after close")
	c.Update("late", Status{Phase: "fetch", Name: "late"})
	if got := scr.text(); !strings.HasSuffix(got, "\nerror: after close") {
		t.Errorf("a line after Close: screen\n%s", got)
	}
}

// TestProgressIsPaced: progress alone redraws at most every redrawEvery.
func TestProgressIsPaced(t *testing.T) {
	scr, c, clk := terminal(80)
	c.Update("a", Status{Phase: "fetch", Name: "a", Total: 100, Out: -1})
	clk.add(showAfter)
	c.Update("a", Status{Phase: "fetch", Name: "a", Total: 100, Out: -1})
	n := scr.raw.Len()
	for i := range 50 {
		c.Update("a", Status{Phase: "fetch", Name: "a", Done: int64(i), Total: 100, Out: -1})
	}
	if scr.raw.Len() != n {
		t.Errorf("50 updates within %s redrew: %q", redrawEvery, scr.raw.String()[n:])
	}
	clk.add(redrawEvery)
	c.Update("a", Status{Phase: "fetch", Name: "a", Done: 60, Total: 100, Out: -1})
	if !strings.Contains(scr.text(), " 60%") {
		t.Errorf("no redraw after %s: %q", redrawEvery, scr.text())
	}
}

// TestNotATerminal: no escape sequence and no bar, timestamps on the lines,
// the level's filter applied.
func TestNotATerminal(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, Options{Terminal: false, Bars: true, Color: true, Level: slog.LevelWarn,
		Shorts: []Short{{Dir: "/home/u/.cache/updeb", Name: "$CACHE"}, {Dir: "/src/p"}}})
	log := c.Logger()
	c.Update("a", Status{Phase: "fetch", Name: "a", Total: 100})
	log.Info("fetched", "url", "https://x/a")
	log.Warn("evicted a corrupt cache entry", "path", "/home/u/.cache/updeb/sha256/ab/abcd", "via", "mirror file:///src/p/testdata/m/a",
		"other", "/src/px/a", "err", errors.New("x: /src/p/out/y"))
	c.Finish("a")
	c.Close()
	got := out.String()
	if strings.Contains(got, "\x1b") {
		t.Errorf("escape sequence in %q", got)
	}
	re := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ warning: evicted a corrupt cache entry path=\$CACHE/sha256/ab/abcd via="mirror testdata/m/a" other=/src/px/a err="x: out/y"\n$`)
	if !re.MatchString(got) {
		t.Errorf("got %q, want %s", got, re)
	}
	// One line each: a line break in a message (a recipe file's name) is
	// escaped, not a line that reads as a record of its own.
	out.Reset()
	log.Warn("recipes/x\n2026-01-01T00:00:00Z error: forged.yaml left out")
	if got := out.String(); strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, ` warning: recipes/x\n2026-01-01T00:00:00Z error: forged.yaml left out`+"\n") {
		t.Errorf("a line break in a message: %q", got)
	}
}

func TestHumanHandlerGroupsAndAttrs(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, Options{Terminal: true, Level: slog.LevelDebug})
	log := c.Logger().With("recipe", "hello", "arch", "amd64").WithGroup("g")
	log.Debug("spooled", "member", "a b", slog.Group("s", "n", 1), "empty", "")
	want := "debug: spooled recipe=hello arch=amd64 g.member=\"a b\" g.s.n=1 g.empty=\"\"\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	if !c.Logger().Handler().Enabled(context.Background(), slog.LevelDebug) {
		t.Error("debug not enabled at LevelDebug")
	}
}

// TestHumanHandlerEscapes: a message quoting what a server or file said
// (warnings carry error texts) reaches the terminal without its escape
// sequences; attribute values are quoted.
func TestHumanHandlerEscapes(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, Options{Terminal: true, Level: slog.LevelInfo})
	c.Logger().Warn("mirror said \x1b]0;owned\a\x1b[2J\rnothing\nsecond line", "err", errors.New("bad \x1b[31m"))
	want := "warning: mirror said \\x1b]0;owned\\a\\x1b[2J\\rnothing\nsecond line err=\"bad \\x1b[31m\"\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	// A file's name cannot start a line that reads as updeb's error.
	out.Reset()
	c.Logger().Warn("skipped a\nupdeb: error: all good.deb\nsecond line")
	if want := "warning: skipped a\\nupdeb: error: all good.deb\nsecond line\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// TestJSONLogger: one object per record, its time in UTC (RFC 3339, as the
// human format's timestamps), whatever the local zone, and so is a time
// given as an attribute.
func TestJSONLogger(t *testing.T) {
	local := time.Local
	time.Local = time.FixedZone("UTC-5", -5*3600)
	t.Cleanup(func() { time.Local = local })
	var out bytes.Buffer
	c := New(&out, Options{JSON: true})
	// Whole seconds, as the human format's and jq's fromdate's: the record's
	// time carried nanoseconds.
	c.Logger().Info("fetched", "url", "https://x/a", "size", 3, "since", time.Date(2026, 3, 14, 1, 0, 0, 999, time.Local))
	if !regexp.MustCompile(`^\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ","level":"INFO","msg":"fetched","url":"https://x/a","size":3,"since":"2026-03-14T06:00:00Z"\}\n$`).MatchString(out.String()) {
		t.Errorf("got %q", out.String())
	}
	// Bytes that are not UTF-8 (a file's name) are written \xff, as --json
	// writes them, not U+FFFD: two names differing in one stay two.
	out.Reset()
	c.Logger().Warn("skipped a\xff.deb", "file", "a\xfe.deb", "err", errors.New("open a\xfd.deb"))
	if got := out.String(); strings.Contains(got, `\ufffd`) || !strings.Contains(got, `"msg":"skipped a\\xff.deb","file":"a\\xfe.deb","err":"open a\\xfd.deb"`) {
		t.Errorf("got %q", got)
	}
}

// TestConcurrentUse is for the race detector: tasks and log lines from
// several goroutines.
func TestConcurrentUse(t *testing.T) {
	scr, c, clk := terminal(80)
	log := c.Logger()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			id := strconv.Itoa(i)
			for j := range 100 {
				c.Update(id, Status{Phase: "fetch", Name: id, Done: int64(j), Total: 100, Out: -1})
				clk.add(10 * time.Millisecond)
				if j%10 == 0 {
					log.Info("step", "task", id, "j", j)
				}
			}
			c.Finish(id)
		})
	}
	wg.Wait()
	if !strings.Contains(scr.raw.String(), "\x1b[") {
		t.Error("no bar was ever drawn")
	}
	c.Close()
	if n := strings.Count(scr.text(), "\n") + 1; n != 80 {
		t.Errorf("%d rows on the screen, want the 80 log lines:\n%s", n, scr.text())
	}
}

// TestTick: a task that reports nothing still has its time redrawn.
func TestTick(t *testing.T) {
	var mu sync.Mutex
	scr := &screen{width: 80}
	locked := writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return scr.Write(b) })
	c := New(locked, Options{Terminal: true, Bars: true, Tick: 10 * time.Millisecond})
	c.Update("x", Status{Phase: "compress", Name: "x.deb", Done: 1, Out: 0})
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := scr.text()
		mu.Unlock()
		if strings.Contains(got, "compress x.deb") && strings.HasSuffix(got, " 1s") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no redraw with the time after 1s: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Finish("x")
	c.Close()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
