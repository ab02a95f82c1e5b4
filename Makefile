# JobDesk — make run opens the app, make test runs the tests; both install what is missing.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO      ?= go
BIN     := bin/jobdesk
PKGS    := ./...
# Debian packages some tests and benchmarks use on top of the build dependencies.
TEST_PKGS := poppler-utils qpdf sqlite3

.PHONY: all deps build run test test-short bench lint package clean

all: build

deps:
	@scripts/deps.sh

build: deps
	$(GO) build -o $(BIN) .

run: build
	$(BIN)

test: deps
	@scripts/deps.sh $(TEST_PKGS)
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 20m $(PKGS)

test-short: deps
	$(GO) test -short -count=1 $(PKGS)

bench: deps
	@scripts/deps.sh $(TEST_PKGS)
	$(GO) test -run '^$$' -bench . -benchtime 20000x ./engine/queue
	cd bench/compare && $(GO) run . -n 5000
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2x $$($(GO) list ./engine/... | grep -v engine/queue)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

package: deps
	$(GO) run fyne.io/tools/cmd/fyne@v1.7.4 package -os linux -release
	@ls -l *.tar.xz 2>/dev/null || true

clean:
	rm -rf bin dist *.tar.xz
