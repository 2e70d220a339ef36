# The two commands of the README: `make run` and `make test`. Both install
# missing Debian packages, configure and build when needed.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ARGS ?=

.PHONY: all deps build binary run test bench format tidy clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the pcieval binary: what `make run` needs, without the test suites.
binary: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS) --target pcieval

# pcieval check on this machine; the exit code is pcieval's (0 pass, 1 fail,
# 2 usage, 3 inconclusive). Extra flags: make run ARGS="-o results.json".
run: binary
	./$(BUILD_DIR)/pcieval check $(ARGS)

test: build
	@scripts/install-deps.sh --test
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

bench: build
	@scripts/install-deps.sh --bench
	bench/check_vs_lstopo.sh -b $(BUILD_DIR)
	bench/host_ceiling_vs_memcpy.sh -b $(BUILD_DIR)

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

tidy: build
	git ls-files 'model/*.cpp' 'topology/*.cpp' 'bench/*.cpp' 'validate/*.cpp' 'ingest/*.cpp' 'report/*.cpp' 'app/*.cpp' | \
	  xargs clang-tidy -p $(BUILD_DIR) --quiet

clean:
	rm -rf $(BUILD_DIR)
