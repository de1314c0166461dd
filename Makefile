# Knobs: `make run` starts it on its embedded defaults, `make test` checks it.
GO      ?= go
BIN     ?= bin/knobs
PKGS    := ./...

.PHONY: run build modules generate test vet fmt-check templ-check bench fuzz clean

# make run says what it does: on a fresh clone the module download and the
# first build take minutes, and silence looks like a hang.
run: build
	@echo "Knobs: starting on http://$${KNOBS_ADDR:-127.0.0.1:8080} (KNOBS_ADDR changes it; Ctrl-C stops)"
	@./$(BIN)

build: generate
	@echo "Knobs: building $(BIN)…"
	@CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) .

# Modules missing from the cache are downloaded once, and said so; with
# GOPROXY=off the check itself downloads nothing.
modules:
	@GOPROXY=off $(GO) list -deps . >/dev/null 2>&1 || \
		{ echo "Knobs: downloading Go modules (first run only)…"; $(GO) mod download; }

generate: modules
	@echo "Knobs: generating the pages' Go code (templ)…"
	@$(GO) tool templ generate -log-level warn

vet:
	$(GO) vet $(PKGS)

# Go that gofmt would change fails the tests.
fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; test -z "$$out" || (echo "not gofmt-clean (run gofmt -w):" >&2; echo "$$out" >&2; exit 1)

# The generated *_templ.go files are committed; fail when they are stale.
templ-check:
	$(GO) tool templ generate
	git diff --exit-code -- '*_templ.go' || (echo "generated templ files are stale: run make generate and commit them" >&2; exit 1)
	@test -z "$$(git status --porcelain --untracked-files=all -- '*_templ.go')" || (echo "untracked generated templ files: commit them" >&2; exit 1)

# The browser tests save screenshots of every page they check here, for a
# reviewer to look at what a test cannot judge (layout, look and feel).
SCREENSHOTS ?= $(CURDIR)/artifacts/screenshots

# Every test runs with the race detector except the browser tests: they
# drive the pages (the server's concurrency is the HTTP tests' to check,
# under -race), and Chromium and the detector together would double the
# suite's time on a 2-core machine. The browser tests (two at a time) run
# alongside the rest, which mostly wait on the disk and on paced streams;
# their output follows the rest's.
BROWSER_LOG ?= $(CURDIR)/artifacts/browser-tests.log

test: vet fmt-check templ-check
	@mkdir -p $(SCREENSHOTS)
	@KNOBS_SCREENSHOTS=$(SCREENSHOTS) $(GO) test -count=1 -run '^TestBrowser' ./web > $(BROWSER_LOG) 2>&1 & browser=$$!; \
	KNOBS_SCREENSHOTS=$(SCREENSHOTS) $(GO) test -race -count=1 -skip '^TestBrowser' $(PKGS); rest=$$?; \
	wait $$browser; pages=$$?; \
	echo "browser tests (go test -count=1 -run '^TestBrowser' ./web):"; cat $(BROWSER_LOG); \
	test $$rest -eq 0 && test $$pages -eq 0

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS)

# A short fuzzing session of each fuzz target, FUZZTIME each (FUZZTIME=5m
# for longer): the SSE reader, and hostile requests against a real server.
# Go fuzzes one target per invocation.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) ./llm/sse/
	$(GO) test -run '^$$' -fuzz '^FuzzRequests$$' -fuzztime $(FUZZTIME) ./web/

clean:
	rm -rf bin
