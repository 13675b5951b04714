# updeb: see README.md. Every target works on a fresh Debian 12 machine after .ci/run's apt-get step.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
STATICCHECK_VERSION := v0.8.2
# The test suite's total budget; CI gives 90 minutes, we stay well under 20.
TEST_TIMEOUT ?= 20m

.PHONY: all build test unit hostile lint fmt-check tidy-check size-check bench demo fuzz clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/updeb ./cmd/updeb

## test: lint, then every test (race detector on), with the real referee tools, then the hostile fixtures.
test: lint unit hostile

unit:
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

## hostile: the hostile fixtures (testdata/hostile/CLASS/*.yaml, and the deb/ and sig/ corpora with VERDICTS.tsv; format in its README.md) against bin/updeb.
hostile: build
	UPDEB_BIN='$(CURDIR)/bin/updeb' $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '^TestHostile(Verdicts)?$$' ./internal/testkit/hostile

lint: fmt-check tidy-check size-check
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## fmt-check: every tracked Go file as gofmt writes it.
fmt-check:
	@unformatted=$$(git ls-files -z '*.go' | xargs -0 -r "$$($(GO) env GOROOT)/bin/gofmt" -l); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted (run gofmt -w):"; echo "$$unformatted"; exit 1; fi

tidy-check:
	@$(GO) mod tidy
	@if ! git diff --quiet -- go.mod go.sum 2>/dev/null; then \
		echo "go mod tidy changed go.mod/go.sum: commit the tidy result"; git diff -- go.mod go.sum; exit 1; fi

## size-check: no tracked file over 1 MiB outside testdata/ (a built binary does not belong in git).
size-check:
	@big=$$(git ls-files -z | grep -zvE '(^|/)testdata/' | xargs -0 -r stat -c '%s %n' | awk '$$1 > 1048576 {print "  " $$2 " (" $$1 " bytes)"}'); \
	if [ -n "$$big" ]; then echo "tracked files over 1 MiB outside testdata/ (build outputs belong in .gitignore):"; echo "$$big"; exit 1; fi

## demo: the main job end to end on the bundled fixture mirror (no network).
demo: build
	./scripts/demo

## fuzz: a short run of every fuzz target (each 20s).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf bin out

## bench: the benchmark tables (not a test; takes minutes): go run ./cmd/updeb-bench
bench:
	$(GO) run ./cmd/updeb-bench
