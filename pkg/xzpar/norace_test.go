//go:build !race

package xzpar

const raceEnabled = false
