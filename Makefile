# ucmd: the two commands the README promises.
#   make run    build, then run the main job on the embedded default controller
#   make check  every test: unit (plain, ASan+UBSan, TSan), fuzz, system
# Both install the Debian packages they need first (scripts/deps.sh).

BUILD ?= build

.PHONY: all deps build run check bench clean

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) >/dev/null

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	./$(BUILD)/tools/ucmd run

check: deps
	@bash scripts/check.sh

bench: build
	./$(BUILD)/bench/bench_null

clean:
	rm -rf build build-asan build-tsan build-fuzz
