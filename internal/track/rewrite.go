package track

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/digest"
)

// edit replaces one scalar of the recipe file, located by its yaml.v3 node.
type edit struct {
	node  *yaml.Node
	value string
}

// splice applies edits in place, keeping every other byte (yamlfile.Splice),
// and returns the changes they make (yamlfile.Verify checks them).
func splice(file string, top *yaml.Node, data []byte, edits []edit) ([]byte, []yamlfile.Change, error) {
	es := make([]yamlfile.Edit, len(edits))
	for i, e := range edits {
		es[i] = yamlfile.Edit{Node: e.node, Value: e.value}
	}
	changes, err := yamlfile.ChangesOf(top, es)
	if err != nil {
		return nil, nil, err
	}
	out, err := yamlfile.Splice(file, data, es)
	return out, changes, err
}

// recipeNodes are the scalars and mappings bump changes, found with the
// yaml.v3 Node API in the file as written.
type recipeNodes struct {
	version, releaseDate, revision *yaml.Node
	// digests: source name -> algorithm -> the sha256/sha512 value node (a
	// mapping ARCH -> HEX, or one HEX scalar for every architecture).
	digests map[string]map[digest.Algorithm]*yaml.Node
	// index: source name -> its index in the sources list
	index map[string]int
	top   *yaml.Node
}

// mapValue returns the value of key in mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if v := yamlfile.ValueOf(m, key); v != m {
		return v
	}
	return nil
}

// findNodes reads the recipe file's YAML (as recipe.Load does) and finds the
// nodes bump rewrites.
func findNodes(file string, data []byte) (*recipeNodes, error) {
	top, err := recipe.Document(file, data)
	if err != nil {
		return nil, err
	}
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d:%d: not a recipe mapping", file, top.Line, top.Column)
	}
	n := &recipeNodes{
		version: mapValue(top, "version"), releaseDate: mapValue(top, "release-date"), revision: mapValue(top, "revision"),
		digests: map[string]map[digest.Algorithm]*yaml.Node{}, index: map[string]int{}, top: top,
	}
	if srcs := mapValue(top, "sources"); srcs != nil {
		for i, s := range srcs.Content {
			name := mapValue(s, "name")
			if name == nil {
				continue
			}
			n.index[name.Value] = i
			n.digests[name.Value] = map[digest.Algorithm]*yaml.Node{}
			for _, a := range []digest.Algorithm{digest.SHA256, digest.SHA512} {
				if v := mapValue(s, string(a)); v != nil {
					n.digests[name.Value][a] = v
				}
			}
		}
	}
	return n, nil
}
