package xzpar

// The optimal parser: from the current position it prices every way to cover
// the next bytes (literals, short reps, rep matches, matches of every length
// the match finder reports, and the two-step combinations literal + rep0 and
// match + literal + rep0) as a shortest-path search over the positions ahead,
// under the model's current prices. It stops where a match of niceLen or more
// starts, where no path reaches further, or after optWindow positions, then
// hands out the cheapest path's symbols one by one.

const optWindow = 1 << 12

// Kinds of step that reach a node.
const (
	stepSingle       = iota // one symbol: literal, short rep, rep or match
	stepLitRep0             // a literal, then a rep0 match
	stepMatchLitRep0        // a match or rep (len1, dist), a literal, then a rep0 match
)

// optNode is the cheapest known way to reach one position of the window.
type optNode struct {
	price uint32
	from  uint32 // the node where the last step starts
	dist  uint32 // the step's (first) match distance; 0 for a lone literal
	len1  uint32 // stepMatchLitRep0: the first match's length
	kind  uint8
	// state and reps after the step, set when the search reaches the node.
	state uint32
	reps  [4]uint32
}

type optimalParser struct {
	mf     *matchFinder
	m      *model
	prices priceTables

	opts [optWindow]optNode
	// lenEnd is the furthest node any priced step reaches; the nodes up to
	// it have a price (infinityPrice: none yet).
	lenEnd uint32
	// queue holds the chosen path's symbols; next hands out queue[qpos:].
	queue []matchPair
	qpos  int
	// ahead holds the matches at the position after the path, found while
	// searching: the finder has already visited it.
	ahead     [matchLenMax]matchPair
	aheadN    int
	haveAhead bool
}

func newOptimalParser(mf *matchFinder, m *model) *optimalParser {
	return &optimalParser{mf: mf, m: m, queue: make([]matchPair, 0, optWindow)}
}

func (p *optimalParser) reset(dictSize uint32) {
	p.queue, p.qpos, p.haveAhead = p.queue[:0], 0, false
	p.prices.reset(p.m, dictSize)
}

// applySymbol returns the state and distances after coding (length, dist)
// in state with distances reps, as model.encodeSymbol would code it.
func applySymbol(state uint32, reps [4]uint32, length, dist uint32) (uint32, [4]uint32) {
	switch {
	case length >= matchLenMin:
		for i, r := range reps {
			if r == dist {
				copy(reps[1:i+1], reps[:i])
				reps[0] = dist
				return stateAfterRep(state), reps
			}
		}
		return stateAfterMatch(state), [4]uint32{dist, reps[0], reps[1], reps[2]}
	case dist != 0 && dist == reps[0]:
		return stateAfterShortRep(state), reps
	default:
		return stateAfterLiteral(state), reps
	}
}

// isRep reports whether dist is one of reps.
func isRep(reps *[4]uint32, dist uint32) bool {
	return reps[0] == dist || reps[1] == dist || reps[2] == dist || reps[3] == dist
}

// next returns the symbol at pos: length and distance, 0 for a literal.
func (p *optimalParser) next(pos int) (uint32, uint32) {
	if p.qpos == len(p.queue) {
		p.optimize(pos)
	}
	s := p.queue[p.qpos]
	p.qpos++
	p.prices.count(s.len, s.dist)
	return s.len, s.dist
}

// matchesAt returns the matches at the finder's next position, or those
// kept from the last search.
func (p *optimalParser) matchesAt() []matchPair {
	if p.haveAhead {
		p.haveAhead = false
		return p.ahead[:p.aheadN]
	}
	return p.mf.find()
}

// single queues one symbol as the whole path and moves the finder after it.
func (p *optimalParser) single(length, dist uint32) {
	p.queue = append(p.queue[:0], matchPair{length, dist})
	p.qpos = 0
	if length > 1 {
		p.mf.skip(int(length) - 1)
	}
}

