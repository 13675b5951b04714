// Package hostile runs the hostile fixtures in testdata/hostile against the
// built binary (make hostile): each case is a YAML file that says what to set
// up, which updeb command lines to run, what exit code and message each must
// give, and what must be left (or not left) behind. The format is documented
// in testdata/hostile/README.md; the runner is case_test.go.
package hostile
