package provenance_test

import (
	"fmt"
	"time"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/provenance"
)

// The record of one build: what it made, from which verified inputs, and
// how each input was trusted. It holds no clock time, so the same build
// gives the same bytes.
func ExampleNew() {
	st := provenance.New(provenance.Build{
		Recipe:          "hello",
		Architecture:    "amd64",
		DebianVersion:   "1.2.0-1",
		SourceDateEpoch: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC),
		UpdebVersion:    "1.0.0",
		Outputs:         map[string]digest.Set{"hello_1.2.0-1_amd64.deb": {digest.SHA256: "aa11"}},
		Inputs: []provenance.Input{{
			URI:        "https://releases.example.org/hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz",
			Digests:    digest.Set{digest.SHA256: "bb22"},
			VerifiedBy: []string{"pinned-digest", "openpgp:BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B"},
		}},
	})
	out, err := st.Marshal()
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output:
	// {
	//   "_type": "https://in-toto.io/Statement/v1",
	//   "subject": [
	//     {
	//       "name": "hello_1.2.0-1_amd64.deb",
	//       "digest": {
	//         "sha256": "aa11"
	//       }
	//     }
	//   ],
	//   "predicateType": "https://slsa.dev/provenance/v1",
	//   "predicate": {
	//     "buildDefinition": {
	//       "buildType": "https://github.com/updeb/updeb/buildtypes/recipe/v1",
	//       "externalParameters": {
	//         "architecture": "amd64",
	//         "debianVersion": "1.2.0-1",
	//         "recipe": "hello"
	//       },
	//       "internalParameters": {
	//         "sourceDateEpoch": 1773446400
	//       },
	//       "resolvedDependencies": [
	//         {
	//           "uri": "https://releases.example.org/hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz",
	//           "digest": {
	//             "sha256": "bb22"
	//           },
	//           "annotations": {
	//             "verifiedBy": [
	//               "openpgp:BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B",
	//               "pinned-digest"
	//             ]
	//           }
	//         }
	//       ]
	//     },
	//     "runDetails": {
	//       "builder": {
	//         "id": "https://github.com/updeb/updeb",
	//         "version": {
	//           "updeb": "1.0.0"
	//         }
	//       },
	//       "metadata": {
	//         "invocationId": "hello/1.2.0-1/amd64"
	//       }
	//     }
	//   }
	// }
}
