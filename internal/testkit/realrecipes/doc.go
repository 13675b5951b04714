// Package realrecipes holds the tests of the real recipes in recipes/: every
// recipe lints clean and pins a digest for every source and architecture;
// every pin equals the value in testdata/upstream/ it was taken from; the
// systemd units pass systemd-analyze verify; and a few representative recipes
// build, pass lintian and install from stand-in artifacts served at their
// real URL paths through the mirror setting (no network).
//
// It has no code of its own: everything is in the _test.go files.
package realrecipes
