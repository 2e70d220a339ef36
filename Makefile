# The two commands of the README: `make run` and `make test`. Both install
# missing Debian packages, configure and build when needed.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ARGS ?=

.PHONY: all deps build binary fixtures run demo test check-fast test-sanitize bench format tidy clean gpu-check deb

all: build

deps:
	@scripts/install-deps.sh

# Ninja (installed by deps): it starts a target's compiles before the
# libraries it links are built, so both cores stay busy through a fresh
# build, and it checks a built tree faster than make. A build folder already
# configured keeps its generator; GENERATOR= uses CMake's default.
GENERATOR ?= -G Ninja

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) $(GENERATOR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the pcieval binary, without the test suites.
# Where MPI was found the target also builds pcieval-mpi beside it, which
# `mpirun ... build/pcieval check` execs (app/CMakeLists.txt).
binary: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS) --target pcieval

# pcieval and the fixture machines ($(BUILD_DIR)/fixtures, generated from
# tests/fixtures/machines.py in seconds): what `make run` and `make demo` leave
# for the README's next commands, which read a machine from build/fixtures.
# One cmake call: two at once would race for the build folder.
fixtures: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS) --target pcieval pcieval_fixtures

# pcieval check on this machine, then one line with pcieval's exit code and
# what it means. make's own status cannot carry that code (a failed recipe is
# always make's 2), so it says whether the check ran: 0 when pcieval gave a
# verdict (0 pass, 1 fail, 3 inconclusive, as on a VM), so a verdict never
# reads as make's `Error`; make fails on pcieval's 2 (a bad flag in ARGS, an
# output not written) and when the build fails. Scripts that act on the
# verdict run build/pcieval check itself (README: Exit codes).
# Extra flags: make run ARGS="-o results.json".
run: fixtures
	@$(BUILD_DIR)/pcieval check $(ARGS); rc=$$?; \
	  case $$rc in \
	    0) what="pass: every verdict pass";; \
	    1) what="fail: a failing verdict, named in the summary above";; \
	    2) what="usage or input error, or an output not written: see the error above";; \
	    3) what="inconclusive: nothing failed, but the evidence proves no pass; on a VM without GPUs this is expected";; \
	    *) what="not a pcieval exit code: it crashed or was killed";; \
	  esac; \
	  echo "make run: pcieval exited $$rc ($$what)"; \
	  case $$rc in 0|1|3) exit 0;; *) exit 1;; esac

# The failure pcieval exists for, end to end on a simulated HGX A100 node
# (sim/README.md): one GPU retrains from Gen4 to Gen3 under load, after its
# h2d_ce passed; check names the hop and the retrain, and its d2h_ce is low.
# About 30 s; exit 1, as on a real node with that fault.
demo: fixtures
	@$(BUILD_DIR)/pcieval check --simulate tests/sim/scenarios/seed_retrain_gen3.json --copy-mib 64 $(ARGS); \
	  rc=$$?; echo "make demo: pcieval exited $$rc (1 is the failing verdict this scenario implies)"; [ $$rc -eq 1 ]

# The Debian packages pcieval_VERSION-1_ARCH.deb and, where MPI was found,
# pcieval-mpi_VERSION-1_ARCH.deb, in $(BUILD_DIR)/ (docs/install.md). Builds
# only what they hold: the binaries and the man pages.
deb: deps $(BUILD_DIR)/CMakeCache.txt
	@scripts/install-deps.sh --deb
	cmake --build $(BUILD_DIR) -j $(JOBS) --target pcieval pcieval_man pcieval_deb_docs
	cpack --config $(BUILD_DIR)/CPackConfig.cmake -B $(BUILD_DIR)

test: build
	@scripts/install-deps.sh --test
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The inner loop: every suite but the slow rounds (the package build, the
# pages loaded in Chromium); the fuzz corpus replay takes seconds and stays.
# `make test` runs them all, as CI does.
check-fast: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE '^package$$' -E 'chromium'

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer, in its
# own build folder so the normal build is untouched. Any finding fails the test
# it occurs in: halt on the first error, leaks included.
SANITIZE_DIR ?= build-sanitize
SANITIZE_ASAN = abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1
test-sanitize: deps
	@scripts/install-deps.sh --test
	cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DPCIEVAL_SANITIZE=ON -DPCIEVAL_ENABLE_CUDA=OFF
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	# hwloc's PCI plugin (hwloc_pci.so) leaks a few KB per load and is
	# dlclosed before LeakSanitizer runs, so no suppression can name it; the
	# plain `make test` run keeps live PCI discovery covered.
	# Open MPI 4's component plugins leak at MPI_Finalize and are dlclosed
	# too, so the fleet runs under mpirun (MpiFleet.*) are checked for memory
	# errors and undefined behaviour but not for leaks; every other test is.
	HWLOC_COMPONENTS=-pci ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:$(SANITIZE_ASAN) \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS) -E '^MpiFleet\.'
	HWLOC_COMPONENTS=-pci ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:$(SANITIZE_ASAN) \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS) -R '^MpiFleet\.'

# The one command a session lent a GPU runs (scripts/gpu-check.sh,
# docs/measuring-on-a-gpu.md): builds only pcieval, test_gpu and the reference
# copy benchmark (or uses a prebuilt folder: GPU_CHECK_ARGS="-b build"), then,
# within 7 minutes: a preflight that stops in one line when the GPU part
# cannot run, the environment, the reference and pcieval check --full, then
# every GPU test alone with a timeout in what is left, and writes summary.md
# into $$OUT (or ./gpu-check-<time>). No Debian packages are installed: a GPU
# node lent for minutes may have no network.
GPU_CHECK_ARGS ?=
gpu-check:
	scripts/gpu-check.sh -j $(JOBS) $(GPU_CHECK_ARGS)

bench: build
	@scripts/install-deps.sh --bench
	bench/perf/check_vs_lstopo.sh -b $(BUILD_DIR)
	bench/perf/host_ceiling_vs_memcpy.sh -b $(BUILD_DIR)
	bench/perf/fleet_merge_scale.sh -b $(BUILD_DIR)
	bench/perf/diagnose_vs_grep.sh -b $(BUILD_DIR)

# The parsers' fuzz campaign (tests/fuzz/run_fuzz.sh: clang, libFuzzer, ASan,
# UBSan): FUZZ_RUNS executions per harness, one harness at a time, then the
# new inputs merged, minimised, into tests/fuzz/corpus/ to commit; `make test`
# only replays that corpus (fuzz.replay.*). FUZZ_SECONDS caps each harness
# (0: no cap), FUZZ_HARNESSES picks some (e.g. "lspci detect"). Inputs that
# crash land in $(BUILD_DIR)/fuzz/findings.
FUZZ_RUNS ?= 10000000
FUZZ_SECONDS ?= 0
FUZZ_HARNESSES ?=
.PHONY: fuzz
fuzz: deps
	@scripts/install-deps.sh --test
	tests/fuzz/run_fuzz.sh -b $(BUILD_DIR)/fuzz -r $(FUZZ_RUNS) -t $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

tidy: build
	git ls-files 'model/*.cpp' 'support/*.cpp' 'topology/*.cpp' 'bench/*.cpp' 'validate/*.cpp' 'ingest/*.cpp' 'report/*.cpp' 'fleet/*.cpp' 'history/*.cpp' 'app/*.cpp' | \
	  xargs clang-tidy -p $(BUILD_DIR) --quiet

clean:
	rm -rf $(BUILD_DIR)
