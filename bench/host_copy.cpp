#include "bench/host_copy.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace pcieval {

std::uint64_t host_pattern_word(std::uint64_t index, std::uint64_t seed) {
  // splitmix64: cheap, and every bit depends on every bit of the index.
  std::uint64_t z = index + seed + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace {

constexpr std::uint64_t kPatternSeed = 0x70636965ULL;  // "pcie"
constexpr unsigned char kPoisonByte = 0xa5;

enum class Phase { kPoison, kCopy, kVerify, kExit };

using Clock = std::chrono::steady_clock;

// Polls of the start gate before a waiting worker starts yielding its CPU:
// about a few microseconds, the time the other workers take to get there
// when they have CPUs of their own.
constexpr int kGateSpins = 4000;

struct Chunk {
  std::size_t begin_bytes = 0;
  std::size_t end_bytes = 0;
};

// Cuts [0, size) into `parts` chunks on page boundaries; the last takes the
// remainder. A buffer smaller than parts pages gives some workers nothing.
std::vector<Chunk> split(std::size_t size_bytes, int parts) {
  std::vector<Chunk> chunks(static_cast<std::size_t>(parts));
  const std::size_t pages = (size_bytes + kHostCopyChunkAlignBytes - 1) / kHostCopyChunkAlignBytes;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const std::size_t pages_here = pages / chunks.size() + (i < pages % chunks.size() ? 1 : 0);
    const std::size_t end = std::min(size_bytes, begin + pages_here * kHostCopyChunkAlignBytes);
    chunks[i] = {begin, end};
    begin = end;
  }
  return chunks;
}

// Words of the pattern that do not match in [begin, end) of `data`. Sizes
// not a multiple of 8 leave a tail of fewer than 8 bytes, compared bytewise.
std::uint64_t count_mismatches(const std::byte* data, std::size_t begin, std::size_t end) {
  std::uint64_t wrong = 0;
  std::size_t offset = begin;
  for (; offset + 8 <= end; offset += 8) {
    std::uint64_t word;
    std::memcpy(&word, data + offset, 8);
    if (word != host_pattern_word(offset / 8, kPatternSeed)) ++wrong;
  }
  if (offset < end) {
    const std::uint64_t expected = host_pattern_word(offset / 8, kPatternSeed);
    if (std::memcmp(data + offset, &expected, end - offset) != 0) ++wrong;
  }
  return wrong;
}

void fill_pattern(std::byte* data, std::size_t begin, std::size_t end) {
  std::size_t offset = begin;
  for (; offset + 8 <= end; offset += 8) {
    const std::uint64_t word = host_pattern_word(offset / 8, kPatternSeed);
    std::memcpy(data + offset, &word, 8);
  }
  if (offset < end) {
    const std::uint64_t word = host_pattern_word(offset / 8, kPatternSeed);
    std::memcpy(data + offset, &word, end - offset);
  }
}

}  // namespace

struct HostCopier::State {
  State(NumaBuffer source_buffer, NumaBuffer destination_buffer, int threads)
      : source(std::move(source_buffer)),
        destination(std::move(destination_buffer)),
        chunks(split(source.size_bytes(), threads)),
        start(threads + 1),
        done(threads + 1),
        mismatches(static_cast<std::size_t>(threads)),
        ended_at(static_cast<std::size_t>(threads)),
        thread_count(static_cast<std::size_t>(threads)) {}

  NumaBuffer source;
  NumaBuffer destination;
  std::vector<Chunk> chunks;
  std::string lock_error;
  // The coordinator and every worker meet at `start`, work, then meet at
  // `done`: two barriers per phase, and the phase is written before `start`.
  std::barrier<> start;
  std::barrier<> done;
  Phase phase = Phase::kPoison;
  std::vector<std::uint64_t> mismatches;
  std::vector<std::thread> workers;
  std::atomic<bool> corrupt_next{false};

  // The copy's start gate and clock. Waking the workers from the barrier
  // takes a scheduler round trip each, and so does waking the coordinator
  // after the last one: on the 2-vCPU VM of issue 17, with one thread more
  // than CPUs, workers started up to milliseconds after the release and the
  // coordinator saw the end milliseconds late. Timed from the coordinator,
  // both were counted as copying, and a worker woken late left the other
  // copying alone at one thread's speed meanwhile (the probe read 0.64 of a
  // plain 2-thread memcpy, about one thread's share). So the
  // copy times itself, like the GPU probes behind their latch: every worker
  // announces itself at the gate, and the last to arrive opens it and reads
  // the clock; each worker reads it again when its chunk is done. The copy's
  // time is from the gate opening to the last worker's end.
  std::atomic<int> gate_arrivals{0};
  std::atomic<bool> gate_open{false};
  Clock::time_point opened_at;              // written by the worker that opens the gate
  std::vector<Clock::time_point> ended_at;  // [worker]: when its chunk was copied
  std::chrono::milliseconds late_start{0};  // for tests: worker 0 arrives at the gate this late
  std::size_t thread_count = 0;

  void wait_for_gate() {
    // Spin briefly (the others are waking right now), then yield, so that
    // workers outnumbering the CPUs they may run on still let the late one in.
    for (int spins = 0; !gate_open.load(std::memory_order_acquire); ++spins) {
      if (spins > kGateSpins) std::this_thread::yield();
    }
  }

