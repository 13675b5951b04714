//go:build !race

package recipe

// allocFactor scales the load tests' allocation bounds (see race_test.go).
const allocFactor = 1
