# ucmd: the two commands the README promises.
#   make run    build libucmd and the CLI only, then run the main job on the
#               embedded default controller
#   make check  every test: unit (plain, ASan+UBSan, TSan), fuzz, system
#               (QEMU included); fails on a skipped test (docs/testing.md)
# and, for the inner loop, two tiers of it (scripts/check.sh):
#   make check-unit   the plain unit tests: seconds once built
#   make check-quick  unit, unit under ASan+UBSan, and the system tests that
#                     boot no QEMU guest (no TSan, no fuzz)
#   make bench / make bench-daemon / make bench-exec / make bench-tcp / make bench-tcp-guest
#               the benchmarks
#               (docs/performance.md)
#   make install PREFIX=/usr/local [DESTDIR=/staging]
#               libucmd (shared and static), headers, ucmd.pc, the ucmd CLI,
#               man pages and the default policy (docs/install.md)
# All of them install the Debian packages they need first (scripts/deps.sh:
# run for make run, check for the checks, build for the rest).

BUILD ?= build
PREFIX ?= /usr/local
# install builds apart from $(BUILD): its prefix is baked into ucmd.pc
INSTALL_BUILD ?= build-install
# the benchmarks measure what ships: an LTO build of its own
PERF_BUILD ?= build-perf

.PHONY: all deps deps-run deps-check build build-perf run check check-quick check-unit \
	bench bench-daemon bench-exec bench-tcp bench-tcp-guest install clean

all: build

deps:
	@bash scripts/deps.sh build
deps-run:
	@bash scripts/deps.sh run
deps-check:
	@bash scripts/deps.sh check

$(BUILD)/build.ninja:
	meson setup $(BUILD) >/dev/null

build: deps $(BUILD)/build.ninja
	@bash scripts/full_config.sh $(BUILD)
	ninja -C $(BUILD)

# A first run configures without the tests and, unless its tools are there,
# the BPF enforcer (make and the checks turn both on: scripts/full_config.sh), and builds
# only the CLI and the library it links.
run: deps-run
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD) -Dtests=false -Dbpf=auto >/dev/null
	ninja -C $(BUILD) tools/ucmd
	./$(BUILD)/tools/ucmd run

check: deps-check
	@bash scripts/check.sh all
check-quick: deps-check
	@bash scripts/check.sh quick
check-unit: deps
	@bash scripts/check.sh unit

$(PERF_BUILD)/build.ninja:
	meson setup $(PERF_BUILD) -Db_lto=true -Dtests=false >/dev/null

build-perf: deps $(PERF_BUILD)/build.ninja
	ninja -C $(PERF_BUILD)

bench: build-perf
	./$(PERF_BUILD)/bench/bench_null

# ucmd through ucmdd against in-process ucmd and the kernel (docs/performance.md)
bench-daemon: build-perf
	./$(PERF_BUILD)/bench/bench_daemon

# ucmd's NVMe/TCP host to ucmdd's NVMe/TCP target on loopback against the
# in-process path (docs/performance.md)
bench-tcp: build-perf
	./$(PERF_BUILD)/bench/bench_tcp

# in a QEMU guest, ucmd's NVMe/TCP host against Linux's nvme-tcp host (fio)
# on one ucmdd target (docs/performance.md)
bench-tcp-guest: build-perf
	UCMD_BUILD=$(PERF_BUILD) bash bench/bench_tcp_guest.sh

# fio under `ucmd exec` against the kernel's io_uring and ucmd's own API (docs/performance.md)
bench-exec: build-perf
	UCMD_BUILD=$(PERF_BUILD) bash bench/bench_exec.sh

install: deps
	@if [ -f $(INSTALL_BUILD)/build.ninja ]; then \
		meson configure $(INSTALL_BUILD) --prefix=$(abspath $(PREFIX)) >/dev/null; \
	else \
		meson setup $(INSTALL_BUILD) --prefix=$(abspath $(PREFIX)) -Dtests=false -Db_lto=true >/dev/null; \
	fi
	ninja -C $(INSTALL_BUILD)
	meson install -C $(INSTALL_BUILD) --no-rebuild $(if $(DESTDIR),--destdir $(abspath $(DESTDIR)))

clean:
	rm -rf build build-asan build-tsan build-fuzz build-install build-perf build-check-install
