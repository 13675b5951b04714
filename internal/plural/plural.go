// Package plural writes counts for people: "1 generation", "0 generations".
package plural

import "strconv"

// Count is n and the noun that goes with it: one when n is 1 (or -1),
// many otherwise ("1 pool file", "0 pool files", "2 days").
func Count(n int64, one, many string) string {
	if n == 1 || n == -1 {
		return strconv.FormatInt(n, 10) + " " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// Days is Count of days ("1 day", "3 days").
func Days(n int) string { return Count(int64(n), "day", "days") }
