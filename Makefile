# Two commands do all set-up on a fresh Debian/Ubuntu machine with Swift:
#   make bench   — system libraries, release build, the main job
#   make test    — system libraries, then the test suite
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
APT_PACKAGES := libsqlite3-dev libgraphviz-dev pkg-config

.PHONY: deps build release test bench demo clean

deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists sqlite3 libgvc; then \
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

# Until the benchmark runner exists, the main job is the demo: it builds a sample store and says what it did.
bench: release
	$$($(SWIFT) build -c release --show-bin-path)/faultline demo --out Reports/latest

demo: bench

clean:
	rm -rf .build Reports/latest
