# Moat: `make run` starts the gateway with built-in defaults, `make test` runs
# every test. Both install their own dependencies first (idempotent).
SHELL := /bin/bash
export PKG_CONFIG_PATH := $(CURDIR)/.deps/libsrtp/lib/pkgconfig:$(CURDIR)/.deps/usrsctp/lib/pkgconfig:$(PKG_CONFIG_PATH)
MESON_SETUP = meson setup --wipe
VENV := $(CURDIR)/.venv
FUZZ_SECONDS ?= 15
SOAK_SECONDS ?= 600

.PHONY: install image test-image all deps build build-asan build-fuzz build-tsan run test unit fuzz integration hostile tsan \
	soak soak-quick bench bench-quick format clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@[ -f build/build.ninja ] || meson setup build --buildtype=release -Db_ndebug=true
	@ninja -C build

build-asan: deps
	@[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
	@ninja -C build-asan

build-fuzz: deps
	@[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_lundef=false
	@ninja -C build-fuzz

# ThreadSanitizer: only the unit tests of suite 'tsan' (threads: relay
# rings, session handles, SCTP, the stats snapshot) are built and run.
build-tsan: deps
	@[ -f build-tsan/build.ninja ] || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false
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
	meson test -C build-asan --print-errorlogs

fuzz: build-fuzz
	@bash tests/fuzz/run-all.sh build-fuzz $(FUZZ_SECONDS)

integration: build build-asan
	@mkdir -p build/test-reports
	$(VENV)/bin/python -m pytest -v -m "not hostile" --junitxml=build/test-reports/integration.xml \
	  tests/integration

# The hostile tests (marked `hostile`, tests/integration/conftest.py) run
# against the ASan/UBSan gateway (not in `integration`); a sanitizer report
# fails the test.
hostile: build build-asan
	@mkdir -p build/test-reports
	MOAT_GATEWAY_BINARY=$(CURDIR)/build-asan/gateway/moat $(VENV)/bin/python -m pytest -v \
	  -m hostile --junitxml=build/test-reports/hostile.xml tests/integration

tsan: build-tsan
	meson test -C build-tsan --no-rebuild --suite tsan --print-errorlogs

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
# last (scripts/timed-phases.sh).
test: build build-asan build-fuzz
	@bash scripts/timed-phases.sh unit fuzz integration hostile tsan soak-quick bench-quick

bench: build
	@bash bench/run-all.sh build

# Every benchmark for a few seconds (MOAT_BENCH_QUICK=1): it must start,
# measure and print its last line; no figure is judged.
bench-quick: build
	@MOAT_BENCH_QUICK=1 bash bench/run-all.sh build

format:
	@git ls-files '*.c' '*.h' | xargs clang-format -i

clean:
	rm -rf build build-asan build-fuzz build-tsan
