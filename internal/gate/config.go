package gate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TrustedRootReview compares the Sigstore trusted root in effect (file: the
// config's sigstore.trusted-root or the state folder's refreshed root; ""
// for the bundled one) with the base revision, when the file lies inside the
// git repository of dir (the recipes folder: the repository the change under
// review is in): a change can name other certificate authorities and logs,
// so that signatures nobody trusted pass every Sigstore check. A file that
// is new or changed since the base is one review item (no recipe's: Recipe
// is ""); a file outside that repository (in /etc, another repository such
// as etckeeper's) cannot be changed by the change, and gives none.
func (b *Base) TrustedRootReview(ctx context.Context, dir, file string) ([]ReviewItem, error) {
	if file == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	top, err := b.top(ctx, dir)
	if err != nil {
		return nil, err
	}
	rel, err := relTo(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, nil // outside the repository (a link out of it included)
	}
	now, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	at := b.Rev + ":" + filepath.ToSlash(rel)
	known, err := b.has(ctx, top, rel)
	if err != nil {
		return nil, err
	}
	var old []byte
	if known {
		if old, err = b.git(ctx, top, "show", at); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBase, err)
		}
		if bytes.Equal(old, now) {
			return nil, nil
		}
	}
	what := "changed"
	if old == nil {
		what = "new"
	}
	return []ReviewItem{{
		Kind: KindTrustedRoot, Subject: filepath.ToSlash(rel),
		Old: nonEmpty(old != nil, b.Rev), New: []string{"working tree"},
		Message: fmt.Sprintf("the Sigstore trusted root %s is %s since %s: it names the certificate authorities and logs every Sigstore signature is checked against; review it (updeb trust show --trusted-root FILE) before merging",
			filepath.ToSlash(rel), what, b.Rev),
	}}, nil
}

func nonEmpty(ok bool, s string) []string {
	if !ok {
		return []string{}
	}
	return []string{s}
}
