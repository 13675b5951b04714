package xzpar

// The fast parser: the longest match at each position, a recent distance
// when it is nearly as long, and one byte of lazy evaluation (a literal now
// when the next position has a clearly better match). It needs no prices, so
// it costs little more than the match finder itself.

// farther reports whether distance big is so much larger than small that a
// match one byte shorter at small is the better buy (in zero-based distances
// it is big/128 > small).
func farther(small, big uint32) bool {
	return (big-1)>>7 > small-1
}

type fastParser struct {
	mf *matchFinder
	// ahead holds the matches at the next position when the last call looked
	// there and chose a literal: the finder has already visited it.
	ahead     [matchLenMax]matchPair
	aheadN    int
	haveAhead bool
}

func (p *fastParser) reset() { p.haveAhead = false }

// next chooses the symbol at pos (the match finder's position, or one
// before it after a look-ahead) given the recent distances: its length and
// distance, distance 0 for a literal. It leaves the finder after the symbol.
func (p *fastParser) next(pos int, reps *[4]uint32) (uint32, uint32) {
	mf := p.mf
	buf, niceLen := mf.buf, mf.niceLen
	var matches []matchPair
	if p.haveAhead {
		matches = p.ahead[:p.aheadN]
		p.haveAhead = false
	} else {
		matches = mf.find()
	}
	avail := min(len(buf)-pos, matchLenMax)
	if avail < matchLenMin {
		return 1, 0
	}

	bestRep, repDist := 0, uint32(0)
	for _, r := range reps {
		if !repStarts(buf, pos, r) {
			continue
		}
		l := repLenAfter(buf, pos, r, avail)
		if l >= niceLen {
			mf.skip(l - 1)
			return uint32(l), r
		}
		if l > bestRep {
			bestRep, repDist = l, r
		}
	}

	mainLen, mainDist := uint32(0), uint32(0)
	if n := len(matches); n > 0 {
		mainLen, mainDist = matches[n-1].len, matches[n-1].dist
		if int(mainLen) >= niceLen {
			mf.skip(int(mainLen) - 1)
			return mainLen, mainDist
		}
		// A match one byte shorter at a much smaller distance codes cheaper.
		for k := n - 1; k > 0 && matches[k-1].len+1 == mainLen && farther(matches[k-1].dist, mainDist); k-- {
			mainLen, mainDist = matches[k-1].len, matches[k-1].dist
		}
		if mainLen == matchLenMin && mainDist > 0x80 {
			mainLen = 1 // a far two-byte match costs more than two literals
		}
	}

	if bestRep >= matchLenMin {
		r := uint32(bestRep)
		if r+1 >= mainLen || (r+2 >= mainLen && mainDist > 1<<9) || (r+3 >= mainLen && mainDist > 1<<15) {
			mf.skip(bestRep - 1)
			return r, repDist
		}
	}
	if mainLen < matchLenMin || avail <= matchLenMin {
		return 1, 0
	}

	// Lazy evaluation: look at the next position.
	next := mf.find()
	p.aheadN = copy(p.ahead[:], next)
	p.haveAhead = true
	if n := len(next); n > 0 {
		nextLen, nextDist := next[n-1].len, next[n-1].dist
		if (nextLen >= mainLen && nextDist < mainDist) ||
			(nextLen == mainLen+1 && !farther(mainDist, nextDist)) ||
			nextLen > mainLen+1 ||
			(nextLen+1 >= mainLen && mainLen >= 3 && farther(nextDist, mainDist)) {
			return 1, 0
		}
	}
	// A recent distance that repeats almost as long at the next position is
	// worth a literal now too.
	limit := max(matchLenMin, int(mainLen)-1)
	for _, r := range reps {
		if int(r) > pos+1 {
			continue
		}
		q := pos + 1 - int(r)
		if extendMatch(buf, q, pos+1, 0, limit) == limit {
			return 1, 0
		}
	}
	p.haveAhead = false
	mf.skip(int(mainLen) - 2)
	return mainLen, mainDist
}
