//go:build race

package recipe

// allocFactor: under the race detector Load allocates about three times
// what it does without (818 MB against under 300 MB for 3,000 packages),
// so the allocation bounds of the load tests are scaled by it.
const allocFactor = 4
