// Package plural writes counts for people: "1 generation", "0 generations".
package plural

import "strconv"

// Count is n and the noun that goes with it: one when n is 1 (or -1),
// many otherwise ("1 pool file", "0 pool files", "2 days").
func Count[N int | int64](n N, one, many string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Of(n, one, many)
}

// Of is one when n is 1 (or -1), many otherwise: the word of a count
// given apart, or the verb that agrees with it ("1 entry counts", "2
// entries count").
func Of[N int | int64](n N, one, many string) string {
	if n == 1 || n == -1 {
		return one
	}
	return many
}

// Days is Count of days ("1 day", "3 days").
func Days(n int) string { return Count(n, "day", "days") }
