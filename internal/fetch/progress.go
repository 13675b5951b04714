package fetch

import "time"

// progressEvery is how often a download reports progress.
const progressEvery = 100 * time.Millisecond

// Progress is one report about one download, or about the re-hash of a
// cached copy (Cached), which a large file makes long enough to show.
type Progress struct {
	URL      string
	Received int64 // bytes received (or hashed, when Cached)
	Total    int64 // -1 when unknown
	Done     bool
	Err      error // set with Done when the download failed
	Cached   bool  // the cached copy is being re-hashed; nothing is downloaded
}

// ProgressFunc receives progress reports; it is called from several
// goroutines. Every report of a URL but the last has Done false.
type ProgressFunc func(Progress)

func (f *Fetcher) progress(p Progress) {
	if f.o.Progress != nil {
		f.o.Progress(p)
	}
}
