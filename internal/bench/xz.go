package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// onePackageSize is the size of the "one amd64 package" payload: most of
// updeb's packages are one or a few Go binaries of about this size.
const onePackageSize = 30 << 20

// benchXZ compares pkg/deb's xz modes with dpkg-deb -Zxz and with xz -6, and
// its zstd with dpkg-deb -Zzstd, on two payloads: the largest amd64 binaries of the payload up to about 30 MiB
// (one package: one or two blocks), and the whole payload (many blocks).
// data.tar is the same tar in the xz rows (GNU tar of the tree); dpkg-deb and
// pkg/deb write it themselves.
func benchXZ(work string) ([]row, error) {
	dir, _, err := payload()
	if err != nil {
		return nil, err
	}
	small, err := largestBinaries(filepath.Join(dir, "amd64"), onePackageSize)
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, p := range []struct {
		name  string
		files []string // relative to dir; nil: all
	}{{"one amd64 package", small}, {"whole payload", nil}} {
		sub := filepath.Join(work, fmt.Sprintf("p%d", len(rows)))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return nil, err
		}
		tree, err := stageTreeFiles(sub, dir, p.files)
		if err != nil {
			return nil, err
		}
		r, err := benchXZPayload(sub, tree, p.name)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

// largestBinaries returns the paths (relative to the payload's root, under
// amd64/) of the largest files in dir, largest first, while their total stays
// within limit (at least one).
func largestBinaries(dir string, limit int64) ([]string, error) {
	files, err := payloadFiles(dir)
	if err != nil {
		return nil, err
	}
	sizes := map[string]int64{}
	for _, f := range files {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		sizes[f] = st.Size()
	}
	sort.Slice(files, func(i, j int) bool {
		return sizes[files[i]] > sizes[files[j]] || sizes[files[i]] == sizes[files[j]] && files[i] < files[j]
	})
	var out []string
	var total int64
	for _, f := range files {
		if len(out) > 0 && total+sizes[f] > limit {
			continue
		}
		out = append(out, filepath.Join("amd64", f))
		total += sizes[f]
	}
	return out, nil
}

// stageTreeFiles is stageTree for some files of the payload (nil: all).
func stageTreeFiles(work, payloadDir string, files []string) (string, error) {
	if files == nil {
		return stageTree(work, payloadDir)
	}
	sel := filepath.Join(work, "selected")
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sel, f)), 0o755); err != nil {
			return "", err
		}
		if err := os.Link(filepath.Join(payloadDir, f), filepath.Join(sel, f)); err != nil {
			return "", err
		}
	}
	return stageTree(work, sel)
}

// benchXZPayload measures one payload: dpkg-deb -Zxz is the reference of
// the xz rows, dpkg-deb -Zzstd of the zstd rows.
func benchXZPayload(work, tree, name string) ([]row, error) {
	var rows []row
	ref := "dpkg-deb -Zxz, " + name
	add := func(label, out string, cmd *exec.Cmd) error {
		if cmd.Stdout == nil {
			cmd.Stdout = io.Discard
		}
		r, err := measure(label+", "+name, cmd)
		if err != nil {
			return err
		}
		if r.outSize, err = fileSize(out); err != nil {
			return err
		}
		if r.name != ref {
			r.ref = ref
		}
		rows = append(rows, r)
		return nil
	}
	out := filepath.Join(work, "dpkg.deb")
	cmd := exec.Command("dpkg-deb", "--root-owner-group", "-Zxz", "--build", tree, out)
	cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
	if err := add("dpkg-deb -Zxz", out, cmd); err != nil {
		return nil, err
	}
	for _, mode := range []string{"fast", "best"} {
		out := filepath.Join(work, "updeb-"+mode+".deb")
		cmd, err := self("deb-write", tree, out, "xz", mode)
		if err != nil {
			return nil, err
		}
		cmd.Env = append(os.Environ(), updebMemLimit)
		if err := add("updeb xz "+mode, out, cmd); err != nil {
			return nil, err
		}
	}
	ref = "dpkg-deb -Zzstd, " + name
	out = filepath.Join(work, "dpkg-zstd.deb")
	cmd = exec.Command("dpkg-deb", "--root-owner-group", "-Zzstd", "--build", tree, out)
	cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
	if err := add("dpkg-deb -Zzstd", out, cmd); err != nil {
		return nil, err
	}
	out = filepath.Join(work, "updeb-zstd.deb")
	cmd, err := self("deb-write", tree, out, "zstd")
	if err != nil {
		return nil, err
	}
	cmd.Env = append(os.Environ(), updebMemLimit)
	if err := add("updeb zstd", out, cmd); err != nil {
		return nil, err
	}
	ref = "dpkg-deb -Zxz, " + name
	dataTar := filepath.Join(work, "data.tar")
	tarCmd := exec.Command("tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--exclude=./DEBIAN", "-cf", dataTar, "-C", tree, ".")
	if b, err := tarCmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tar: %v\n%s", err, b)
	}
	defer os.Remove(dataTar)
	for _, threads := range []string{"-T1", "-T2"} {
		out := filepath.Join(work, "data.tar"+threads+".xz")
		f, err := os.Create(out)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command("xz", "-6", threads, "-c", dataTar)
		cmd.Stdout = f
		err = add("xz -6 "+threads+" (data.tar)", out, cmd)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}
