package sigstore_test

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// Verify a Sigstore bundle offline against the bundled public-good trusted
// root. The digest is the artifact's, computed while it was downloaded.
func ExampleVerifier_VerifyBundle() {
	root, err := sigstore.PublicGood()
	if err != nil {
		panic(err)
	}
	v, err := sigstore.New(root, sigstore.Options{})
	if err != nil {
		panic(err)
	}
	bundle, err := os.ReadFile("testdata/oci-attestation.sigstore.json")
	if err != nil {
		panic(err)
	}
	artifact := digest.Set{digest.SHA256: "732112270d7e59418a8c080b134b24cabd67d250d0d0147a97ed95ba5c280aa4"}
	// The attestation is of cosign's own predicate type: by default only
	// SLSA provenance counts.
	policy := sigstore.Policy{Identity: "cody@soyland.com", Issuer: "https://github.com/login/oauth",
		PredicateTypes: []string{"https://cosign.sigstore.dev/attestation/v1"}}
	res, err := v.VerifyBundle(context.Background(), policy, artifact, bundle, "oci-attestation.sigstore.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Identity, res.Issuer)
	fmt.Println(res.LogURL, res.LogIndex, res.IntegratedTime)

	policy.Identity = "someone@example.com"
	_, err = v.VerifyBundle(context.Background(), policy, artifact, bundle, "oci-attestation.sigstore.json")
	fmt.Println(err)
	// Output:
	// cody@soyland.com https://github.com/login/oauth
	// https://rekor.sigstore.dev 175508996 2025-02-28 19:18:11 +0000 UTC
	// sigstore verification refused for oci-attestation.sigstore.json: certificate identity "cody@soyland.com", want "someone@example.com" (issuer https://github.com/login/oauth)
}

// Verify a Kubernetes release file's cosign signature: the .sig and .cert
// published beside it, and its Rekor entry fetched through the proxy.
func ExampleVerifier_VerifyDetached() {
	root, err := sigstore.LoadTrustedRoot("/var/lib/updeb/sigstore/trusted_root.json") // as stored after sigstore.Refresh
	if err != nil {
		root, err = sigstore.PublicGood()
	}
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	v, err := sigstore.New(root, sigstore.Options{HTTPClient: client})
	if err != nil {
		panic(err)
	}
	sig, _ := os.ReadFile("kubectl.sig")
	cert, _ := os.ReadFile("kubectl.cert")
	artifact := digest.Set{digest.SHA256: "..."} // computed while downloading kubectl
	res, err := v.VerifyDetached(context.Background(),
		sigstore.Policy{Identity: "krel-staging@k8s-releng-prod.iam.gserviceaccount.com", Issuer: "https://accounts.google.com"},
		artifact, sigstore.Detached{Signature: sig, SignatureSource: "kubectl.sig", Certificate: cert, CertificateSource: "kubectl.cert"})
	if err != nil {
		fmt.Println(err) // a *sigstore.RefusedError, or a *sigstore.FetchError when Rekor could not be asked
		return
	}
	fmt.Println("signed by", res.Identity, "logged at index", res.LogIndex, res.Source)
}
