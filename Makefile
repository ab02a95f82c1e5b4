# JobDesk — make run opens the app, make test runs the tests; both install what is missing.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO      ?= go
BIN     := bin/jobdesk
PKGS    := ./...
# Debian packages some tests and benchmarks use on top of the build dependencies.
TEST_PKGS := poppler-utils poppler-data qpdf sqlite3 tesseract-ocr tesseract-ocr-jpn awscli xdotool imagemagick dbus dunst

.PHONY: all deps build run test test-short test-ollama bench lint fmt-check package clean deploy-check lambda \
        windows package-windows test-windows darwin-note window-check

all: build

deps:
	@scripts/deps.sh

build: deps
	$(GO) build -o $(BIN) .

run: build
	$(BIN)

test: deps deploy-check
	@scripts/deps.sh $(TEST_PKGS)
	@scripts/test-servers.sh
	$(GO) vet $(PKGS)
	scripts/go-test.sh -count=1 -timeout 20m # vetted just above
	$(MAKE) window-check

# window-check: the built window under Xvfb, driven with xdotool; each main screen (Japanese and
# English) is compared with its reference in ui/testdata/window/ (scripts/window-check.sh;
# `scripts/window-check.sh --update` rewrites the references after an intended change).
window-check: build
	@scripts/deps.sh xvfb xdotool imagemagick fonts-noto-cjk
	scripts/window-check.sh $(BIN)

# deploy-check: the cloud template (assets/deploy) and the workflows it deploys. npm ci installs
# asl-validator from the committed lock when node_modules is missing or older than the lock.
DEPLOY := assets/deploy
deploy-check: $(DEPLOY)/node_modules/.package-lock.json
	$(DEPLOY)/node_modules/.bin/asl-validator $(addprefix --json-path ,$(wildcard assets/workflows/*.asl.json))
	$(GO) test -count=1 ./$(DEPLOY)/

$(DEPLOY)/node_modules/.package-lock.json: $(DEPLOY)/package.json $(DEPLOY)/package-lock.json
	cd $(DEPLOY) && npm ci --no-audit --no-fund

test-short: deps
	$(GO) test -short -count=1 $(PKGS)

bench: deps
	@scripts/deps.sh $(TEST_PKGS) time libreoffice-writer-nogui
	$(GO) test -run '^$$' -bench Enqueue -benchtime 100000x ./engine/queue
	$(GO) test -run '^$$' -bench 'LeaseComplete|LeaseManyTypes|WakeLatency' -benchtime 20000x ./engine/queue
	cd bench/compare && $(GO) run . -n 5000
	$(GO) test -run '^$$' -bench 'WholeJob|SQLiteImport' -benchtime 5x ./engine/csvjob/...
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2x $$($(GO) list ./engine/... | grep -v -e engine/queue -e engine/csvjob)
	$(GO) test -run '^$$' -bench TaskWorkflow64 -benchtime 3x ./app/cli
	scripts/bench-csv.sh
	scripts/test-servers.sh && $(GO) test -run '^$$' -bench Upload1GB -benchtime 1x -timeout 30m ./sync/s3blob
	$(GO) test -run '^$$' -bench CSV1MThroughLambdaHandlers -benchtime 3x ./sync/cloudworker
	$(GO) test -run '^$$' -bench Dispatch -benchtime 3x ./sync/dispatch
	$(GO) test -count=1 -v -run ThousandIdleExecutionsCostUnderOneRequestASecond ./sync/mirror
	$(GO) test -run '^$$' -bench 'EventToWidget' -benchtime 50x ./ui
	$(GO) test -run '^$$' -bench 'Scroll10k|JobList|ApplyProgress' -benchtime 3x ./ui
	$(MAKE) build && scripts/window-bench.sh $(BIN)

# lambda: the cloud worker (app/lambda) as dist/lambda-arm64.zip and dist/lambda-amd64.zip, a
# static `bootstrap` at the root of each, for the provided.al2023 runtime (assets/deploy).
lambda:
	scripts/lambda-zip.sh arm64 amd64

# Optional: builds Ollama from the module proxy and runs one job of each AI type against the
# tiny random-weight model in ../shared/models (its text is nonsense; the JSON-schema path is real).
test-ollama: deps
	scripts/test-ollama.sh

lint: fmt-check
	$(GO) vet $(PKGS)

# fmt-check: gofmt over every tracked Go file (CI runs it before `make test`, which vets once).
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# package: dist/JobDesk.tar.xz — the binary, the icon and a .desktop entry from FyneApp.toml,
# laid out under usr/local with a Makefile that installs them (`sudo make install` inside it).
# The first run builds the fyne packaging tool (several minutes); later runs reuse it.
package: deps
	$(GO) run fyne.io/tools/cmd/fyne@v1.7.4 package -os linux -release
	@mkdir -p dist && mv -f JobDesk.tar.xz dist/
	@ls -l dist/JobDesk.tar.xz

# windows: bin/windows/JobDesk.exe, cross-compiled with MinGW-w64 (cgo, for Fyne): a GUI program
# that is also the command line, with icon, version and manifest from FyneApp.toml. The first
# build takes several minutes; later ones reuse Go's cache. See assets/windows/README.md.
windows:
	scripts/windows-build.sh bin/windows/JobDesk.exe

# package-windows: dist/JobDesk-Setup-VERSION.exe, a per-user NSIS installer (no administrator
# rights). Both executables are Authenticode-signed when JOBDESK_SIGN_CERT and JOBDESK_SIGN_KEY
# name a certificate and its key (PEM); otherwise they are left unsigned.
package-windows: windows
	scripts/windows-package.sh bin/windows/JobDesk.exe

# test-windows: the Windows build proved on this machine under Wine (headless, Xvfb for the
# window): the same jobs as the Linux build with the same results, the installer, the signature.
# CI runs it after `make test` (it is slow: a cross build and a Wine prefix).
test-windows: package-windows
	scripts/test-windows.sh

# darwin-note: a macOS build needs Apple's SDK, which no registry here provides.
darwin-note:
	@sed -n '/^## macOS/,/^## /p' assets/windows/README.md

clean:
	rm -rf bin dist *.tar.xz rsrc_windows_*.syso
