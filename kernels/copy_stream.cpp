#include "kernels/copy_stream.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/blocking_call.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/launchers.hpp"
#include "kernels/pattern.hpp"

namespace pcieval {
namespace {

Status check_stream_arguments(Direction direction, std::span<std::byte> host) {
  if (direction != Direction::kHostToDevice && direction != Direction::kDeviceToHost) {
    return make_error("a GPU copy stream moves host-to-device or device-to-host, not " +
                      std::string(to_string(direction)));
  }
  if (host.empty() || host.size() % kPatternGranuleBytes != 0) {
    return make_error("a copy buffer must be a non-zero multiple of " + std::to_string(kPatternGranuleBytes) +
                      " bytes, got " + std::to_string(host.size()));
  }
  if (reinterpret_cast<std::uintptr_t>(host.data()) % kPatternGranuleBytes != 0) {
    return make_error("a copy buffer must be 16-byte aligned");
  }
  return ok_status();
}

std::string stream_label(int ordinal, Direction direction, CopyMethod method) {
  return "cuda " + std::to_string(ordinal) + " " + std::string(to_string(direction)) + " " +
         std::string(to_string(method));
}

// " write to cuda 1", " read from cuda 1": what a peer stream's label adds.
std::string peer_suffix(PeerTransfer transfer, int peer) {
  return (transfer == PeerTransfer::kWrite ? " write to cuda " : " read from cuda ") + std::to_string(peer);
}

Error mismatch_error(const std::string& label, std::uint64_t mismatches, std::size_t bytes) {
  return make_error(label + ": " + std::to_string(mismatches) + " of " + std::to_string(bytes / 4) +
                    " 32-bit words of the destination differ from the source after the copy");
}

// Waits for every stream's stream and opens the latch on the way out of a
// trial, whatever happened: no spin kernel or copy outlives the trial, except
// on a device that missed its deadline (retired: nothing waits for it again).
class TrialCleanup {
 public:
  TrialCleanup(std::span<CopyStream* const> streams, Latch& latch, const PollPolicy& policy)
      : streams_(streams), latch_(latch), policy_(policy) {}
  TrialCleanup(const TrialCleanup&) = delete;
  TrialCleanup& operator=(const TrialCleanup&) = delete;
  ~TrialCleanup() {
    latch_.release();
    for (CopyStream* stream : streams_) {
      if (!stream->abandoned()) static_cast<void>(stream->stream().synchronize(policy_));
    }
  }

