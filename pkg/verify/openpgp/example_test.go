package openpgp_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/verify/openpgp"
)

// Check a detached signature over a release artifact with a keyring and an
// allow-list of signers; the same pass hashes the data.
func ExampleVerifyDetached() {
	const dir = "../../../testdata/demo/"
	kr, err := openpgp.LoadKeyring(dir + "keys/demo-upstream.asc")
	if err != nil {
		panic(err)
	}
	release := dir + "mirror/releases.example.org/hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz"
	sig, err := os.Open(release + ".asc")
	if err != nil {
		panic(err)
	}
	defer sig.Close()
	data, err := os.Open(release)
	if err != nil {
		panic(err)
	}
	defer data.Close()
	pol := openpgp.Policy{
		Signers: []string{"BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B"},
		Now:     time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	}
	res, err := openpgp.VerifyDetached(kr, pol, sig, data)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.PrimaryFingerprint, res.Hash)
	fmt.Println(res.Digests["sha256"])

	// The same signature over other bytes is refused, and says why.
	sig.Seek(0, 0)
	_, err = openpgp.VerifyDetached(kr, pol, sig, strings.NewReader("other bytes"))
	var re *openpgp.RefusedError
	fmt.Println(errors.As(err, &re), re.Has(openpgp.ReasonBadSignature), errors.Is(err, openpgp.ErrSignature))
	// Output:
	// BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B SHA-256
	// 019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e
	// true true true
}
