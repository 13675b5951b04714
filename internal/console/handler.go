package console

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/updeb/updeb/pkg/termtext"
)

// Logger returns the logger that writes through c: JSON objects with
// Options.JSON, else the human format (see humanHandler).
func (c *Console) Logger() *slog.Logger {
	if c.o.JSON {
		return slog.New(JSONHandler(c, c.o.Level))
	}
	return slog.New(&humanHandler{c: c})
}

// JSONHandler writes one JSON object per record to w (slog's JSONHandler),
// its times in UTC and whole seconds, as the human format's timestamps and
// every time of updeb's JSON (2026-11-24T05:52:26Z, which jq's fromdate
// reads): the "time" of each record and any time given as an attribute. A
// nil level is info.
func JSONHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		switch a.Value.Kind() {
		case slog.KindTime:
			a.Value = slog.TimeValue(a.Value.Time().UTC().Truncate(time.Second))
		case slog.KindString: // the message too
			a.Value = slog.StringValue(termtext.EscapeInvalid(a.Value.String()))
		case slog.KindAny:
			if err, ok := a.Value.Any().(error); ok {
				a.Value = slog.StringValue(termtext.EscapeInvalid(err.Error()))
			}
		}
		return a
	}})
}

// EscapeLines is termtext.EscapeLines for updeb's stderr: a line break that
// would start a line of updeb's own ("updeb: error:", "updeb: hint:") is
// written \n too, so that a file's name or a server's message quoted in an
// error or a warning ("a\nupdeb: error: all good.deb") cannot make a script
// or a reader take it for another error or hint. updeb's own lines after the
// first (one per recipe, an indented list) never start so.
func EscapeLines(s string) string {
	return strings.ReplaceAll(termtext.EscapeLines(s), "\nupdeb:", `\nupdeb:`)
}

// humanHandler writes one line per record:
//
//	[TIME ]LEVEL: MESSAGE key=value ...
//
// TIME (RFC 3339, UTC) only when the writer is not a terminal (a log file
// wants it, a person watching does not); no "info:" for the common level.
// Paths below the Options.Shorts folders are shortened (the working folder's
// relative, the cache's as $CACHE/...); a "size" given as a number of bytes
// is shown as 3.1MiB. Values with spaces or quotes are quoted as Go strings.
type humanHandler struct {
	c      *Console
	attrs  string // preformatted " key=value" of WithAttrs
	prefix string // group prefix for keys: "g1.g2."
}

func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.c.o.Level.Level()
}

func (h *humanHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	for _, a := range as {
		h.appendAttr(&b, h.prefix, a)
	}
	return &humanHandler{c: h.c, attrs: h.attrs + b.String(), prefix: h.prefix}
}

func (h *humanHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &humanHandler{c: h.c, attrs: h.attrs, prefix: h.prefix + name + "."}
}

func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	if !h.c.o.Terminal && !r.Time.IsZero() {
		b.WriteString(r.Time.UTC().Format(time.RFC3339) + " ")
	}
	b.WriteString(h.level(r.Level))
	// Elsewhere than on a terminal (a log file, the journal) a record is one
	// line: a line break in its message (a file's name) would start a line
	// that reads as a record of its own.
	esc := EscapeLines
	if !h.c.o.Terminal {
		esc = termtext.Escape
	}
	b.WriteString(esc(h.c.shorten(r.Message)))
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		h.appendAttr(&b, h.prefix, a)
		return true
	})
	b.WriteByte('\n')
	_, err := h.c.Write([]byte(b.String()))
	return err
}

// level is the line's lead: nothing for info, else "warning: " and so on,
// coloured on a colour terminal.
func (h *humanHandler) level(l slog.Level) string {
	var word, color string
	switch {
	case l >= slog.LevelError:
		word, color = "error", "\x1b[31m"
	case l >= slog.LevelWarn:
		word, color = "warning", "\x1b[33m"
	case l >= slog.LevelInfo:
		return ""
	default:
		word, color = "debug", "\x1b[2m"
	}
	if h.c.o.Color {
		return color + word + ":\x1b[0m "
	}
	return word + ": "
}

func (h *humanHandler) appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			h.appendAttr(b, p, g)
		}
		return
	}
	var v string
	switch {
	case a.Key == "size" && (a.Value.Kind() == slog.KindInt64 || a.Value.Kind() == slog.KindUint64):
		n := a.Value.Int64()
		if a.Value.Kind() == slog.KindUint64 {
			n = int64(a.Value.Uint64())
		}
		v = strings.ReplaceAll(Bytes(n), " ", "")
	case a.Value.Kind() == slog.KindString || a.Value.Kind() == slog.KindAny:
		v = h.c.shorten(a.Value.String())
	default:
		v = a.Value.String()
	}
	b.WriteString(" " + prefix + a.Key + "=" + quote(v))
}

// quote quotes v when it is empty or holds spaces, quotes or control characters.
func quote(v string) string {
	if v == "" {
		return `""`
	}
	for _, r := range v {
		if unicode.IsSpace(r) || r == '"' || r == '=' || !unicode.IsPrint(r) {
			return strconv.Quote(v)
		}
	}
	return v
}

// shorten rewrites the paths below the Shorts folders in s: file URLs and
// plain absolute paths, where a path starts (the start of s, or after a
// space, "=", "(" or a quote).
func (c *Console) shorten(s string) string {
	c.mu.Lock()
	shorts := c.o.Shorts
	c.mu.Unlock()
	for _, sh := range shorts {
		if sh.Dir == "" || sh.Dir == "/" || !strings.Contains(s, sh.Dir) {
			continue
		}
		repl := ""
		if sh.Name != "" {
			repl = sh.Name + "/"
		}
		s = strings.ReplaceAll(s, "file://"+sh.Dir+"/", repl)
		s = replaceAtStart(s, sh.Dir+"/", repl)
	}
	return s
}

// replaceAtStart replaces old with new where old starts s or follows a
// separator, so that /a/b is not rewritten inside /x/a/b.
func replaceAtStart(s, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if i == 0 || strings.ContainsRune(" =(\"'\t", rune(s[i-1])) {
			b.WriteString(new)
		} else {
			b.WriteString(old)
		}
		s = s[i+len(old):]
	}
}
