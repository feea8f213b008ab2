# A thin wrapper over CMake, so the README's two commands work:
#   make run    install what is missing, build, and run the main job
#   make test   install what is missing, build, and run every test
#   make deb    build the Debian packages into $(BUILD)/deb (DEB_OUT)
#   make test-package  the package test (ctest label package, in
#               $(BUILD)-package): builds, lintians, installs, runs and
#               purges the .deb on this machine
BUILD ?= build
CMAKE_FLAGS ?=
DEB_OUT ?= $(BUILD)/deb
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build deps test-deps package-deps run test test-package deb install clean corpus-eval corpus-fit bench

all: build

deps:
	@scripts/install-deps

test-deps:
	@scripts/install-deps --test

package-deps:
	@scripts/install-deps --package

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	BUILD=$(BUILD) ARGS="$(ARGS)" scripts/run

test: test-deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

deb: package-deps
	scripts/build-deb $(DEB_OUT)

# Its own build directory, so `make test` never runs the package test.
test-package: package-deps
	cmake -S . -B $(BUILD)-package $(CMAKE_FLAGS) -DSLOP_PACKAGE_TEST=ON
	cd $(BUILD)-package && ctest --output-on-failure -L '^package$$'

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
