# The two commands of README.md: `make demo` and `make test`. Each installs missing Debian
# packages, configures and builds, then runs the demo or the whole test suite.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
# Line tables only (-g1): backtraces and profiles keep file and line, and a file compiles in 70%
# of the time full debug information takes (chip.cpp: 13.8 s against 19.6 s). For variables in
# a debugger: make BUILD_TYPE=Debug.
RELWITHDEBINFO_FLAGS ?= -O2 -g1 -DNDEBUG
JOBS ?= $(shell nproc)
export SC_COPYRIGHT_MESSAGE := DISABLE

.PHONY: all deps configure build demo test sanitize format format-check clean

all: build

deps:
	@scripts/install-deps

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(RELWITHDEBINFO_FLAGS)" $(CMAKE_EXTRA) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	$(BUILD_DIR)/sims/podsim info --system hls2
	@echo
	$(BUILD_DIR)/sims/podsim selftest --system hls2
	@echo
	$(BUILD_DIR)/sims/podsim net --system hls2 --pattern pair --bytes 64MiB
	@echo
	$(BUILD_DIR)/sims/podsim collective --system hls2 --op all_reduce --min-bytes 1MiB --max-bytes 16MiB
	@echo
	$(BUILD_DIR)/sims/podsim collective --system hls2 --op all_reduce --min-bytes 1MiB --max-bytes 256MiB --timing-only
	@echo
	$(BUILD_DIR)/sims/podsim run --check

test: build
	cd $(BUILD_DIR) && ctest -j $(JOBS) --output-on-failure

# AddressSanitizer + UndefinedBehaviorSanitizer build and run of the unit tests (label unit: the
# plain C++ of every model, without the SystemC kernel or the podsim binary), in its own
# directory: a Debug build (assertions on) at -Og (cmake/podsim.cmake says why); line tables
# only (-g1, enough for the sanitizers' reports). The SystemC and command-line suites are left to
# make test, to keep CI within its time; `make sanitize SANITIZE_TARGET=all SANITIZE_LABEL=.`
# runs everything sanitized.
SANITIZE_TARGET ?= unit_tests
SANITIZE_LABEL ?= unit
sanitize: deps
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPODSIM_SANITIZE=ON \
	  -DPODSIM_BUILD_BENCH=OFF -DPODSIM_BUILD_PYTHON=OFF -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null
	@cmake --build build-asan -j $(JOBS) --target $(SANITIZE_TARGET)
	cd build-asan && ctest -j $(JOBS) --output-on-failure -L $(SANITIZE_LABEL)

# Formatting: format-check fails on a C++ file clang-format would change (CI runs it); format
# rewrites them.
format-check: deps
	@scripts/check-format

format: deps
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
