//go:build race

package xzpar

// raceEnabled: the race detector slows the encoder's loops twentyfold, so
// the largest encoder cases run in fast mode only (see encodeCases).
const raceEnabled = true
