package strictjson_test

import (
	"errors"
	"fmt"

	"github.com/updeb/updeb/pkg/strictjson"
)

// Decode a downloaded or signed document under the strict rules: a key
// given twice, which other readers would read differently, is refused.
func ExampleUnmarshal() {
	var doc struct {
		Name string `json:"name"`
	}
	fmt.Println(strictjson.Unmarshal([]byte(`{"name": "helm", "extra": 1}`), &doc), doc.Name)

	err := strictjson.Unmarshal([]byte(`{"name": "helm", "name": "evil"}`), &doc)
	fmt.Println(errors.Is(err, strictjson.ErrInvalid))

	err = strictjson.UnmarshalKnown([]byte(`{"name": "helm", "extra": 1}`), &doc)
	fmt.Println(errors.Is(err, strictjson.ErrInvalid))
	// Output:
	// <nil> helm
	// true
	// true
}
