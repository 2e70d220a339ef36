// Timed copies between host and device, and between two devices: the
// operations bench/ builds its GPU probes from.
//
// A CopyStream is one GPU copying in one direction by one method, with its
// own stream and event pair: between the host and the GPU, or between the GPU
// and a peer GPU's memory (create_peer). run_latched_trial runs one trial over any set of
// streams at once (one GPU one way; both directions of one GPU; every GPU of a
// group): every stream's copies are queued behind one latch, the latch is
// opened, each stream is timed by its own events, and every stream's destination
// is verified after the timed region. A trial that does not verify, whose
// latch timed out, or in which any CUDA call failed returns an error, never a
// time. No wait blocks for ever: every one polls with a deadline
// (deadline_wait.hpp), and a device whose work misses it is retired
// (retired_devices.hpp); its streams then leak their resources rather than
// free them under a device that may still be copying.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/deadline_wait.hpp"
#include "kernels/latch.hpp"
#include "kernels/resources.hpp"
#include "model/measurement.hpp"
#include "model/result.hpp"

namespace pcieval {

// One trial of a stream: `copies` back-to-back copies of `size_bytes` each, all
// from the start of the source to the start of the destination. Several copies
// per trial keep a trial of a small size long enough to time.
struct CopyShape {
  std::size_t size_bytes = 0;  // a multiple of kPatternGranuleBytes
  int copies = 1;
};

// Which way a peer copy moves its bytes, seen from the GPU whose copy engine
// or SMs run it: kWrite copies its own buffer into the peer's memory, kRead
// the peer's buffer into its own.
enum class PeerTransfer { kWrite, kRead };

class CopyStream {
 public:
  // A stream of device `ordinal` in `direction` (kHostToDevice or
  // kDeviceToHost) by `method` (kCopyEngine: cudaMemcpyAsync; kSmKernel: a
  // grid-stride kernel loading and storing 16 bytes per thread over mapped
  // host memory, with enough blocks to fill every SM). The stream registers
  // `host` (mapped, pinned where its pages already are), allocates a device
  // buffer of the same size, fills the source with the pattern for `seed`,
  // preloads the kernels, and takes the shape {host.size(), 1}.
  // REQUIRES: `host` outlives the stream, is 16-byte aligned (page-aligned is
  // best), its size is a non-zero multiple of kPatternGranuleBytes, and no
  // other registration covers it.
  [[nodiscard]] static Result<CopyStream> create(int ordinal, Direction direction, CopyMethod method,
                                                 std::span<std::byte> host, std::uint32_t seed);
  // A stream of device `ordinal` copying to or from device `peer`'s memory
  // (direction kDeviceToDevice), one buffer of `bytes` on each device.
  // kCopyEngine: cuMemcpyPeerAsync on `ordinal`'s stream, so `ordinal`'s copy
  // engine moves the bytes, directly when peer access from `ordinal` to
  // `peer` is on, staged through host memory by the driver when it is off.
  // kSmKernel: the SM copy kernel of `ordinal` over `peer`'s address, which
  // needs that peer access on (PeerAccessScope). The source carries the
  // pattern for `seed`; the destination is poisoned before and checked after
  // each trial by a stream of the device that holds it.
  // REQUIRES: ordinal != peer; `bytes` a non-zero multiple of 16.
  [[nodiscard]] static Result<CopyStream> create_peer(int ordinal, int peer, PeerTransfer transfer, CopyMethod method,
                                                      std::size_t bytes, std::uint32_t seed);

  CopyStream(const CopyStream&) = delete;
  CopyStream& operator=(const CopyStream&) = delete;
  CopyStream(CopyStream&&) noexcept = default;
  CopyStream& operator=(CopyStream&&) noexcept = default;
  // Waits for the stream's stream first (with a deadline), so no copy is in
  // flight when its buffers are freed and its host range unregistered (and
  // for the peer's stream, of a peer stream). On a retired device it waits
  // for nothing and releases nothing.
  ~CopyStream();

  // Changes the shape of the following trials. Error: a size of zero, not a
  // multiple of 16, or above the capacity; fewer than one copy.
  [[nodiscard]] Status reshape(CopyShape shape);

  [[nodiscard]] int ordinal() const { return stream_.ordinal(); }
  // The peer device of a peer stream; -1 for a host stream.
  [[nodiscard]] int peer() const { return peer_ ? peer_->ordinal : -1; }
  [[nodiscard]] Direction direction() const { return direction_; }
  [[nodiscard]] CopyMethod method() const { return method_; }
  [[nodiscard]] CopyShape shape() const { return shape_; }
  [[nodiscard]] std::size_t capacity_bytes() const { return device_.size_bytes(); }
  // shape().size_bytes * shape().copies.
  [[nodiscard]] std::uint64_t bytes_per_trial() const;
  // "cuda 2 h2d sm", "cuda 0 d2d ce write to cuda 1": how errors of this
  // stream name it.
  [[nodiscard]] std::string label() const;

