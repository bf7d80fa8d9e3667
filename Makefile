# Moat: `make run` starts the gateway with built-in defaults, `make test` runs
# every test. Both install their own dependencies first (idempotent).
SHELL := /bin/bash
export PKG_CONFIG_PATH := $(CURDIR)/.deps/libsrtp/lib/pkgconfig:$(CURDIR)/.deps/usrsctp/lib/pkgconfig:$(CURDIR)/.deps/libsoup/lib/pkgconfig:$(PKG_CONFIG_PATH)
# ccache (a Debian package, installed by `make deps`) when present: a
# fresh clone on a machine that built Moat before compiles almost nothing.
# Paths below the checkout are hashed relative to it, so clones share hits.
MOAT_CC := $(if $(shell command -v ccache 2>/dev/null),ccache gcc,gcc)
MOAT_CLANG := $(if $(shell command -v ccache 2>/dev/null),ccache clang,clang)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
VENV := $(CURDIR)/.venv
FUZZ_SECONDS ?= 15
SOAK_SECONDS ?= 600
# make test runs each fuzz target this long after it replays its seeds and
# corpus (a regression run: 10^3-10^5 new inputs a target); campaigns: make
# fuzz FUZZ_SECONDS=600.
TEST_FUZZ_SECONDS ?= 1

.PHONY: install image test-image all deps build build-asan build-fuzz build-tsan run test unit fuzz integration hostile tsan \
	soak soak-quick bench bench-quick format clean

all: build

# scripts/timed-phases.sh sets MOAT_DEPS_CHECKED for the phases of `make
# test`, whose builds checked the dependencies already.
deps:
	@[ -n "$$MOAT_DEPS_CHECKED" ] || bash scripts/install-deps.sh

# The release build: the gateway, its tools and benchmarks. Its unit test
# programs are not built (make unit runs them from build-asan).
build: deps
	@[ -f build/build.ninja ] || CC="$(MOAT_CC)" meson setup build --buildtype=release -Db_ndebug=true -Dunit_tests=false
	@ninja -C build

build-asan: deps
	@[ -f build-asan/build.ninja ] || CC="$(MOAT_CC)" meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
	@ninja -C build-asan

build-fuzz: deps
	@[ -f build-fuzz/build.ninja ] || CC="$(MOAT_CLANG)" meson setup build-fuzz -Dfuzz=true -Db_lundef=false
	@ninja -C build-fuzz fuzz-targets $$(ninja -C build-fuzz -t targets rule c_COMPILER | grep -v '^gateway/libmoat\.a\.p/')

# ThreadSanitizer: only the unit tests of suite 'tsan' (threads: relay
# rings, session handles, SCTP, the stats snapshot) are built and run.
build-tsan: deps
	@[ -f build-tsan/build.ninja ] || CC="$(MOAT_CC)" meson setup build-tsan -Db_sanitize=thread -Db_lundef=false
	@ninja -C build-tsan tsan-tests

run: build
	./build/gateway/moat

# The gateway as a package lays it out: $(PREFIX)/bin/moat, its plugins in
# $(PREFIX)/<libdir>/moat/plugins, the pages in $(PREFIX)/share/moat/web, the
# configuration in <sysconfdir>/moat/moat.conf (/etc when PREFIX is /usr).
# DESTDIR stages it elsewhere. The binary finds its plugins and pages
# relative to itself. The flood tool: meson install -C build --tags flood.
PREFIX ?= /usr/local
install: build
	meson configure build -Dprefix=$(PREFIX)
	meson install -C build --no-rebuild --tags runtime $(if $(DESTDIR),--destdir $(DESTDIR))

unit: build-asan
	meson test -C build-asan --print-errorlogs --timeout-multiplier 3

fuzz: build-fuzz
	@bash tests/fuzz/run-all.sh build-fuzz $(FUZZ_SECONDS)

# End-to-end tests: in parallel (E2E_JOBS workers, default 3), then those
# marked `serial` one at a time (scripts/e2e.sh).
integration: build build-asan
	@bash scripts/e2e.sh integration "not hostile"

# The hostile tests (marked `hostile`, tests/integration/conftest.py) run
# against the ASan/UBSan gateway (not in `integration`); a sanitizer report
# fails the test.
hostile: build build-asan
	@MOAT_GATEWAY_BINARY=$(CURDIR)/build-asan/gateway/moat bash scripts/e2e.sh hostile hostile

tsan: build-tsan
	meson test -C build-tsan --no-rebuild --suite tsan --print-errorlogs --timeout-multiplier 3

# The container image (Dockerfile): docker, or buildah with a debootstrap
# base (scripts/make-image.sh). Long: not part of `make test`.
image:
	@bash scripts/make-image.sh

# Runs the image: non-root, /healthz, /metrics, WHIP echo, a recording in
# the mounted folder, SIGTERM within seconds; prints `image size: <N> MB`.
test-image:
	$(VENV)/bin/python -m pytest -v -s tests/image/test_image.py

# Churn, floods and data channels against the ASan gateway; resident memory
# and file descriptors must stay flat and the exit clean (tests/soak/).
soak: build build-asan
	@bash tests/soak/run.sh $(SOAK_SECONDS)

soak-quick:
	@$(MAKE) --no-print-directory soak SOAK_SECONDS=60

# Each phase is timed; the table of phases and of the ten slowest tests comes
# last (scripts/timed-phases.sh). The last group runs at once: the hostile
# tests judge survival and answers (their ng client retries as a SIP proxy
# does), the soak judges memory and descriptors, the quick benchmarks judge
# nothing; the end-to-end phase before them runs alone.
test: build build-asan build-fuzz build-tsan
	@FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) bash scripts/timed-phases.sh \
	  unit+tsan+fuzz integration hostile+soak-quick+bench-quick

bench: build
	@bash bench/run-all.sh build

# Every benchmark for a few seconds (MOAT_BENCH_QUICK=1): it must start,
# measure and print its last line; no figure is judged, but a run that
# measured nothing (nothing carried, a default baseline missing) fails.
bench-quick: build
	@MOAT_BENCH_QUICK=1 bash bench/run-all.sh build

format:
	@git ls-files '*.c' '*.h' | xargs clang-format -i

clean:
	rm -rf build build-asan build-fuzz build-tsan
