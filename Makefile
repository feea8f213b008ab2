# A thin wrapper over CMake, so the README's two commands work:
#   make run    install what is missing, build, and run the main job
#   make test   install what is missing, build, and run every test
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build deps test-deps run test install clean corpus-eval corpus-fit bench

all: build

deps:
	@scripts/install-deps

test-deps:
	@scripts/install-deps --test

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	BUILD=$(BUILD) ARGS="$(ARGS)" scripts/run

test: test-deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD)

corpus-eval: build
	bench/corpus-eval $(BUILD)

corpus-fit: build
	bench/corpus-fit $(BUILD)

bench: build
	bench/run $(BUILD)

clean:
	rm -rf $(BUILD)
