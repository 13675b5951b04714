package scriptlint

import (
	"context"
	"slices"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// The real sh and shellcheck: a syntax error is an error at its line,
// shellcheck's warnings are warnings, a clean fragment has no problem.
func TestCheck(t *testing.T) {
	tools := testenv.RequireTool(t, "sh", "shellcheck")
	all := Tools{Sh: tools[0], ShellCheck: tools[1]}
	for _, tc := range []struct {
		name   string
		tools  Tools
		script string
		want   []Problem
	}{
		{"clean", all, "if [ \"$1\" = configure ]; then\n\techo ok\nfi\n", nil},
		{"syntax error", Tools{Sh: tools[0]}, "if [ \"$1\" = configure ]; then\n\techo ok\n", []Problem{
			{Tool: "sh -n", Line: 3, Message: `Syntax error: end of file unexpected (expecting "fi")`, Error: true}}},
		{"unquoted rm", all, "rm -rf $STATE/\n", []Problem{
			{Tool: "shellcheck", Line: 1, Col: 8, Message: `Use "${var:?}" to ensure this never expands to / . [SC2115]`}}},
		{"bash only", all, "[[ -d /x ]] && echo\n", []Problem{
			{Tool: "shellcheck", Line: 1, Col: 1, Message: "In POSIX sh, [[ ]] is undefined. [SC3010]"}}},
		{"no tools", Tools{}, "if\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(context.Background(), tc.tools, []byte(tc.script))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems %+v\nwant %+v", got, tc.want)
			}
		})
	}
	// A checker that cannot run is an error, not a clean result.
	if _, err := Check(context.Background(), Tools{ShellCheck: "/nonexistent/shellcheck"}, []byte("echo\n")); err == nil {
		t.Error("a missing shellcheck gave no error")
	}
}
