// The GPU side of one rank of an NCCL all-reduce: its float buffers, stream
// and timing events, the known input pattern and the check of the summed
// result. NCCL itself is not called here (bench/nccl_probe.cpp calls it
// through its dlopened table): kernels/ depends on model only.
//
// Plain C++ on the driver API; its kernels are in kernels/device/kernels.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/deadline_wait.hpp"
#include "kernels/resources.hpp"
#include "model/result.hpp"

namespace pcieval {

// Makes `ordinal`'s primary context the calling thread's current one, as
// ncclCommInitRank requires (NCCL's runtime takes the current context's
// device as its own); refuses a retired device with its reason.
[[nodiscard]] Status use_cuda_device(int ordinal);

// One rank's buffers on one GPU. Input element i of rank r holds a small
// integer, (i + 7r) mod 61 + 1, so any sum over ranks is exact in float and
// a missing, doubled or misplaced rank's contribution cannot verify.
// Move-only; the members release their handles (retired devices excepted,
// see resources.hpp).
class AllReduceRank {
 public:
  // Allocates input and output of `max_count` floats on device `ordinal`, a
  // non-blocking stream and an event pair.
  [[nodiscard]] static Result<AllReduceRank> create(int ordinal, int rank, std::size_t max_count);

  AllReduceRank(AllReduceRank&&) noexcept = default;
  AllReduceRank& operator=(AllReduceRank&&) = delete;
  AllReduceRank(const AllReduceRank&) = delete;
  AllReduceRank& operator=(const AllReduceRank&) = delete;
  ~AllReduceRank() = default;

  [[nodiscard]] int ordinal() const { return stream_.ordinal(); }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] std::size_t max_count() const { return max_count_; }
  // Device addresses: never dereference them on the host.
  [[nodiscard]] const void* input() const { return input_.data(); }
  [[nodiscard]] void* output() const { return output_.data(); }
  [[nodiscard]] const Stream& stream() const { return stream_; }
  [[nodiscard]] EventPair& events() { return events_; }
  [[nodiscard]] const EventPair& events() const { return events_; }

  // Writes this rank's pattern into input[0, count) and NaN into
  // output[0, count), so an all-reduce that never wrote cannot verify; waits
  // for it (polled, policy). REQUIRES: count <= max_count().
  [[nodiscard]] Status prepare(std::size_t count, const PollPolicy& policy);
  // Whether all work queued on the stream has finished (cuStreamQuery),
  // without waiting; an error when the work failed.
  [[nodiscard]] Result<bool> idle() const;
  // How many of output[0, count) differ from the sum of `ranks` ranks'
  // patterns; waits (polled, policy). REQUIRES: count <= max_count().
  [[nodiscard]] Result<std::uint64_t> count_mismatches(std::size_t count, int ranks, const PollPolicy& policy) const;

 private:
  AllReduceRank(int rank, std::size_t max_count, DeviceBuffer input, DeviceBuffer output, DeviceBuffer counter,
                PinnedHostBuffer readback, Stream stream, EventPair events)
      : rank_(rank),
        max_count_(max_count),
        input_(std::move(input)),
        output_(std::move(output)),
        counter_(std::move(counter)),
        readback_(std::move(readback)),
        stream_(std::move(stream)),
        events_(std::move(events)) {}

  int rank_ = 0;
  std::size_t max_count_ = 0;
  DeviceBuffer input_;
  DeviceBuffer output_;
  DeviceBuffer counter_;       // one 64-bit word for count_mismatches
  PinnedHostBuffer readback_;  // where the count is copied to without blocking the host
  Stream stream_;
  EventPair events_;
};

}  // namespace pcieval