 private:
  std::span<CopyStream* const> streams_;
  Latch& latch_;
  PollPolicy policy_;
};

// What a stream's timed work is called in a timeout's message.
std::string operation_name(Direction direction, CopyMethod method) {
  return std::string(method == CopyMethod::kCopyEngine ? "copy-engine copy " : "SM copy kernel ") +
         std::string(to_string(direction));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What the thread of a pageable copy reports back.
struct PageableCopy {
  CuResult code = kCudaSuccess;
  std::string not_current;            // use_device's error on the thread, if any
  const char* failed_call = nullptr;  // the call that returned `code`; null when both succeeded
  WaitResult waited;                  // the wait for the stream after the copy
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point ended;
};

// How much longer than the copy's own deadline the caller waits for its
// thread: the thread's wait gives up at that deadline and reports it, which
// names the stuck part better than the caller's timeout would. The caller's
// timeout remains for a thread stuck inside the copy call itself.
constexpr double kPageableThreadGraceS = 1.0;

}  // namespace

// --- CopyStream

Result<CopyStream> CopyStream::create(int ordinal, Direction direction, CopyMethod method, std::span<std::byte> host,
                                      std::uint32_t seed) {
  PCIEVAL_TRY_STATUS(check_stream_arguments(direction, host));
  if (method != CopyMethod::kCopyEngine && method != CopyMethod::kSmKernel) {
    return make_error("a GPU copy stream copies with the copy engine or SM kernels, not " +
                      std::string(to_string(method)));
  }
  PCIEVAL_TRY_STATUS(preload_kernels(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(Stream stream, Stream::create(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(EventPair events, EventPair::create(ordinal));
  // Mapped for both methods: SM kernels need it, and the pattern kernels
  // poison and check the host side through it.
  PCIEVAL_ASSIGN_OR_RETURN(HostRegistration registration, HostRegistration::register_range(ordinal, host, true));
  PCIEVAL_ASSIGN_OR_RETURN(std::byte * host_device_pointer, registration.device_pointer(ordinal));
  std::optional<HostRegistration> registered(std::move(registration));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer device, DeviceBuffer::allocate(ordinal, host.size()));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer counter, DeviceBuffer::allocate(ordinal, sizeof(unsigned long long)));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer readback, PinnedHostBuffer::allocate(ordinal, sizeof(unsigned long long)));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(ordinal));
  CopyStream created(direction, method, seed, std::move(stream), std::move(events), std::move(registered),
                     std::move(device), std::move(counter), std::move(readback), host_device_pointer, blocks);
  // The whole capacity carries the pattern, whatever shape comes later.
  PCIEVAL_TRY_STATUS(detail::launch_fill_pattern(created.stream_, blocks, created.kernel_view_of_source(),
                                                 created.capacity_bytes(), seed));
  PCIEVAL_TRY_STATUS(created.stream_.synchronize());
  return Result<CopyStream>(std::move(created));
}

Result<CopyStream> CopyStream::create_peer(int ordinal, int peer, PeerTransfer transfer, CopyMethod method,
                                           std::size_t bytes, std::uint32_t seed) {
  if (ordinal == peer)
    return make_error("a peer copy needs two devices, got cuda " + std::to_string(ordinal) + " twice");
  if (bytes == 0 || bytes % kPatternGranuleBytes != 0) {
    return make_error("a copy buffer must be a non-zero multiple of " + std::to_string(kPatternGranuleBytes) +
                      " bytes, got " + std::to_string(bytes));
  }
  if (method != CopyMethod::kCopyEngine && method != CopyMethod::kSmKernel) {
    return make_error("a peer copy stream copies with the copy engine or SM kernels, not " +
                      std::string(to_string(method)));
  }
  // The peer's side first: its buffer, and the stream that fills or poisons
  // and checks it.
  PCIEVAL_TRY_STATUS(preload_kernels(peer));
  PCIEVAL_ASSIGN_OR_RETURN(Stream peer_stream, Stream::create(peer));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer peer_buffer, DeviceBuffer::allocate(peer, bytes));
  PCIEVAL_ASSIGN_OR_RETURN(int peer_blocks, detail::saturating_blocks(peer));
  PCIEVAL_ASSIGN_OR_RETURN(CuContext peer_context, detail::context_of(peer));
  // The checked side holds the mismatch counter: the peer's when writing.
  const int checker = transfer == PeerTransfer::kWrite ? peer : ordinal;
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer counter, DeviceBuffer::allocate(checker, sizeof(unsigned long long)));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer readback, PinnedHostBuffer::allocate(checker, sizeof(unsigned long long)));

  PCIEVAL_TRY_STATUS(preload_kernels(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(Stream stream, Stream::create(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(EventPair events, EventPair::create(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer device, DeviceBuffer::allocate(ordinal, bytes));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(CuContext own_context, detail::context_of(ordinal));
  CopyStream created(Direction::kDeviceToDevice, method, seed, std::move(stream), std::move(events), std::nullopt,
                     std::move(device), std::move(counter), std::move(readback), nullptr, blocks);
  created.peer_ = std::unique_ptr<PeerSide>(new PeerSide{peer, transfer, std::move(peer_buffer), std::move(peer_stream),
                                                         peer_blocks, own_context, peer_context});
  // The source carries the pattern, on the device that holds it.
  const bool source_on_peer = transfer == PeerTransfer::kRead;
  const Stream& filler = source_on_peer ? created.peer_->stream : created.stream_;
  PCIEVAL_TRY_STATUS(detail::use_device(filler.ordinal()));
  PCIEVAL_TRY_STATUS(detail::launch_fill_pattern(filler, source_on_peer ? peer_blocks : blocks,
                                                 created.kernel_view_of_source(), bytes, seed));
  PCIEVAL_TRY_STATUS(filler.synchronize());
  return Result<CopyStream>(std::move(created));
}

CopyStream::~CopyStream() {
  if (stream_.handle() == nullptr) return;  // moved from
  const bool own_retired = cuda_device_retired(ordinal());
  if (!own_retired) static_cast<void>(stream_.synchronize());
  if (!peer_) return;
  if (!cuda_device_retired(peer_->ordinal)) static_cast<void>(peer_->stream.synchronize());
  // A copy this retired device gave up on may still write the peer's
  // buffer: the peer's side is kept until the process exits.
  if (own_retired) static_cast<void>(peer_.release());
}

bool CopyStream::abandoned() const {
  return cuda_device_retired(ordinal()) || (peer_ && cuda_device_retired(peer_->ordinal));
}

Status CopyStream::reshape(CopyShape shape) {
  if (shape.size_bytes == 0 || shape.size_bytes % kPatternGranuleBytes != 0) {
    return make_error("a copy size must be a non-zero multiple of 16 bytes, got " + std::to_string(shape.size_bytes));
  }
  if (shape.size_bytes > capacity_bytes()) {
    return make_error("a copy of " + std::to_string(shape.size_bytes) + " bytes exceeds the stream's " +
                      std::to_string(capacity_bytes()) + " bytes");
  }
  if (shape.copies < 1) return make_error("a trial needs at least one copy, got " + std::to_string(shape.copies));
  shape_ = shape;
  return ok_status();
}

std::uint64_t CopyStream::bytes_per_trial() const {
  return static_cast<std::uint64_t>(shape_.size_bytes) * static_cast<std::uint64_t>(shape_.copies);
}

std::string CopyStream::label() const {
  std::string text = stream_label(ordinal(), direction_, method_);
  if (peer_) text += peer_suffix(peer_->transfer, peer_->ordinal);
  return text;
}

const std::byte* CopyStream::copy_source() const {
  if (peer_) return peer_->transfer == PeerTransfer::kWrite ? device_.data() : peer_->buffer.data();
  if (direction_ == Direction::kDeviceToHost) return device_.data();
  return method_ == CopyMethod::kSmKernel ? host_device_pointer_ : registration_->host().data();
}

std::byte* CopyStream::copy_destination() const {
  if (peer_) return peer_->transfer == PeerTransfer::kWrite ? peer_->buffer.data() : device_.data();
  if (direction_ == Direction::kHostToDevice) return device_.data();
  return method_ == CopyMethod::kSmKernel ? host_device_pointer_ : registration_->host().data();
}

std::byte* CopyStream::kernel_view_of_source() const {
  if (peer_) return const_cast<std::byte*>(copy_source());
  return direction_ == Direction::kHostToDevice ? host_device_pointer_ : device_.data();
}

std::byte* CopyStream::kernel_view_of_destination() const {
  if (peer_) return copy_destination();
  return direction_ == Direction::kHostToDevice ? device_.data() : host_device_pointer_;
}

const Stream& CopyStream::destination_stream() const { return writes_to_peer() ? peer_->stream : stream_; }

int CopyStream::destination_blocks() const { return writes_to_peer() ? peer_->grid_blocks : grid_blocks_; }

Status CopyStream::prepare_destination() {
  const Stream& poisoner = destination_stream();
  PCIEVAL_TRY_STATUS(detail::use_device(poisoner.ordinal()));
  PCIEVAL_TRY_STATUS(
      detail::launch_poison(poisoner, destination_blocks(), kernel_view_of_destination(), shape_.size_bytes));
  // The caller waits for this stream's own stream only: a poison on the
  // peer's is waited for here, before any stream is held.
  if (writes_to_peer()) return poisoner.synchronize();
  return ok_status();
}

Status CopyStream::enqueue(Latch& latch, CuEvent start_after, bool hold) {
  if (hold) PCIEVAL_TRY_STATUS(latch.hold(stream_));
  if (start_after != nullptr) PCIEVAL_TRY_STATUS(stream_.wait_for(start_after));
  PCIEVAL_TRY_STATUS(events_.record_start(stream_));
  const bool to_device = direction_ == Direction::kHostToDevice;
  const CudaDriverApi& api = detail::cu();
  for (int i = 0; i < shape_.copies; ++i) {
    if (method_ == CopyMethod::kCopyEngine && peer_) {
      // On this stream, so this device's copy engine moves the bytes; the
      // driver stages them through host memory when peer access is off.
      const bool write = peer_->transfer == PeerTransfer::kWrite;
      CuContext destination_context = write ? peer_->peer_context : peer_->own_context;
      CuContext source_context = write ? peer_->own_context : peer_->peer_context;
      const CuResult code = api.memcpy_peer_async(detail::device_address(copy_destination()), destination_context,
                                                  detail::device_address(copy_source()), source_context,
                                                  shape_.size_bytes, stream_.handle());
      if (code != kCudaSuccess) return detail::device_error(ordinal(), "cuMemcpyPeerAsync", code);
    } else if (method_ == CopyMethod::kCopyEngine) {
      // The host side is the registered range itself (pinned: the copy
      // engine reads or writes it by DMA); the device side its buffer.
      const CuResult code = to_device ? api.memcpy_htod_async(detail::device_address(copy_destination()), copy_source(),
                                                              shape_.size_bytes, stream_.handle())
                                      : api.memcpy_dtoh_async(copy_destination(), detail::device_address(copy_source()),
                                                              shape_.size_bytes, stream_.handle());
      if (code != kCudaSuccess) {
        return detail::device_error(ordinal(), to_device ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyDtoHAsync_v2", code);
      }
    } else {
      PCIEVAL_TRY_STATUS(
          detail::launch_sm_copy(stream_, grid_blocks_, copy_destination(), copy_source(), shape_.size_bytes));
    }
  }
  return events_.record_end(stream_);
}

Result<double> CopyStream::elapsed_s(const PollPolicy& policy) const {
  return events_.elapsed_s(policy, operation_name(direction_, method_));
}

Result<std::uint64_t> CopyStream::count_destination_mismatches() const {
  const Stream& checker = destination_stream();
  PCIEVAL_TRY_STATUS(detail::use_device(checker.ordinal()));
  return detail::count_mismatches_with(checker, destination_blocks(), kernel_view_of_destination(), shape_.size_bytes,
                                       seed_, counter_, readback_);
}

// --- run_latched_trial

Result<TrialTiming> run_latched_trial(std::span<CopyStream* const> streams, Latch& latch, double operation_timeout_s) {
  if (streams.empty()) return make_error("a trial needs at least one copy stream");
  std::uint64_t trial_bytes = 0;
  for (const CopyStream* stream : streams) trial_bytes += stream->bytes_per_trial();
  const double deadline_s = copy_deadline_s(trial_bytes, latch.timeout_s(), operation_timeout_s);
  const auto started = std::chrono::steady_clock::now();
  // Each wait gets what is left of the one deadline, so a trial of many streams
  // still gives up within it; never less than a poll, so a stream already done
  // is still seen as done.
  const auto remaining = [&] {
    return PollPolicy{std::max(deadline_s - seconds_since(started), 1e-3), kDefaultPollInterval};
  };
  // The one clock of the trial's wall time (TrialTiming::wall_s), on the
  // first stream's device, when there is more than one stream.
  std::optional<EventPair> clock;
  if (streams.size() > 1) {
    auto created = EventPair::create(streams[0]->ordinal());
    if (!created) return make_error(streams[0]->label() + ": " + created.error().message);
    clock.emplace(std::move(created).value());
  }
  TrialTiming timing;
  {
    TrialCleanup cleanup(streams, latch, PollPolicy{deadline_s, kDefaultPollInterval});
    for (CopyStream* stream : streams) {
      if (auto status = stream->prepare_destination(); !status) {
        return make_error(stream->label() + ": " + status.error().message);
      }
    }
    for (CopyStream* stream : streams) {
      if (auto status = stream->stream().synchronize(remaining()); !status) {
        return make_error(stream->label() + ": " + status.error().message);
      }
    }
    latch.arm();
    if (clock) {
      const Stream& first = streams[0]->stream();
      if (auto held = latch.hold(first); !held) return make_error(streams[0]->label() + ": " + held.error().message);
      if (auto clock_started = clock->record_start(first); !clock_started) {
        return make_error(streams[0]->label() + ": " + clock_started.error().message);
      }
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      // The first stream is already held, and its clock start is behind it
      // on its own stream; every other stream waits for that start.
      const bool first_of_clock = clock.has_value() && i == 0;
      CuEvent start_after = clock.has_value() && i > 0 ? clock->start_event() : nullptr;
      if (auto status = streams[i]->enqueue(latch, start_after, !first_of_clock); !status) {
        return make_error(streams[i]->label() + ": " + status.error().message);
      }
    }
    if (clock) {
      const Stream& first = streams[0]->stream();
      for (std::size_t i = 1; i < streams.size(); ++i) {
        if (auto waited = first.wait_for(streams[i]->events().end_event()); !waited) {
          return make_error(streams[0]->label() + ": " + waited.error().message);
        }
      }
      if (auto ended = clock->record_end(first); !ended) {
        return make_error(streams[0]->label() + ": " + ended.error().message);
      }
    }
    latch.release();
    for (CopyStream* stream : streams) {
      auto seconds = stream->elapsed_s(remaining());
      if (!seconds) return make_error(stream->label() + ": " + seconds.error().message);
      timing.stream_s.push_back(seconds.value());
    }
  }
  // Every stream is idle here, so the spin kernels have written their flag.
  if (latch.timed_out()) {
    return make_error("the latch timed out after " + std::to_string(latch.timeout_s()) +
                      " s before every copy of the trial was queued, so the copies started early and their time "
                      "includes queueing; the trial is not reported");
  }
  for (CopyStream* stream : streams) {
    auto mismatches = stream->count_destination_mismatches();
    if (!mismatches) return make_error(stream->label() + ": verification: " + mismatches.error().message);
    if (mismatches.value() != 0) {
      return mismatch_error(stream->label(), mismatches.value(), stream->shape().size_bytes);
    }
  }

  if (!clock) {
    timing.wall_s = timing.stream_s[0];
    return timing;
  }
  // Every stream is done, and the clock's end follows every stream's end.
  auto wall_s = clock->elapsed_s(remaining(), "the end of the trial's last stream");
  if (!wall_s) return make_error(streams[0]->label() + ": " + wall_s.error().message);
  timing.wall_s = wall_s.value();
  return timing;
}

// --- PageableCopyStream

Result<PageableCopyStream> PageableCopyStream::create(int ordinal, Direction direction, std::span<std::byte> host,
                                                      std::uint32_t seed) {
  PCIEVAL_TRY_STATUS(check_stream_arguments(direction, host));
  PCIEVAL_TRY_STATUS(preload_kernels(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(Stream stream, Stream::create(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer device, DeviceBuffer::allocate(ordinal, host.size()));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer counter, DeviceBuffer::allocate(ordinal, sizeof(unsigned long long)));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer readback, PinnedHostBuffer::allocate(ordinal, sizeof(unsigned long long)));
  if (direction == Direction::kHostToDevice) {
    fill_pattern_host(host, seed);
  } else {
    PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(ordinal));
    PCIEVAL_TRY_STATUS(detail::launch_fill_pattern(stream, blocks, device.data(), device.size_bytes(), seed));
    PCIEVAL_TRY_STATUS(stream.synchronize());
  }
  return PageableCopyStream(direction, seed, host, std::move(stream), std::move(device), std::move(counter),
                            std::move(readback));
}

std::string PageableCopyStream::label() const {
  return stream_label(ordinal(), direction_, CopyMethod::kCopyEngine) + " pageable";
}

bool PageableCopyStream::abandoned() const { return cuda_device_retired(ordinal()); }

Result<double> PageableCopyStream::run_trial(const std::function<void()>& on_copy_thread) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(ordinal()));
  const bool to_device = direction_ == Direction::kHostToDevice;
  if (to_device) {
    PCIEVAL_TRY_STATUS(detail::launch_poison(stream_, blocks, device_.data(), device_.size_bytes()));
    PCIEVAL_TRY_STATUS(stream_.synchronize());
  } else {
    poison_host(host_);
  }

  // On the stream's own stream, which nothing else uses: the copy then waits
  // for nothing but itself, as a synchronous copy on an idle device would,
  // and can be waited for with a deadline instead of a device synchronize.
  const CuDevicePtr device_side = detail::device_address(device_.data());
  std::byte* host_side = host_.data();
  const std::size_t bytes = host_.size();
  const int ordinal_of_copy = ordinal();
  CuStream stream = stream_.handle();
  const double deadline_s = copy_deadline_s(bytes, 0.0);
  const std::string what = "pageable copy " + std::string(to_string(direction_));
  const std::string where = detail::where_is(ordinal_of_copy);
  // The thread times the copy itself, so the time does not include starting
  // or waking threads. It owns only values: the buffers it reaches are kept
  // by their owners when the device is retired (abandoned()).
  DeadlineCall<PageableCopy> copy = call_with_deadline(
      [ordinal_of_copy, to_device, device_side, host_side, bytes, stream, deadline_s, what, on_copy_thread] {
        PageableCopy out;
        if (on_copy_thread) on_copy_thread();
        if (auto current = detail::use_device(ordinal_of_copy); !current) {
          out.not_current = current.error().message;
          return out;
        }
        const CudaDriverApi& api = detail::cu();
        out.started = std::chrono::steady_clock::now();
        out.code = to_device ? api.memcpy_htod_async(device_side, host_side, bytes, stream)
                             : api.memcpy_dtoh_async(host_side, device_side, bytes, stream);
        if (out.code != kCudaSuccess) {
          out.failed_call = to_device ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyDtoHAsync_v2";
          return out;
        }
        // A pageable host-to-device copy returns once the driver has staged
        // the data, possibly before the last DMA lands. Polled without
        // sleeping: the host clock is the timer here, and a sleep would add
        // to the time.
        out.waited = wait_until_ready(
            [ordinal_of_copy, stream] {
              return detail::device_ready(ordinal_of_copy, "cuStreamQuery", detail::cu().stream_query(stream));
            },
            PollPolicy{std::max(deadline_s - seconds_since(out.started), 1e-3), std::chrono::microseconds(0)}, what);
        out.ended = std::chrono::steady_clock::now();
        return out;
      },
      deadline_s + kPageableThreadGraceS);
  if (copy.outcome != DeadlineOutcome::kReturned) {
    return make_error(label() + ": " +
                      detail::blocking_call_error(ordinal_of_copy, copy.outcome, what, deadline_s, where).message);
  }
  const PageableCopy& done = *copy.value;
  if (!done.not_current.empty()) return make_error(label() + ": " + done.not_current);
  if (done.failed_call != nullptr) {
    return make_error(label() + ": " + detail::device_error(ordinal_of_copy, done.failed_call, done.code).message);
  }
  if (done.waited.outcome == WaitOutcome::kFailed) {
    return make_error(label() + ": " + what + ": " + done.waited.message);
  }
  if (done.waited.outcome == WaitOutcome::kTimedOut) {
    // Stated against the whole deadline, not what was left of it when the
    // thread began to wait.
    const std::string late = what + " did not complete within " + format_timeout_s(deadline_s);
    return make_error(label() + ": " + detail::retire_after_timeout(ordinal_of_copy, late, where).message);
  }

  std::uint64_t mismatches = 0;
  if (to_device) {
    auto counted = detail::count_mismatches_with(stream_, blocks, device_.data(), device_.size_bytes(), seed_, counter_,
                                                 readback_);
    if (!counted) return make_error(label() + ": verification: " + counted.error().message);
    mismatches = counted.value();
  } else {
    mismatches = count_mismatches_host(host_, seed_);
  }
  if (mismatches != 0) return mismatch_error(label(), mismatches, host_.size());
  return std::chrono::duration<double>(done.ended - done.started).count();
}

}  // namespace pcieval