// grow extends the search to node end.
func (p *optimalParser) grow(end uint32) {
	for p.lenEnd < end {
		p.lenEnd++
		p.opts[p.lenEnd].price = infinityPrice
	}
}

// setNode records a cheaper way to reach node i, which the search reaches
// already (grow, once for a run of nodes rather than at each).
func (p *optimalParser) setNode(i, price, from, dist, len1 uint32, kind uint8) {
	o := &p.opts[i]
	if price < o.price {
		// state and reps are set when the search reaches the node (extend).
		o.price, o.from, o.dist, o.len1, o.kind = price, from, dist, len1, kind
	}
}

// setRun is setNode for one symbol of distance dist from node from that
// reaches the nodes first, first+1, ...: node first+j at base+lens[j].
// Looping over the nodes as a slice spares setNode's bounds check on each.
func (p *optimalParser) setRun(first uint32, lens []uint32, base, from, dist uint32) {
	nodes := p.opts[first : first+uint32(len(lens))]
	lens = lens[:len(nodes)]
	for j := range nodes {
		o := &nodes[j]
		if price := base + lens[j]; price < o.price {
			o.price, o.from, o.dist, o.len1, o.kind = price, from, dist, 0, stepSingle
		}
	}
}

// optimize finds the cheapest path from pos and queues its symbols.
func (p *optimalParser) optimize(pos int) {
	p.prices.refresh(p.m)
	mf, m, buf := p.mf, p.m, p.mf.buf
	matches := p.matchesAt()
	avail := min(len(buf)-pos, matchLenMax)
	if avail < matchLenMin {
		p.single(1, 0)
		return
	}
	state, reps := m.state, m.reps

	// Rep matches at pos, and the longest match.
	var repLens [4]int
	best := 0
	for i, r := range reps {
		repLens[i] = repLen(buf, pos, r, avail)
		if repLens[i] > repLens[best] {
			best = i
		}
	}
	if repLens[best] >= p.mf.niceLen {
		p.single(uint32(repLens[best]), reps[best])
		return
	}
	mainLen := 0
	if len(matches) > 0 {
		mainLen = int(matches[len(matches)-1].len)
		if mainLen >= p.mf.niceLen {
			p.single(uint32(mainLen), matches[len(matches)-1].dist)
			return
		}
	}
	cur, matchByte := buf[pos], byte(0)
	if int(reps[0]) <= pos {
		matchByte = buf[pos-int(reps[0])]
	}
	if mainLen < matchLenMin && cur != matchByte && repLens[best] < matchLenMin {
		p.single(1, 0)
		return
	}

	// The first position: every symbol that starts here.
	posState := uint32(pos) & posMask
	var prev byte
	if pos > 0 {
		prev = buf[pos-1]
	}
	p.lenEnd = 0
	p.opts[0] = optNode{state: state, reps: reps}
	p.grow(1)
	p.setNode(1, price0(m.isMatch[state][posState])+m.literalPrice(state, prev, cur, matchByte), 0, 0, 0, stepSingle)
	matchPrice := price1(m.isMatch[state][posState])
	repMatchPrice := matchPrice + price1(m.isRep[state])
	if matchByte == cur && int(reps[0]) <= pos {
		p.setNode(1, repMatchPrice+m.shortRepPrice(state, posState), 0, reps[0], 0, stepSingle)
	}
	if max(mainLen, repLens[best]) < matchLenMin {
		p.single(1, p.opts[1].dist)
		return
	}
	for i, l := range repLens {
		if l < matchLenMin {
			continue
		}
		price := repMatchPrice + m.repPrice(uint32(i), state, posState)
		p.grow(uint32(l))
		p.setRun(matchLenMin, p.prices.repLen[posState][matchLenMin:l+1], price, 0, reps[i])
	}
	p.addMatches(0, pos, state, &reps, matches, max(repLens[0]+1, matchLenMin), matchPrice+price0(m.isRep[state]), posState, avail)

	// The positions ahead, while a path reaches them.
	c := uint32(1)
	for ; c < p.lenEnd; c++ {
		matches = mf.find()
		if n := len(matches); n > 0 && int(matches[n-1].len) >= p.mf.niceLen {
			// A long match starts here: end the path here and take it next.
			p.aheadN = copy(p.ahead[:], matches)
			p.haveAhead = true
			break
		}
		p.extend(c, pos+int(c), matches)
	}
	p.backtrack(c)
}

