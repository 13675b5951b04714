package gate

import "strings"

// diffContext is how many unchanged lines lineDiff shows around a change.
const diffContext = 1

// maxDiffCells bounds the line-matching table: beyond it, the lines between
// the common head and tail are shown as removed and added.
const maxDiffCells = 1 << 20

// lineDiff is a short unified-style diff of two texts' lines: "- " removed,
// "+ " added, "  " unchanged (one line around each change), "..." where
// unchanged lines are left out; each line indented by two spaces.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	// The common head and tail, then the longest common subsequence of the
	// middle (descriptions are short; the table is bounded anyway).
	head := 0
	for head < len(x) && head < len(y) && x[head] == y[head] {
		head++
	}
	tail := 0
	for tail < len(x)-head && tail < len(y)-head && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	type op struct {
		mark byte
		line string
	}
	var ops []op
	for _, l := range x[:head] {
		ops = append(ops, op{' ', l})
	}
	mx, my := x[head:len(x)-tail], y[head:len(y)-tail]
	if (len(mx)+1)*(len(my)+1) > maxDiffCells {
		for _, l := range mx {
			ops = append(ops, op{'-', l})
		}
		for _, l := range my {
			ops = append(ops, op{'+', l})
		}
	} else {
		// lcs[i][j] is the length of the longest common subsequence of
		// mx[i:] and my[j:].
		lcs := make([][]int, len(mx)+1)
		for i := range lcs {
			lcs[i] = make([]int, len(my)+1)
		}
		for i := len(mx) - 1; i >= 0; i-- {
			for j := len(my) - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(mx) || j < len(my) {
			switch {
			case i < len(mx) && j < len(my) && mx[i] == my[j]:
				ops = append(ops, op{' ', mx[i]})
				i, j = i+1, j+1
			case j < len(my) && (i == len(mx) || lcs[i][j+1] > lcs[i+1][j]):
				ops = append(ops, op{'+', my[j]})
				j++
			default:
				ops = append(ops, op{'-', mx[i]})
				i++
			}
		}
	}
	for _, l := range x[len(x)-tail:] {
		ops = append(ops, op{' ', l})
	}

	// Keep the changes and diffContext unchanged lines around each.
	keep := make([]bool, len(ops))
	for k, o := range ops {
		if o.mark == ' ' {
			continue
		}
		for c := max(0, k-diffContext); c <= min(len(ops)-1, k+diffContext); c++ {
			keep[c] = true
		}
	}
	var out strings.Builder
	skipped := false
	for k, o := range ops {
		if !keep[k] {
			skipped = true
			continue
		}
		if skipped {
			out.WriteString("  ...\n")
		}
		skipped = false
		out.WriteString(strings.TrimRight("  "+string(o.mark)+" "+o.line, " "))
		out.WriteString("\n")
	}
	if skipped {
		out.WriteString("  ...\n")
	}
	return strings.TrimSuffix(out.String(), "\n")
}
