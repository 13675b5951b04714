package sigstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/bundle"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/strictjson"
)

// maxBundleSize caps a bundle: real ones are under 100 KB, SLSA provenance
// included.
const maxBundleSize = 16 << 20

// VerifyBundle checks a Sigstore bundle (.sigstore.json, .bundle; media types
// v0.1 to v0.3) for the artifact whose digests are given (the artifact itself
// is never needed: a digest passed in, e.g. sha256:HEX, is as good), offline:
// with the transparency-log entry it carries (required when the trusted root
// lists a log) and its RFC 3161 timestamps (required to verify when the root
// lists their authority). A message-signature bundle must sign one of the
// given digests; a DSSE bundle's in-toto statement must name one among its
// subjects. The Policy names a certificate identity and issuer, or pins the
// public key of a key-signed bundle. source names the bundle (file or URL) in
// messages. ctx is only checked for cancellation.
func (v *Verifier) VerifyBundle(ctx context.Context, pol Policy, artifact digest.Set, bundleJSON []byte, source string) (*Result, error) {
	if err := v.trusted(); err != nil {
		return nil, err
	}
	id, err := pol.compile()
	if err != nil {
		return nil, err
	}
	if len(artifact) == 0 {
		return nil, fmt.Errorf("%w: no artifact digest", ErrPolicy)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, r := parseBundle(bundleJSON)
	if r != nil {
		r.Source = source
		return nil, &RefusedError{Subject: source, Refusals: []Refusal{*r}}
	}
	res, r := v.verifyEntity(source, b, id, artifact, false)
	if r != nil {
		return nil, &RefusedError{Subject: source, Refusals: []Refusal{*r}}
	}
	res.Shape = ShapeBundle
	res.Bundle = bytes.Clone(bundleJSON)
	return res, nil
}

// parseBundle loads a bundle's JSON with sigstore-go's validation (media type,
// inclusion proof or promise as the version requires).
func parseBundle(b []byte) (*bundle.Bundle, *Refusal) {
	if len(b) > maxBundleSize {
		return nil, &Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("larger than %d bytes: not a Sigstore bundle", maxBundleSize)}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, &Refusal{Reason: ReasonMalformed, Detail: "empty bundle"}
	}
	var bd bundle.Bundle
	if err := bd.UnmarshalJSON(b); err != nil {
		if errors.Is(err, bundle.ErrUnsupportedMediaType) {
			return nil, &Refusal{Reason: ReasonUnsupported, Detail: fmt.Sprintf("not a bundle version this package verifies (v0.1 to v0.3): %v", err)}
		}
		var legacy struct {
			Sig    *string         `json:"base64Signature"`
			Rekor  json.RawMessage `json:"rekorBundle"`
			Format json.RawMessage `json:"mediaType"`
		}
		if json.Unmarshal(b, &legacy) == nil && legacy.Sig != nil && legacy.Rekor != nil && legacy.Format == nil {
			return nil, &Refusal{Reason: ReasonUnsupported, Detail: "this is cosign's own bundle format (base64Signature, cert, rekorBundle: cosign sign-blob --bundle without --new-bundle-format), not a Sigstore bundle: " +
				"its signature and certificate verify as cosign's detached form (--sig and --cert; a recipe's sig-url and cert-url) where upstream publishes them apart, or ask upstream for a Sigstore bundle (cosign --new-bundle-format)"}
		}
		return nil, &Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("not a valid Sigstore bundle: %v", err)}
	}
	// The in-toto statement a DSSE bundle signs is read by sigstore-go with
	// encoding/json (the last of a key given twice wins, keys match in any
	// case) where other readers read it otherwise: one reading only
	// (strictjson), before anything else is believed of it.
	if env := bd.GetDsseEnvelope(); env != nil && strings.EqualFold(env.GetPayloadType(), bundle.IntotoMediaType) {
		if err := strictjson.Check(env.GetPayload()); err != nil {
			return nil, &Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("the in-toto statement the bundle signs is not one reading of JSON: %v", err)}
		}
		// sigstore-go reads any statement as v1, whatever its _type: a
		// statement of another type, or of none, does not say what v1 says.
		var stmt struct {
			Type *string `json:"_type"`
		}
		if err := strictjson.Unmarshal(env.GetPayload(), &stmt); err != nil {
			return nil, &Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("the in-toto statement the bundle signs: %v", err)}
		}
		if stmt.Type == nil {
			return nil, &Refusal{Reason: ReasonStatementType, Detail: "the in-toto statement the bundle signs names no _type: only " + statementV1 + " and " + statementV01 + " statements are read"}
		}
		if *stmt.Type != statementV1 && *stmt.Type != statementV01 {
			return nil, &Refusal{Reason: ReasonStatementType, Detail: fmt.Sprintf("the in-toto statement the bundle signs is of _type %q: only %s and %s statements are read", *stmt.Type, statementV1, statementV01)}
		}
	}
	return &bd, nil
}

// The in-toto statement types a DSSE bundle may sign: v1, and v0.1, which
// npm's and cosign's older attestations carry; their subjects read alike.
const (
	statementV1  = "https://in-toto.io/Statement/v1"
	statementV01 = "https://in-toto.io/Statement/v0.1"
)
