package systemdunit

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

func TestParse(t *testing.T) {
	u, problems := Parse([]byte("# comment\n; another\n[Unit]\nDescription = a \\\n  # skipped\n  b\n[Service]\nExecStart=/usr/bin/x\nEnvironmentFile=/a\nEnvironmentFile=\nEnvironmentFile=-/b\n"))
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	if d, _ := u.Last("Unit", "Description"); d.Value != "a  b" || d.Line != 4 {
		t.Errorf("Description = %+v, want the continued value at line 4", d)
	}
	if env := u.Values("Service", "EnvironmentFile"); len(env) != 1 || env[0].Value != "-/b" {
		t.Errorf("EnvironmentFile = %+v, want the one after the reset", env)
	}
}

func TestSplitCommands(t *testing.T) {
	for value, want := range map[string][]Command{
		`/usr/bin/x $ARGS`:                   {{"", []string{"/usr/bin/x", "$ARGS"}}},
		`-/sbin/modprobe overlay`:            {{"-", []string{"/sbin/modprobe", "overlay"}}},
		`+@/usr/bin/x name "a b" 'c\'d'`:     {{"+@", []string{"/usr/bin/x", "a b", "c'd"}}},
		`/bin/a ; !!/bin/b x`:                {{"", []string{"/bin/a"}}, {"!!", []string{"/bin/b", "x"}}},
		`"/usr/bin/with space" --flag=\"x\"`: {{"", []string{"/usr/bin/with space", `--flag="x"`}}},
	} {
		got, err := SplitCommands(value)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitCommands(%q) = %q, %v; want %q", value, got, err, want)
		}
	}
	for _, bad := range []string{`/usr/bin/x "a`, `/usr/bin/x 'a`, `/usr/bin/x \`} {
		if _, err := SplitCommands(bad); err == nil {
			t.Errorf("SplitCommands(%q): no error", bad)
		}
	}
}

// TestProblemsAreSystemds: every unit Parse and Check find a problem in,
// systemd-analyze verify warns about at that line, and the clean one it
// passes without a word.
func TestProblemsAreSystemds(t *testing.T) {
	testenv.RequireTool(t, "systemd-analyze")
	for name, text := range map[string]string{
		"clean.service":    "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true \\\n  a\n[Install]\nWantedBy=multi-user.target\n",
		"nokey.service":    "[Unit]\nDescription=x\nbogus line\n[Service]\nExecStart=/bin/true\n",
		"section.service":  "[Unit]\nDescription=x\n[Servce]\nExecStart=/bin/true\n[Service]\nExecStart=/bin/true\n",
		"key.service":      "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\nUsr=root\n",
		"outside.service":  "Description=x\n[Service]\nExecStart=/bin/true\n",
		"include.service":  ".include /etc/x.service\n[Service]\nExecStart=/bin/true\n",
		"timerkey.timer":   "[Timer]\nOnCalendar=daily\nExecStart=/bin/true\n",
		"wrongtype.socket": "[Socket]\nListenStream=/run/x.sock\n[Service]\nExecStart=/bin/true\n",
	} {
		t.Run(name, func(t *testing.T) {
			u, problems := Parse([]byte(text))
			problems = append(problems, u.Check(Type(name))...)
			root := t.TempDir()
			dir := filepath.Join(root, "etc/systemd/system")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(name, ".socket") || strings.HasSuffix(name, ".timer") {
				// the unit a socket or timer starts
				svc := strings.TrimSuffix(strings.TrimSuffix(name, ".socket"), ".timer") + ".service"
				if err := os.WriteFile(filepath.Join(dir, svc), []byte("[Service]\nExecStart=/bin/true\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, _ := exec.Command("systemd-analyze", "verify", "--man=no", "--root="+root, name).CombinedOutput()
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if strings.Contains(l, "/"+name+":") { // the lines about the file, at a line of it
					lines = append(lines, l)
				}
			}
			if len(lines) != len(problems) {
				t.Fatalf("systemd-analyze verify says\n%s\nParse and Check found %v", out, problems)
			}
			for i, p := range problems {
				if !strings.Contains(lines[i], "/"+name+":"+strconv.Itoa(p.Line)+":") {
					t.Errorf("problem %v is not at the line systemd names: %s", p, lines[i])
				}
			}
		})
	}
}

// TestItemsAreSystemds: the table of sections and keys is systemd 252's
// (the host's, a Debian 12 with systemd installed): copy the output of
// --dump-configuration-items over systemd252.items when systemd changes.
func TestItemsAreSystemds(t *testing.T) {
	testenv.RequireTool(t, "systemd-analyze")
	out, err := exec.Command("/usr/lib/systemd/systemd", "--dump-configuration-items").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != items252 {
		t.Errorf("systemd252.items is not the host systemd's --dump-configuration-items")
	}
	if n := len(keySets["Service"]); n < 200 || !keySets["Service"]["ExecStart"] || !keySets["Install"]["WantedBy"] {
		t.Errorf("keySets has %d keys of [Service], ExecStart=: %v, WantedBy= of [Install]: %v", n, keySets["Service"]["ExecStart"], keySets["Install"]["WantedBy"])
	}
}

// FuzzParse: any input parses without a panic, in time linear in its size,
// and every problem has a position within the input.
func FuzzParse(f *testing.F) {
	f.Add([]byte("[Unit]\nDescription=x\n[Service]\nExecStart=-/bin/a \"b c\" \\\n d\n"))
	f.Add([]byte("a\\\n\\\n\\"))
	f.Add([]byte("[\n]\n=\n[X-a]\nb=c"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, problems := Parse(data)
		n := strings.Count(string(data), "\n") + 1
		for _, p := range append(problems, u.Check("service")...) {
			if p.Line < 1 || p.Line > n || p.Col < 1 || p.Message == "" {
				t.Fatalf("problem without a position in the input: %+v", p)
			}
		}
		for _, s := range u.Sections {
			for _, e := range s.Entries {
				SplitCommands(e.Value) //nolint:errcheck // only that it ends
			}
		}
	})
}