  // The steps of a trial, in the order run_latched_trial calls them.
  // Queues the poisoning of the destination (untimed). The caller waits for
  // it before holding any stream: a poison kernel still running when the latch
  // opens would delay this stream's start and load the link under the others.
  [[nodiscard]] Status prepare_destination();
  // Queues: hold on the latch (unless `hold` is false: the caller held the
  // stream already), a wait for `start_after` when not null (the trial's
  // clock start, on another stream), start event, the copies, end event.
  // Nothing waits.
  [[nodiscard]] Status enqueue(Latch& latch, CuEvent start_after = nullptr, bool hold = true);
  // Waits for the end event, until policy.timeout_s; the seconds from the
  // first copy's start to the last copy's end. A timeout is an error naming
  // the operation ("copy-engine copy h2d did not complete within 30 s on
  // 0000:17:00.0; ...") and retires the device.
  [[nodiscard]] Result<double> elapsed_s(const PollPolicy& policy = {}) const;
  // Whether the stream's device was retired: its resources are leaked, and so
  // must be its host range (the registration stays).
  [[nodiscard]] bool abandoned() const;
  // Waits for the stream and returns how many 32-bit words of the destination
  // (its first shape().size_bytes) differ from the pattern.
  [[nodiscard]] Result<std::uint64_t> count_destination_mismatches() const;

  // The buffers, for tests that corrupt a destination on purpose.
  [[nodiscard]] DeviceBuffer& device_buffer() { return device_; }
  // Empty for a peer stream.
  [[nodiscard]] std::span<std::byte> host_buffer() const {
    return registration_ ? registration_->host() : std::span<std::byte>();
  }
  [[nodiscard]] const Stream& stream() const { return stream_; }
  [[nodiscard]] const EventPair& events() const { return events_; }

 private:
  // The peer side of a peer stream: its device, buffer and the stream that
  // fills, poisons and checks that buffer.
  struct PeerSide {
    int ordinal = -1;
    PeerTransfer transfer = PeerTransfer::kWrite;
    DeviceBuffer buffer;
    Stream stream;
    int grid_blocks = 0;
    CuContext own_context = nullptr;
    CuContext peer_context = nullptr;
  };

  CopyStream(Direction direction, CopyMethod method, std::uint32_t seed, Stream stream, EventPair events,
             std::optional<HostRegistration> registration, DeviceBuffer device, DeviceBuffer counter,
             PinnedHostBuffer readback, std::byte* host_device_pointer, int grid_blocks)
      : direction_(direction),
        method_(method),
        seed_(seed),
        stream_(std::move(stream)),
        events_(std::move(events)),
        registration_(std::move(registration)),
        device_(std::move(device)),
        counter_(std::move(counter)),
        readback_(std::move(readback)),
        host_device_pointer_(host_device_pointer),
        grid_blocks_(grid_blocks),
        shape_{device_.size_bytes(), 1} {}

  // Source and destination as the copy sees them: host addresses for the copy
  // engine, the mapped device address of the host range for SM kernels.
  [[nodiscard]] const std::byte* copy_source() const;
  [[nodiscard]] std::byte* copy_destination() const;
  // The same buffers as the pattern kernels reach them (device addresses).
  [[nodiscard]] std::byte* kernel_view_of_source() const;
  [[nodiscard]] std::byte* kernel_view_of_destination() const;
  // The stream and grid that poison and check the destination: the peer's
  // when a peer stream writes.
  [[nodiscard]] const Stream& destination_stream() const;
  [[nodiscard]] int destination_blocks() const;
  [[nodiscard]] bool writes_to_peer() const { return peer_ && peer_->transfer == PeerTransfer::kWrite; }