// lenLong is the first length of the last length state: a distance costs
// the same for every length from it on.
const lenLong = matchLenMin + lenStates - 1

// addMatches prices the matches found at node c (position at) of lengths
// from startLen on, and each longest-for-its-distance one followed by a
// literal and a rep0 match.
func (p *optimalParser) addMatches(c uint32, at int, state uint32, reps *[4]uint32, matches []matchPair, startLen int, normalPrice, posState uint32, availFull int) {
	buf := p.mf.buf
	k := 0
	for k < len(matches) && int(matches[k].len) < startLen {
		k++
	}
	l := uint32(startLen)
	for ; k < len(matches); k++ {
		dist, end := matches[k].dist, min(matches[k].len, uint32(availFull))
		if end < matchLenMin {
			break
		}
		if isRep(reps, dist) {
			// Priced as a rep already, and cheaper so.
			l = end + 1
			continue
		}
		p.grow(c + end)
		lens := &p.prices.matchLen[posState]
		for ; l < lenLong && l <= end; l++ {
			p.setNode(c+l, normalPrice+lens[l]+p.prices.distPrice(dist, l), c, dist, 0, stepSingle)
		}
		if l <= end {
			p.setRun(c+l, lens[l:end+1], normalPrice+p.prices.distPrice(dist, lenLong), c, dist)
			l = end + 1
		}
		// Match, literal, rep0.
		after := at + int(end) + 1
		limit := min(availFull-int(end)-1, p.mf.niceLen)
		if limit < matchLenMin {
			continue
		}
		l2 := extendMatch(buf, after-int(dist), after, 0, limit)
		if l2 < matchLenMin {
			continue
		}
		price := normalPrice + p.prices.matchLen[posState][end] + p.prices.distPrice(dist, end)
		s2 := stateAfterMatch(state)
		price += p.litThenRep0Price(s2, at+int(end), int(dist))
		target := c + end + 1 + uint32(l2)
		p.grow(target)
		p.setNode(target, price+p.prices.repLen[uint32(after)&posMask][l2], c, dist, end, stepMatchLitRep0)
	}
}

// litThenRep0Price is the price of a literal at position at in state s
// (with rep0 = rep), and of the is-match, is-rep and rep0 bits that follow.
func (p *optimalParser) litThenRep0Price(s uint32, at, rep int) uint32 {
	m, buf := p.m, p.mf.buf
	ps := uint32(at) & posMask
	price := price0(m.isMatch[s][ps]) + m.literalPrice(s, buf[at-1], buf[at], buf[at-rep])
	s = stateAfterLiteral(s)
	ps = uint32(at+1) & posMask
	return price + price1(m.isMatch[s][ps]) + price1(m.isRep[s]) + m.repPrice(0, s, ps)
}

