# Two commands do all set-up on a fresh Debian/Ubuntu machine with Swift:
#   make bench   — system libraries, release build, the main job
#   make test    — system libraries, then the test suite
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
APT_PACKAGES := libsqlite3-dev libgraphviz-dev zlib1g-dev pkg-config

.PHONY: deps build release test test-faults test-counts test-asan test-tsan test-concurrency test-browser fuzz bench bench-chrome readme-tables baseline example docs clean

deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists sqlite3 libgvc zlib; then \
		echo "Installing system libraries: $(APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

test: deps
	$(SWIFT) test --disable-swift-testing

# Failures proved by injecting them at every k (`make test` tries a sample of k): a save, store file operations.
test-faults: deps
	FAULTLINE_FAULTS=all $(SWIFT) test --disable-swift-testing --filter 'FailedSaveTests|FaultSweepTests|StoreFileTests|ContextEventTests'

# Allocations per fetched and per inserted object, counted exactly in an optimized build (in a folder of its own;
# `make test` skips these tests, as a debug build's counts are not the engine's).
test-counts: deps
	$(SWIFT) test -c release -Xswiftc -enable-testing --disable-swift-testing --scratch-path .build-counts --filter AllocationCountTests

# The test suite under AddressSanitizer and ThreadSanitizer, each in a build folder of its own.
test-asan: deps
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --disable-swift-testing --sanitize=address --scratch-path .build-asan

test-tsan: deps
	$(SWIFT) test --disable-swift-testing --sanitize=thread --scratch-path .build-tsan

# The soak (many contexts on many threads; docs/contexts.md, "Under load") and the classes that run contexts, readers and
# writers on several threads, under ThreadSanitizer: what CI runs on every change.
CONCURRENCY_TESTS = SoakTests|AsyncContextTests|NestedContextTests|ReaderPoolTests|SpinLockTests|ProbeTests|EcosystemTests|MergePolicyTests|ObjectLifetimeTests|FetchedResultsControllerTests|ContextEventTests|CompressedTraceTests
test-concurrency: deps
	$(SWIFT) test --disable-swift-testing --sanitize=thread --scratch-path .build-tsan --filter '$(CONCURRENCY_TESTS)'

# The report page in headless Chromium (its script, its DOM): installs Debian's chromium when missing. `make test`
# runs the same test, skipped with a message where Chromium is absent (FAULTLINE_CHROMIUM=PATH names the browser;
# a path with none there runs the suite as without it, as CI does).
test-browser: deps
	@if ! command -v chromium >/dev/null 2>&1; then \
		echo "Installing chromium"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; \
	fi
	$(SWIFT) test --disable-swift-testing --filter ReportBrowserTests

# libFuzzer on each fuzz target (Fuzz/) for FUZZ_SECONDS (default 600) each; FUZZ_TARGETS picks some.
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) Fuzz/run.sh

# The main job: every benchmark scenario at the medium scale (about six minutes on 2 cores), written to
# Reports/latest (results.json, trace.jsonl.gz, index.html) with a summary on standard output; then the trace's
# report (report.html, with findings) and the folder's size (size.txt, for the README). `make bench-chrome` adds the
# trace's Chrome/Perfetto export, compressed (Perfetto's UI opens .json.gz).
FUZZ_SECONDS ?= 600
BENCH_SCALE ?= medium
bench: release
	rm -f Reports/latest/trace.jsonl Reports/latest/trace-chrome.json Reports/latest/trace-chrome.json.gz
	$$($(SWIFT) build -c release --show-bin-path)/faultline bench --scale $(BENCH_SCALE) --out Reports/latest
	$$($(SWIFT) build -c release --show-bin-path)/faultline report Reports/latest/trace.jsonl.gz -o Reports/latest/report.html
	du -sk Reports/latest | cut -f1 > Reports/latest/size.txt

bench-chrome: release
	$$($(SWIFT) build -c release --show-bin-path)/faultline report Reports/latest/trace.jsonl.gz -o Reports/latest/report.html --chrome Reports/latest/trace-chrome.json.gz

# The README's Speed, Memory and Claims tables, generated from the last `make bench` (Reports/latest/results.json) between
# their markers.
readme-tables: release
	for table in speed memory claims; do \
		$$($(SWIFT) build -c release --show-bin-path)/faultline bench --markdown Reports/latest/results.json --table $$table > Reports/latest/$$table.md && \
		awk -v table=$$table '$$0 == "<!-- " table "-table:begin -->" { print; while ((getline line < ("Reports/latest/" table ".md")) > 0) print line; skip = 1; next } \
		     $$0 == "<!-- " table "-table:end -->" { skip = 0 } !skip { print }' README.md > README.md.new && mv README.md.new README.md || exit 1; \
	done
	size=$$(cat Reports/latest/size.txt) && \
	sed -i "s|<!-- run-size:begin -->.*<!-- run-size:end -->|<!-- run-size:begin -->The last run's folder (\`du -sk Reports/latest\`): $$(( (size + 512) / 1024 )) MB.<!-- run-size:end -->|" README.md

# Refreshes the committed baseline (a small run's results.json) that regression checks compare with.
baseline: release
	$$($(SWIFT) build -c release --show-bin-path)/faultline bench --scale small --out Reports/baseline-run
	mkdir -p Reports/baseline && cp Reports/baseline-run/results.json Reports/baseline/results.json

# The Faultline module's DocC archive (Sources/Faultline/Faultline.docc and the doc comments), in .build/docs;
# `make test` type-checks the catalog's code samples (DocumentationSampleTests).
docs: deps
	rm -rf .build/docs && mkdir -p .build/docs
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target Faultline \
		--output-path .build/docs/Faultline.doccarchive --warnings-as-errors

# A program written as a Core Data user on a server writes it, built against this package as a dependency
# (Examples/ServerQuickstart): a container with an in-memory store, eight tasks awaiting `perform`, a fetch inside a
# request's span. It exits 1 unless the fetch's span is inside the request's trace. (Examples/HummingbirdOTel, the
# OpenTelemetry path, is built by hand: see its README.)
example: deps
	cd Examples/ServerQuickstart && $(SWIFT) run

clean:
	rm -rf .build .build-asan .build-tsan .build-fuzz Reports/latest Reports/baseline-run
