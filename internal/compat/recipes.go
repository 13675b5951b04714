package compat

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
)

// Retired is a recipe marked end-of-life (its end-of-life: field): the
// versions it ships are end-of-life since Since, whatever the support data
// says (which may not cover the component at all).
type Retired struct {
	Component string
	Version   string
	Recipe    string // the recipe's name (recipes/NAME.yaml)
	Since     time.Time
}

// FromRecipes returns what the recipes tell Evaluate: each recipe's requires
// (for the version it ships of its component: cri-tools-1.35 and
// cri-tools-1.36 may each require their own Kubernetes minor), the versions
// each component's recipes ship, and the recipes marked end-of-life.
func FromRecipes(rs []*recipe.Recipe) (requires []Requirement, shipped map[string][]string, retired []Retired) {
	shipped = map[string][]string{}
	for _, r := range rs {
		c := recipe.Component(r.Name)
		if len(r.Requires) > 0 {
			requires = append(requires, Requirement{Component: c, Version: r.Version, Requires: r.Requires})
		}
		shipped[c] = append(shipped[c], r.Version)
		if !r.EndOfLife.IsZero() {
			retired = append(retired, Retired{Component: c, Version: r.Version, Recipe: r.Ref(), Since: r.EndOfLife})
		}
	}
	return requires, shipped, retired
}

// RecipeVersions maps each recipe's name (as release sets name it,
// recipe:NAME) to its version, for Resolve.
func RecipeVersions(rs []*recipe.Recipe) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		out[r.Ref()] = r.Version
	}
	return out
}

// retiredAt returns the recipe of in.Retired that marks comp's version
// end-of-life by now's day, if one does: one of comp's own recipes or, for a
// Kubernetes binary, of kubernetes', the first in in.Retired's order.
func retiredAt(in Inputs, comp, version string, now time.Time) (Retired, bool) {
	at := in.retiredOf[comp]
	if comp != "kubernetes" && supportdata.ProductOf(comp) == "kubernetes" {
		at = slices.Sorted(slices.Values(append(slices.Clone(at), in.retiredOf["kubernetes"]...)))
	}
	for _, i := range at {
		if r := in.Retired[i]; shipsVersion([]string{r.Version}, version) && !r.Since.After(now) {
			return r, true
		}
	}
	return Retired{}, false
}

// recipesFolder is the folder the recipes rs were read from, where a
// release set's recipe:NAME is looked for: "recipes", the default, when none
// were read (the command found no recipes folder); "" when they come from
// several folders (recipe files named one by one). An error naming
// recipes/NAME.yaml whatever --recipes said sent the reader to a file that
// exists.
func recipesFolder(rs []*recipe.Recipe) string {
	folder := "recipes"
	for i, r := range rs {
		if d := filepath.Dir(r.Path); i == 0 {
			folder = d
		} else if d != folder {
			return ""
		}
	}
	return folder
}

// ErrRequires is wrapped when a recipe's requires does not parse.
var ErrRequires = errors.New("compat: invalid requires")

// Check resolves the sets' recipe:NAME references against the recipes rs
// and evaluates the sets with in (the tables, the support data, the day)
// and what the recipes say: their requires, the versions they ship, their
// end-of-life marks. Without recipes (rs nil) a reference is an error and
// what the sets name is not checked against recipes. The sets are resolved
// in place.
func Check(sets []ReleaseSet, rs []*recipe.Recipe, in Inputs) (*Report, error) {
	var shipped map[string][]string
	in.Requires, shipped, in.Retired = FromRecipes(rs)
	if err := ValidateRequires(in.Requires); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRequires, err)
	}
	if err := Resolve(sets, RecipeVersions(rs), recipesFolder(rs)); err != nil {
		return nil, err
	}
	if rs != nil {
		in.Shipped = shipped
	}
	return Evaluate(sets, in), nil
}