// extend computes node c's state from its step and prices every step that
// starts there.
func (p *optimalParser) extend(c uint32, at int, matches []matchPair) {
	m, buf := p.m, p.mf.buf
	o := &p.opts[c]
	from := &p.opts[o.from]
	state, reps := from.state, from.reps
	switch o.kind {
	case stepSingle:
		state, reps = applySymbol(state, reps, c-o.from, o.dist)
	case stepLitRep0:
		state, reps = applySymbol(state, reps, 1, 0)
		state, reps = applySymbol(state, reps, c-o.from-1, o.dist)
	case stepMatchLitRep0:
		state, reps = applySymbol(state, reps, o.len1, o.dist)
		state, reps = applySymbol(state, reps, 1, 0)
		state, reps = applySymbol(state, reps, c-o.from-o.len1-1, o.dist)
	}
	o.state, o.reps = state, reps
	base := o.price

	availFull := min(len(buf)-at, matchLenMax, optWindow-1-int(c))
	p.grow(c + 1)
	posState := uint32(at) & posMask
	cur, matchByte := buf[at], buf[at-int(reps[0])]
	litPrice := base + price0(m.isMatch[state][posState]) + m.literalPrice(state, buf[at-1], cur, matchByte)
	nextIsLiteral := litPrice < p.opts[c+1].price
	p.setNode(c+1, litPrice, c, 0, 0, stepSingle)
	matchPrice := base + price1(m.isMatch[state][posState])
	repMatchPrice := matchPrice + price1(m.isRep[state])
	if matchByte == cur {
		p.setNode(c+1, repMatchPrice+m.shortRepPrice(state, posState), c, reps[0], 0, stepSingle)
	}
	if availFull < matchLenMin {
		return
	}
	avail := min(availFull, p.mf.niceLen)

	// Literal, then rep0.
	if !nextIsLiteral && matchByte != cur {
		limit := min(availFull-1, p.mf.niceLen)
		if l := extendMatch(buf, at+1-int(reps[0]), at+1, 0, limit); l >= matchLenMin {
			s2 := stateAfterLiteral(state)
			ps2 := uint32(at+1) & posMask
			price := litPrice + price1(m.isMatch[s2][ps2]) + price1(m.isRep[s2]) + m.repPrice(0, s2, ps2) + p.prices.repLen[ps2][l]
			p.grow(c + 1 + uint32(l))
			p.setNode(c+1+uint32(l), price, c, reps[0], 0, stepLitRep0)
		}
	}

	startLen := matchLenMin
	for i, r := range reps {
		if !repStarts(buf, at, r) {
			continue
		}
		l := repLenAfter(buf, at, r, avail)
		if l < matchLenMin {
			continue
		}
		price := repMatchPrice + m.repPrice(uint32(i), state, posState)
		p.grow(c + uint32(l))
		p.setRun(c+matchLenMin, p.prices.repLen[posState][matchLenMin:l+1], price, c, r)
		if i == 0 {
			startLen = l + 1
		}
		// Rep, literal, rep0 (the same distance).
		after := at + l + 1
		limit := min(availFull-l-1, p.mf.niceLen)
		if limit < matchLenMin {
			continue
		}
		l2 := extendMatch(buf, after-int(r), after, 0, limit)
		if l2 < matchLenMin {
			continue
		}
		total := price + p.prices.repLen[posState][l] + p.litThenRep0Price(stateAfterRep(state), at+l, int(r))
		p.grow(c + uint32(l+1+l2))
		p.setNode(c+uint32(l+1+l2), total+p.prices.repLen[uint32(after)&posMask][l2], c, r, uint32(l), stepMatchLitRep0)
	}

	if n := len(matches); n > 0 && min(int(matches[n-1].len), availFull) >= startLen {
		p.addMatches(c, at, state, &reps, matches, startLen, matchPrice+price0(m.isRep[state]), posState, availFull)
	}
}

// backtrack queues the symbols of the cheapest path to node end.
func (p *optimalParser) backtrack(end uint32) {
	q := p.queue[:0]
	for c := end; c > 0; {
		o := &p.opts[c]
		switch o.kind {
		case stepSingle:
			q = append(q, matchPair{c - o.from, o.dist})
		case stepLitRep0:
			q = append(q, matchPair{c - o.from - 1, o.dist}, matchPair{1, 0})
		case stepMatchLitRep0:
			q = append(q, matchPair{c - o.from - o.len1 - 1, o.dist}, matchPair{1, 0}, matchPair{o.len1, o.dist})
		}
		c = o.from
	}
	for i, j := 0, len(q)-1; i < j; i, j = i+1, j-1 {
		q[i], q[j] = q[j], q[i]
	}
	p.queue, p.qpos = q, 0
}