  Direction direction_;
  CopyMethod method_;
  std::uint32_t seed_;
  Stream stream_;
  EventPair events_;
  std::optional<HostRegistration> registration_;  // none for a peer stream
  DeviceBuffer device_;
  DeviceBuffer counter_;       // one 64-bit word: the mismatch count of the check kernel
  PinnedHostBuffer readback_;  // where that count is copied to without blocking the host
  std::byte* host_device_pointer_;
  int grid_blocks_;
  CopyShape shape_;
  // A peer stream's other side; null for a host stream. The destructor
  // waits for both devices' streams before any buffer is freed.
  std::unique_ptr<PeerSide> peer_;
};

// One trial's times.
struct TrialTiming {
  // Each stream's own time, first copy's start to last copy's end (its events),
  // in the order of the streams.
  std::vector<double> stream_s;
  // From the earliest start to the latest end over every stream, on one
  // clock: the first stream's device. That stream records a start event
  // when the latch opens, every stream's copies wait for it, and the first
  // stream records the end event only after every stream's last copy (as
  // nvbandwidth times its all-GPU copies). So start skew between devices and
  // a device that ends late are both inside the span. One stream: its own
  // time.
  double wall_s = 0;
};

// Runs one trial over every stream at once: arms the latch, queues every stream
// behind it, releases it, waits for every stream, then checks that no spin
// kernel timed out and that every destination matches the pattern. Errors
// name the stream. On an error the latch is still released and every stream
// waited for, so the streams can be used (or destroyed) safely.
// Every wait of the trial shares one deadline: copy_deadline_s of the trial's
// bytes over all streams, the latch's timeout and `operation_timeout_s`. A stream
// still copying then is an error naming it and its operation, and its device
// is retired; the streams of the other streams are still waited for.
// REQUIRES: !streams.empty().
[[nodiscard]] Result<TrialTiming> run_latched_trial(std::span<CopyStream* const> streams, Latch& latch,
                                                    double operation_timeout_s = kDefaultOperationTimeoutS);

// A copy through pageable memory: plain host memory that CUDA did not
// register, which the driver stages through its own pinned buffers. Timed on
// the host clock around the copy and a wait for the stream's stream (events
// cannot time a synchronous copy, and a pageable copy may return before its
// last DMA ends); the wait polls without sleeping, so the host clock stops
// when the copy ends. A pageable cudaMemcpyAsync blocks the host thread while
// it stages, so the copy and that wait run on a thread of their own
// (blocking_call.hpp), and the trial gives up at copy_deadline_s of its bytes;
// the device is then retired, and the abandoned copy may still read or write
// the host range, so its owner must keep it (abandoned()). Verified after
// each trial: on the device for host-to-device, on the host for
// device-to-host.
class PageableCopyStream {
 public:
  // REQUIRES: as CopyStream::create, except that `host` is not registered.
  [[nodiscard]] static Result<PageableCopyStream> create(int ordinal, Direction direction, std::span<std::byte> host,
                                                         std::uint32_t seed);

  PageableCopyStream(const PageableCopyStream&) = delete;
  PageableCopyStream& operator=(const PageableCopyStream&) = delete;
  PageableCopyStream(PageableCopyStream&&) noexcept = default;
  PageableCopyStream& operator=(PageableCopyStream&&) noexcept = default;
  // run_trial waits for its work: nothing is in flight between calls, except
  // on a retired device, whose resources the members then leak.
  ~PageableCopyStream() = default;

  [[nodiscard]] int ordinal() const { return stream_.ordinal(); }
  [[nodiscard]] Direction direction() const { return direction_; }
  [[nodiscard]] std::uint64_t bytes_per_trial() const { return host_.size(); }
  [[nodiscard]] std::string label() const;
  // Whether the stream's device was retired: a copy given up at its deadline
  // may still read or write the host range, so the range must be neither
  // freed nor reused.
  [[nodiscard]] bool abandoned() const;

  // Poisons the destination, copies the whole buffer once (timed), verifies.
  // Returns the seconds of the copy. `on_copy_thread`, when given, runs first
  // on the thread that makes the copy (bench/ binds it to the buffer's NUMA
  // node there: the driver stages pageable memory on the calling thread's
  // CPU); it must own what it touches, as the thread may be abandoned.
  [[nodiscard]] Result<double> run_trial(const std::function<void()>& on_copy_thread = {});

 private:
  PageableCopyStream(Direction direction, std::uint32_t seed, std::span<std::byte> host, Stream stream,
                     DeviceBuffer device, DeviceBuffer counter, PinnedHostBuffer readback)
      : direction_(direction),
        seed_(seed),
        host_(host),
        stream_(std::move(stream)),
        device_(std::move(device)),
        counter_(std::move(counter)),
        readback_(std::move(readback)) {}

  Direction direction_;
  std::uint32_t seed_;
  std::span<std::byte> host_;
  Stream stream_;  // for the device-side pattern kernels
  DeviceBuffer device_;
  DeviceBuffer counter_;       // one 64-bit word: the mismatch count of the check kernel
  PinnedHostBuffer readback_;  // where that count is copied to without blocking the host
};

}  // namespace pcieval
