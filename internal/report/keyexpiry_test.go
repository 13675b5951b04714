package report

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/control"
)

// TestSigningKeyExpiry: a repository whose suites gpg-made keys signed on
// 2026-11-20: the report of 2026-12-01 names the key that has expired since
// (violation: apt refuses the suite) and those expiring within 30 days, the
// primary key's expiry or its signing subkey's when that comes first
// (action), saying what to do; the metrics give each key's expiry, which
// promtool takes, and leave out a key that never expires.
func TestSigningKeyExpiry(t *testing.T) {
	promtool := testenv.RequireTool(t, "promtool", "dpkg-deb")[0]
	s := pgptest.NewSigner(t)
	faked := func(at string) string { return "--faked-system-time=" + at + "!" }
	root, dir := filepath.Join(t.TempDir(), "apt"), t.TempDir()
	deb := filepath.Join(dir, "app_1_amd64.deb")
	tree := filepath.Join(dir, "tree")
	ctl := "Package: app\nVersion: 1\nArchitecture: amd64\nMaintainer: T <t@example.org>\nDescription: app\n"
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, deb)
	para, err := control.ParseOne(strings.NewReader(ctl), deb)
	if err != nil {
		t.Fatal(err)
	}
	fprs := map[string]string{}
	for _, k := range []struct{ suite, usage, expire, sub string }{
		{"expired", "sign,cert", "25d", ""}, // 2026-11-26
		{"soon", "sign,cert", "45d", ""},    // 2026-12-16
		{"subkey", "cert", "2y", "40d"},     // the subkey: 2026-12-11
		{"never", "sign,cert", "never", ""},
	} {
		uid := k.suite + " <" + k.suite + "@example.org>"
		s.GPG(faked("20261101T000000"), "--quick-gen-key", uid, "ed25519", k.usage, k.expire)
		if k.sub != "" {
			fpr := strings.Fields(strings.Split(s.GPG("--with-colons", "--list-keys", uid), "fpr:::::::::")[1])[0]
			s.GPG(faked("20261101T000000"), "--quick-add-key", strings.TrimSuffix(fpr, ":"), "ed25519", "sign", k.sub)
		}
		signer, err := repo.ReadSigner(strings.NewReader(s.GPG("--armor", "--export-secret-keys", uid)), uid)
		if err != nil {
			t.Fatal(err)
		}
		fprs[k.suite] = signer.Fingerprints()[0]
		r := repo.Open(root, repo.Options{Signer: signer, Settings: repo.SettingsChange{Architectures: []string{"amd64"}},
			Now: func() time.Time { return time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC) }, Logger: slog.New(slog.DiscardHandler)})
		if _, err := r.Publish(context.Background(), k.suite, "main", []repo.Package{{Path: deb, Control: para}}); err != nil {
			t.Fatal(err)
		}
	}
	suites, err := repo.Open(root, repo.Options{}).Suites()
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(Inputs{Now: now, Plan: &plan.Plan{}, Compat: &compat.Report{}, Repository: &RepositoryInputs{Path: root, Suites: suites}})

	renew := "extend its expiry (gpg --quick-set-expire FINGERPRINT 1y"
	wantReasons := []string{
		"suite expired's signing key " + fprs["expired"] + " expired on 2026-11-26T00:00:00Z: apt refuses the suite (EXPKEYSIG); " + renew,
		"suite soon's signing key " + fprs["soon"] + " expires on 2026-12-16T00:00:00Z, and apt refuses the suite from then on (EXPKEYSIG): " + renew,
		"suite subkey's signing key " + fprs["subkey"] + " expires on 2026-12-11T00:00:00Z, and apt refuses the suite from then on (EXPKEYSIG): " + renew,
	}
	if rep.Verdict.Level != LevelViolation || !strings.HasPrefix(rep.Verdict.Text, "VIOLATION: "+wantReasons[0]) || len(rep.Verdict.Reasons) != 3 {
		t.Errorf("verdict %+v", rep.Verdict)
	}
	for i, want := range wantReasons {
		if i < len(rep.Verdict.Reasons) && !strings.HasPrefix(rep.Verdict.Reasons[i], want) {
			t.Errorf("reason %d: %q, want it to start %q", i, rep.Verdict.Reasons[i], want)
		}
	}

	m := Metrics(rep, Run{OK: true})
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(m)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\n%s", err, out, m)
	}
	for suite, days := range map[string]int{"expired": -5, "soon": 15, "subkey": 10} {
		expiry := now.Add(time.Duration(days)*24*time.Hour - 6*time.Hour) // now is 06:00, keys end at midnight
		for _, want := range []string{
			fmt.Sprintf(`updeb_release_signing_key_expiry_timestamp_seconds{suite=%q,fingerprint=%q} %d`+"\n", suite, fprs[suite], expiry.Unix()),
			fmt.Sprintf(`updeb_release_signing_key_remaining_seconds{suite=%q,fingerprint=%q} %d`+"\n", suite, fprs[suite], int64(expiry.Sub(now)/time.Second)),
		} {
			if !bytes.Contains(m, []byte(want)) {
				t.Errorf("metrics lack %q:\n%s", want, m)
			}
		}
	}
	if bytes.Contains(m, []byte(fprs["never"])) {
		t.Errorf("a key that never expires has a sample:\n%s", m)
	}

	var page bytes.Buffer
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<td class="state-expired">` + fprs["expired"] + " EXPIRED on 2026-11-26T00:00:00Z: apt refuses the suite</td>",
		`<td class="state-expires-soon">` + fprs["soon"] + " expires in 14 days: extend it or rotate</td>",
		`<td class="state-valid">` + fprs["never"] + " (no expiry)</td>",
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
