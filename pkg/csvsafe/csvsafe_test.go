package csvsafe

import "testing"

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"helm":            "helm",
		"1.36.5-1":        "1.36.5-1",
		"-3600":           "-3600",
		"+1.5":            "+1.5",
		"=1+1":            "'=1+1",
		"-2+3":            "'-2+3",
		"+cmd|' /C calc'": "'+cmd|' /C calc'",
		"@SUM(A1)":        "'@SUM(A1)",
		"\t=1":            "'\t=1",
		"\r=1":            "'\r=1",
		"a=1":             "a=1",
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}