  void copy_chunk(std::size_t index, const Chunk& chunk) {
    if (index == 0 && late_start.count() > 0) std::this_thread::sleep_for(late_start);
    if (gate_arrivals.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<int>(thread_count)) {
      opened_at = Clock::now();
      gate_open.store(true, std::memory_order_release);
    } else {
      wait_for_gate();
    }
    std::memcpy(destination.data() + chunk.begin_bytes, source.data() + chunk.begin_bytes,
                chunk.end_bytes - chunk.begin_bytes);
    ended_at[index] = Clock::now();
  }

  void work(std::size_t index) {
    const Chunk chunk = chunks[index];
    const std::size_t length = chunk.end_bytes - chunk.begin_bytes;
    switch (phase) {
      case Phase::kPoison:
        std::memset(destination.data() + chunk.begin_bytes, kPoisonByte, length);
        break;
      case Phase::kCopy:
        copy_chunk(index, chunk);
        break;
      case Phase::kVerify:
        mismatches[index] = count_mismatches(destination.data(), chunk.begin_bytes, chunk.end_bytes);
        break;
      case Phase::kExit:
        break;
    }
  }

  void run_phase(Phase next) {
    phase = next;
    start.arrive_and_wait();
    done.arrive_and_wait();
  }

  ~State() {
    if (workers.empty()) return;
    phase = Phase::kExit;
    start.arrive_and_wait();
    for (auto& worker : workers) worker.join();
  }
};

Result<HostCopier> HostCopier::create(const HwlocTopology& topology, const Options& options) {
  int threads = options.threads;
  if (threads <= 0) {
    auto pus = pu_count_of_node(topology, options.numa_node);
    if (!pus) return pus.error();
    threads = pus.value();
  }
  auto source = NumaBuffer::allocate(topology, options.numa_node, options.size_bytes);
  if (!source) return source.error();
  auto destination = NumaBuffer::allocate(topology, options.numa_node, options.size_bytes);
  if (!destination) return destination.error();

  auto state = std::make_unique<State>(std::move(source).value(), std::move(destination).value(), threads);
  if (auto locked = state->source.lock_pages(); !locked) {
    state->lock_error = locked.error().message;
  } else if (auto locked_too = state->destination.lock_pages(); !locked_too) {
    state->lock_error = locked_too.error().message;
  }
  for (const Chunk& chunk : state->chunks) fill_pattern(state->source.data(), chunk.begin_bytes, chunk.end_bytes);

  // Workers bind themselves to the node's CPUs before the first phase; a
  // refused bind is an error, since threads elsewhere would measure the
  // interconnect instead of the node.
  std::vector<std::string> bind_errors(static_cast<std::size_t>(threads));
  State* shared = state.get();
  for (int i = 0; i < threads; ++i) {
    const auto index = static_cast<std::size_t>(i);
    shared->workers.emplace_back([shared, index, &topology, node = options.numa_node, &bind_errors] {
      if (auto bound = bind_thread_to_node(topology, node); !bound) bind_errors[index] = bound.error().message;
      for (;;) {
        shared->start.arrive_and_wait();
        if (shared->phase == Phase::kExit) return;
        shared->work(index);
        shared->done.arrive_and_wait();
      }
    });
  }
  // The first phase also waits for every bind to be done.
  shared->run_phase(Phase::kPoison);
  for (const auto& error : bind_errors) {
    if (!error.empty()) return make_error(error);
  }
  return HostCopier(std::move(state));
}

HostCopier::HostCopier(std::unique_ptr<State> state) : state_(std::move(state)) {}
HostCopier::HostCopier(HostCopier&&) noexcept = default;
HostCopier& HostCopier::operator=(HostCopier&&) noexcept = default;
HostCopier::~HostCopier() = default;

Result<double> HostCopier::timed_copy() {
  State& s = *state_;
  s.run_phase(Phase::kPoison);

  s.phase = Phase::kCopy;
  s.gate_arrivals.store(0, std::memory_order_relaxed);
  s.gate_open.store(false, std::memory_order_relaxed);
  // The barrier orders these writes before the workers' reads, and their
  // clock readings before ours below.
  s.start.arrive_and_wait();
  s.done.arrive_and_wait();
  s.late_start = std::chrono::milliseconds{0};
  const Clock::time_point finished = *std::max_element(s.ended_at.begin(), s.ended_at.end());
  const Clock::time_point started = s.opened_at;

  if (s.corrupt_next.exchange(false)) s.destination.data()[s.destination.size_bytes() / 2] ^= std::byte{0x01};
  s.run_phase(Phase::kVerify);
  std::uint64_t wrong = 0;
  for (std::uint64_t count : s.mismatches) wrong += count;
  if (wrong != 0) {
    return make_error("host copy verification failed: " + std::to_string(wrong) + " of " +
                      std::to_string((s.destination.size_bytes() + 7) / 8) + " words wrong on NUMA node " +
                      std::to_string(s.destination.numa_node()));
  }
  return std::chrono::duration<double>(finished - started).count();
}

std::size_t HostCopier::size_bytes() const { return state_->source.size_bytes(); }
int HostCopier::threads() const { return static_cast<int>(state_->workers.size()); }
int HostCopier::numa_node() const { return state_->source.numa_node(); }
bool HostCopier::pages_locked() const { return state_->lock_error.empty(); }
const std::string& HostCopier::lock_error() const { return state_->lock_error; }
void HostCopier::corrupt_next_copy_for_test() { state_->corrupt_next = true; }
void HostCopier::delay_next_copy_start_for_test(std::chrono::milliseconds delay) { state_->late_start = delay; }

}  // namespace pcieval
