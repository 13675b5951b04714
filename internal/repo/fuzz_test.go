package repo

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzScanPackages: the Packages scanner never panics, and what it accepts
// renders back to stanzas it reads the same.
func FuzzScanPackages(f *testing.F) {
	f.Add(packagesText(3))
	f.Add([]byte("Package: a\nVersion: 1\nArchitecture: all\nFilename: pool/a.deb\nSize: 1\nSHA256: " + string(bytes.Repeat([]byte("a"), 64)) + "\nDescription: x\n y\n"))
	f.Add([]byte("\n\n\nPackage: a\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := scanPackages(data, "Packages", "s", "main")
		if err != nil {
			return
		}
		c := component{}
		for _, e := range entries {
			c[e.key()] = e
		}
		for _, arch := range []string{"all", "amd64"} {
			again, err := scanPackages(c.packagesFor(arch), "rendered", "s", "main")
			if err != nil {
				t.Fatalf("re-reading a rendered index: %v", err)
			}
			for _, e := range again {
				if want := c[e.key()]; !bytes.Equal(e.raw, want.raw) || e.SHA256 != want.SHA256 {
					t.Fatalf("stanza %v changed in a round trip", e.key())
				}
			}
		}
	})
}

// FuzzReadSettings: a settings file never makes readSettings panic, and what
// it accepts is written back to the same settings.
func FuzzReadSettings(f *testing.F) {
	good := defaultSettings("s")
	good.Architectures, good.Components = []string{"amd64"}, []string{"main"}
	f.Add(good.marshal())
	f.Add([]byte(`{"format": 1, "suite": "s", "keep": 1, "valid-for": "-1h"}`))
	f.Add([]byte(`{"format": 1, "suite": "s", "keep": 1, "components": ["../x"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, settingsFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := readSettings(dir, "s", &parsedRelease{})
		if err != nil {
			return
		}
		if err := os.WriteFile(filepath.Join(dir, settingsFile), s.marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := readSettings(dir, "s", &parsedRelease{})
		if err != nil || !reflect.DeepEqual(s, again) {
			t.Fatalf("settings changed in a round trip: %v\n%+v\n%+v", err, s, again)
		}
	})
}

// FuzzReadHistory: a history file never makes readHistory panic.
func FuzzReadHistory(f *testing.F) {
	f.Add([]byte(`{"suite":"s","generation":1,"date":"2026-01-01T00:00:00Z","operation":"publish"}` + "\n"))
	f.Add([]byte(`{"suite":"s","gener`))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		r := Open(root, Options{})
		name := r.historyFile("s")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := r.readHistory("s", 5)
		for _, rec := range recs {
			if err == nil && (rec.Generation < 1 || rec.Generation > 5) {
				t.Fatalf("record of generation %d read with 5 live", rec.Generation)
			}
		}
	})
}
