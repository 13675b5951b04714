// Package lockfile serialises updeb processes that share a folder (a cache,
// an output folder, a repository) with flock(2) on a lock file. The kernel
// drops the lock when the process dies, even by kill -9, so a crash never
// leaves a stale lock behind. The same lock marks a temporary folder as in
// use (TempDir), so that the folders of killed processes can be removed.
package lockfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Lock is a held lock; Unlock releases it.
type Lock struct{ f *os.File }

// Acquire takes an exclusive lock on path (created if needed; a symbolic
// link there is refused, not followed), waiting until it is free or ctx is
// done. poll is how often to retry (0 means 50ms).
func Acquire(ctx context.Context, path string, poll time.Duration) (*Lock, error) {
	return acquire(ctx, path, poll, syscall.LOCK_EX)
}

// AcquireShared takes a shared lock on path, as Acquire takes an exclusive
// one: any number of holders of shared locks at once, none while someone
// holds the exclusive lock. For what many processes do side by side but one
// must not do beside them (a cache hit marking its file as used, beside the
// gc that removes the files no one used).
func AcquireShared(ctx context.Context, path string, poll time.Duration) (*Lock, error) {
	return acquire(ctx, path, poll, syscall.LOCK_SH)
}

// acquire takes the lock (how: LOCK_EX or LOCK_SH) on the lock file path.
//
// The lock is the open file's, and path may name another file by the time
// it is taken: the file opened removed meanwhile (by a holder done with
// it, by hand) and another made in its place, which another process
// locked. The lock of the file removed excludes no one, so it is let go
// and the file at path locked instead, until the two are the same.
func acquire(ctx context.Context, path string, poll time.Duration, how int) (*Lock, error) {
	for {
		// Never through a link: a lock file is not created where a link
		// that someone planted points.
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		opened(path)
		l, err := wait(ctx, f, path, poll, how)
		if err != nil {
			return nil, err
		}
		held, err := f.Stat()
		if err != nil {
			l.Unlock()
			return nil, fmt.Errorf("lock: %w", err)
		}
		now, err := os.Lstat(path)
		if err == nil && os.SameFile(held, now) {
			return l, nil
		}
		l.Unlock()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("lock: %w", err)
		}
	}
}

// opened is called with the path of a lock file acquire has opened, before
// it locks it: a test replaces the file in that window.
var opened = func(path string) {}

// AcquireDir takes an exclusive lock on the folder dir itself, as Acquire
// does on a file: for a folder whose contents are all someone else's to
// read (a mirror folder carried to another host), where a lock file would
// be one more file in it.
func AcquireDir(ctx context.Context, dir string, poll time.Duration) (*Lock, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return wait(ctx, f, dir, poll, syscall.LOCK_EX)
}

// AcquireFile takes an exclusive lock on the existing file path itself, as
// Acquire does on a lock file: never created, a symbolic link refused. For a
// file replaced by rename (the lock stays with the file replaced): the
// holder checks the file is still what it read, then renames, then unlocks,
// and a second holder finds the file changed.
func AcquireFile(ctx context.Context, path string, poll time.Duration) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return wait(ctx, f, path, poll, syscall.LOCK_EX)
}

// NoticeAfter is how long a lock is waited for before the first notice of
// WithWaitNotice is given.
const NoticeAfter = time.Second

// WarnAfter is how long a lock is waited for before the second notice of
// WithWaitNotice, the first a command shows as a warning: a wait this long
// is no longer two runs taking turns, and a cron job or CI log, which shows
// warnings but not info lines, says why the run does not end.
const WarnAfter = 10 * time.Second

// maxNoticeGap bounds the time between two notices of one long wait.
const maxNoticeGap = 10 * time.Minute

// ErrHeld is wrapped, with the context's error, when a wait for a lock that
// another process holds ends before the lock was taken; the message names
// the holder when it is known (see WithWaitNotice).
var ErrHeld = errors.New("waiting for lock")

type noticeKey struct{}

// WithWaitNotice returns a copy of ctx under which Acquire, AcquireDir and
// AcquireFile call notice, with the lock's path, who holds it ("pid 1234
// (updeb publish ...)", "" when that is not known) and how long they have
// waited, while they wait for a lock that someone else holds: a command
// that waits for another process can say so, and for which, instead of
// seeming to hang. notice is called after NoticeAfter, after WarnAfter,
// after a minute, and then at gaps that double up to ten minutes (2m, 4m,
// 8m, 16m, 26m...): a wait is never given up for its length (a publish
// may hold a repository's lock for long, and its holder would find the
// repository as it left it), so its log says, now and then, that it goes
// on, without a line a second.
func WithWaitNotice(ctx context.Context, notice func(path, holder string, waited time.Duration)) context.Context {
	return context.WithValue(ctx, noticeKey{}, notice)
}

// nextNotice is when the notice after the one due at due is due (0: the
// first).
func nextNotice(due time.Duration) time.Duration {
	switch {
	case due < NoticeAfter:
		return NoticeAfter
	case due < WarnAfter:
		return WarnAfter
	case due < time.Minute:
		return time.Minute
	}
	return due + min(due, maxNoticeGap)
}

// now is the clock of wait's notices: a test runs a long wait's notices in
// no time.
var now = time.Now

// wait takes the lock on f (how: LOCK_EX or LOCK_SH), polling every poll
// until ctx is done.
func wait(ctx context.Context, f *os.File, path string, poll time.Duration, how int) (*Lock, error) {
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	notice, _ := ctx.Value(noticeKey{}).(func(string, string, time.Duration))
	start := now()
	due := nextNotice(0)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return &Lock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if waited := now().Sub(start); notice != nil && waited >= due {
			notice(path, holders(f), waited)
			// One notice for the notices a suspended machine slept
			// through, not one per loop until the schedule catches up.
			for due <= waited {
				due = nextNotice(due)
			}
		}
		select {
		case <-ctx.Done():
			who := "another updeb process holds it"
			if h := holders(f); h != "" {
				who += ": " + h
			}
			f.Close()
			return nil, fmt.Errorf("%w %s (%s): %w", ErrHeld, path, who, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
