package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/deb"
)

// StateDir holds one record per recipe and architecture in the output folder.
const StateDir = ".updeb-state"

// maxStateFile bounds a state record or commit journal (a few KiB each).
const maxStateFile = 16 << 20

type state struct {
	Key     string              `json:"key"`
	Outputs []Output            `json:"outputs"`
	Stats   map[string]fileStat `json:"stats"` // by Output.File, as written
	// Records holds the recordBody of each provenance record as the build
	// wrote it, by Output.File: refreshProvenance re-signs no other.
	Records map[string]string `json:"records,omitempty"`
}

func statePath(out string, plan *recipe.Resolved) string {
	return filepath.Join(out, StateDir, stateFileName(plan.Recipe+"_"+plan.Arch, ".json"))
}

// stateFileName is base+suffix, the name of a file StateDir keeps for a
// recipe. A recipe's name has no length limit and a file's has: a name
// that would be longer keeps the first bytes of base and a digest of the
// whole (recipe names are ASCII), so that the recipe builds and each
// name has its own file.
func stateFileName(base, suffix string) string {
	if len(base)+len(suffix) <= deb.MaxFileName {
		return base + suffix
	}
	sum := sha256.Sum256([]byte(base))
	id := hex.EncodeToString(sum[:16])
	return base[:deb.MaxFileName-len(suffix)-len(id)-1] + "-" + id + suffix
}

// inputKey digests everything a build's output depends on: the rendered plan
// (URLs, pins, versions, control fields, generated files), the content of the
// recipe-local files and keyrings it uses, updeb's version and the compression
// (with the xz mode, when not the default).
func inputKey(r *recipe.Recipe, plan *recipe.Resolved, opts Options) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	xzMode := opts.XZMode
	if xzMode == deb.XZFast {
		xzMode = ""
	}
	if err := enc.Encode(struct {
		Plan        *recipe.Resolved
		Version     string
		Compression string
		XZMode      string `json:",omitempty"`
	}{plan, opts.UpdebVersion, string(opts.Compression), string(xzMode)}); err != nil {
		return "", err
	}
	for _, f := range plan.LocalFiles() {
		io.WriteString(h, "\x00"+f+"\x00")
		fh, _, err := r.OpenLocal(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileStat is what a no-op check compares instead of re-hashing, as git's
// index does: a file whose size, mtime, ctime and inode are unchanged is taken
// to hold the bytes hashed when the stat was recorded. Writing new content
// into a file changes its mtime and ctime (and usually its size); replacing
// it changes the inode.
type fileStat struct {
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime_ns"`
	CTime int64  `json:"ctime_ns"`
	Inode uint64 `json:"inode"`
}

func statOf(path string) (fileStat, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}, err
	}
	st := fileStat{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Inode = sys.Ino
		st.CTime = int64(sys.Ctim.Sec)*1e9 + int64(sys.Ctim.Nsec) // int32 fields on 32-bit Linux
	}
	return st, nil
}

// upToDate reports whether the state record matches key and every recorded
// output (and its provenance record) is still there unchanged. An output whose
// stat differs from the recorded one is re-hashed: same bytes (touched,
// copied back) keep it up to date, and the record gets the new stat; other
// bytes (damaged, replaced) mean a rebuild. It also returns the records'
// bodies (state.Records).
func upToDate(path, key, out string) ([]Output, map[string]string, bool) {
	data, err := confined.ReadFile(path, maxStateFile)
	if err != nil {
		return nil, nil, false
	}
	var st state
	if json.Unmarshal(data, &st) != nil || st.Key != key || len(st.Outputs) == 0 {
		return nil, nil, false
	}
	refreshed := false
	for _, o := range st.Outputs {
		p := filepath.Join(out, o.File)
		now, err := statOf(p)
		if err != nil {
			return nil, nil, false
		}
		if now != st.Stats[o.File] {
			if !sameContent(p, o) {
				return nil, nil, false
			}
			if st.Stats == nil {
				st.Stats = map[string]fileStat{}
			}
			st.Stats[o.File], refreshed = now, true
		}
		if _, err := os.Stat(p + ProvenanceSuffix); err != nil {
			return nil, nil, false
		}
	}
	if refreshed {
		// Best effort: a failure only means hashing again next time.
		writeState(path, st)
	}
	return st.Outputs, st.Records, true
}

// sameContent re-hashes an output against its record.
func sameContent(p string, o Output) bool {
	f, _, err := confined.OpenFile(p)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return err == nil && n == o.Size && hex.EncodeToString(h.Sum(nil)) == o.SHA256
}

// saveState records key, the outputs and their stat, and the bodies of
// their provenance records after a build.
func saveState(path, key, out string, outs []Output, records map[string]string) error {
	st := state{Key: key, Outputs: outs, Stats: map[string]fileStat{}, Records: records}
	for _, o := range outs {
		fs, err := statOf(filepath.Join(out, o.File))
		if err != nil {
			return err
		}
		st.Stats[o.File] = fs
	}
	return writeState(path, st)
}

func writeState(path string, st state) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o644)
}
