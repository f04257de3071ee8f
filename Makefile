# The front door: `make run` starts the dashboard, `make test` proves it works.
GO        ?= go
PKGS      := ./...
BIN       := bin/batcheval
# The version every report states (report.ProductVersion); `git describe`
# names the commit, "dev" outside a repository.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/batcheval/batcheval/report.version=$(VERSION)

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

.PHONY: run
run: ## start the dashboard on http://127.0.0.1:8080 with the demo project (SQLite in ./data)
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/batcheval serve

.PHONY: build
build: ## build the binary into bin/
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/batcheval

.PHONY: generate
generate: ## regenerate templ code
	$(GO) tool templ generate

.PHONY: verify
verify: ## check formatting, vet, and that generated code is current
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@$(GO) tool templ generate >/dev/null 2>&1; if ! git diff --quiet -- '*_templ.go'; then echo "templ output is stale: run make generate and commit"; git diff --stat -- '*_templ.go'; exit 1; fi

.PHONY: lint
lint: verify ## alias of verify

# axe-core for the browser tests' accessibility checks, pinned by
# tools/a11y/package-lock.json; installed once (needs npm).
AXE := tools/a11y/node_modules/axe-core/axe.min.js

$(AXE): tools/a11y/package.json tools/a11y/package-lock.json
	npm ci --prefix tools/a11y --no-audit --no-fund
	@touch $@

.PHONY: a11y-deps
a11y-deps: $(AXE) ## install axe-core for the browser tests (npm ci --prefix tools/a11y)

.PHONY: test
test: verify $(AXE) ## run every test on SQLite and a throwaway PostgreSQL, plus the browser tests
	./scripts/with-postgres.sh $(GO) test -count=1 -timeout 40m $(PKGS)

# The race detector over the packages where workers and requests run at
# once (cmd without its browser tests). Not part of `make test`: under -race
# these suites take several times as long (README, "make test-race").
RACE_PKGS := ./handlers/ ./runner/ ./models/... ./cmd/batcheval

.PHONY: test-race
test-race: ## run the concurrent packages' tests under the race detector (SQLite and PostgreSQL)
	./scripts/with-postgres.sh $(GO) test -race -count=1 -timeout 180m -skip '^TestBrowser' $(RACE_PKGS)

.PHONY: screenshots
screenshots: $(AXE) ## regenerate the README's screenshots (docs/*.png) from the browser tests
	BATCHEVAL_README_SHOTS=$(CURDIR)/docs $(GO) test -count=1 -timeout 25m -run 'TestBrowserEveryPage' ./cmd/batcheval

.PHONY: bench
bench: ## run the benchmarks (see BENCHMARKS.md)
	$(GO) test -run '^$$' -bench . -benchmem ./evaluator/... ./report/...
	# Each iteration of these is a whole run through the runner: one is enough.
	$(GO) test -run '^$$' -bench . -benchtime=1x ./paper
	# Run speed (issue 11): FED on 4 criteria against a fixed-latency fake
	# judge, idle CPU. A throwaway PostgreSQL is started for the idle figure.
	./scripts/with-postgres.sh $(GO) test -run '^$$' -bench 'FEDSchedule|IdleCPU|TickerFloor' -benchtime=1x -timeout 20m ./runner
	# One answer's store, the largest part of a judge call's CPU, on both databases.
	./scripts/with-postgres.sh $(GO) test -run '^$$' -bench 'StoreAnswer' -benchtime=2000x ./models
	# Pages during runs (issue 11): 50 readers while 4 runs write, gated and not.
	$(GO) test -run '^$$' -bench 'RunPageReaders' -benchtime=3x -timeout 20m ./handlers
