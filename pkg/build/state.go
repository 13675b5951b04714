package build

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/updeb/updeb/internal/atomicfile"
	"github.com/updeb/updeb/pkg/recipe"
)

// StateDir holds one record per recipe and architecture in the output folder.
const StateDir = ".updeb-state"

type state struct {
	Key     string   `json:"key"`
	Outputs []Output `json:"outputs"`
}

func statePath(out string, plan *recipe.Plan) string {
	return filepath.Join(out, StateDir, plan.Recipe+"_"+plan.Arch+".json")
}

// inputKey digests everything a build's output depends on: the rendered plan
// (URLs, pins, versions, control fields, generated files), the content of the
// recipe-local files and keyrings it uses, updeb's version and the compression.
func inputKey(r *recipe.Recipe, plan *recipe.Plan, opts Options) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	if err := enc.Encode(struct {
		Plan        *recipe.Plan
		Version     string
		Compression string
	}{plan, opts.UpdebVersion, string(opts.Compression)}); err != nil {
		return "", err
	}
	for _, f := range plan.LocalFiles() {
		io.WriteString(h, "\x00"+f+"\x00")
		fh, err := os.Open(f)
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

// upToDate reports whether the state record matches key and every recorded
// output still exists with its recorded size and sha256 (re-hashed: a package
// damaged or replaced on disk is rebuilt).
func upToDate(path, key, out string) ([]Output, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var st state
	if json.Unmarshal(data, &st) != nil || st.Key != key || len(st.Outputs) == 0 {
		return nil, false
	}
	for _, o := range st.Outputs {
		f, err := os.Open(filepath.Join(out, o.File))
		if err != nil {
			return nil, false
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil || n != o.Size || hex.EncodeToString(h.Sum(nil)) != o.SHA256 {
			return nil, false
		}
		if _, err := os.Stat(filepath.Join(out, o.File+ProvenanceSuffix)); err != nil {
			return nil, false
		}
	}
	return st.Outputs, true
}

func saveState(path, key string, outs []Output) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(state{Key: key, Outputs: outs}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o644)
}
