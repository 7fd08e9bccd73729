# The two commands of README.md: `make demo` and `make test`. Each installs missing Debian
# packages, configures and builds, then runs the demo or the whole test suite.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
export SC_COPYRIGHT_MESSAGE := DISABLE

.PHONY: all deps configure build demo test sanitize clean

all: build

deps:
	@scripts/install-deps

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_EXTRA) >/dev/null

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

test: build
	cd $(BUILD_DIR) && ctest -j $(JOBS) --output-on-failure

# AddressSanitizer + UndefinedBehaviorSanitizer build and test run, in its own directory: a Debug
# build (assertions on) at -O1, which the sanitizers recommend and which keeps the suite quick;
# line tables only (-g1, enough for the sanitizers' reports) and no benchmarks, to keep the
# build within CI's time.
sanitize:
	@$(MAKE) test BUILD_DIR=build-asan BUILD_TYPE=Debug \
	  CMAKE_EXTRA="-DPODSIM_SANITIZE=ON -DPODSIM_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_DEBUG=-g1"

clean:
	rm -rf $(BUILD_DIR)
