// RAII owners of the CUDA handles the copies use. Move-only; destructors are
// noexcept, log nothing and never throw: a handle that cannot be released
// (the context is already gone) is leaked, not reported. On a retired device
// (retired_devices.hpp) destructors release nothing: a free may synchronize
// the device, and a wedged one would block it for ever.
//
// Plain C++ on the driver API (cuda_driver.hpp, whose opaque handle structs
// are cuda.h's own: a stream's handle is what NCCL takes as cudaStream_t), so
// bench/ and the tests need no CUDA header.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "kernels/cuda_driver.hpp"
#include "kernels/deadline_wait.hpp"
#include "model/result.hpp"

namespace pcieval {

// A stream on one device. Non-blocking: it never waits for the legacy
// default stream, so another library's synchronous call cannot stall a trial.
class Stream {
 public:
  [[nodiscard]] static Result<Stream> create(int ordinal);

  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  ~Stream();

  [[nodiscard]] int ordinal() const { return ordinal_; }
  [[nodiscard]] CUstream_st* handle() const { return stream_; }
  // Makes work queued on this stream after the call wait until `event` (of
  // any device) has completed (cuStreamWaitEvent); the host does not wait.
  [[nodiscard]] Status wait_for(CuEvent event) const;
  // Waits for everything queued so far, polling (deadline_wait.hpp). Returns
  // the first error of the work (a kernel fault surfaces here), or, when the
  // work is not done by policy.timeout_s, an error saying so; the device is
  // then retired.
  [[nodiscard]] Status synchronize(const PollPolicy& policy = {}) const;

 private:
  Stream(int ordinal, CUstream_st* stream) : ordinal_(ordinal), stream_(stream) {}

  int ordinal_ = -1;
  CUstream_st* stream_ = nullptr;
};

// Two timing events around work on one stream. Event time has a resolution of
// about half a microsecond, so a timed region should last milliseconds.
class EventPair {
 public:
  [[nodiscard]] static Result<EventPair> create(int ordinal);

  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  EventPair(EventPair&& other) noexcept;
  EventPair& operator=(EventPair&& other) noexcept;
  ~EventPair();

  [[nodiscard]] Status record_start(const Stream& stream);
  [[nodiscard]] Status record_end(const Stream& stream);
  // Waits for the end event, polling until policy.timeout_s, and returns the
  // seconds from start to end. A timeout's error begins with `what` ("<what>
  // did not complete within 30 s ...") and retires the device.
  [[nodiscard]] Result<double> elapsed_s(const PollPolicy& policy = {},
                                         const std::string& what = "the timed work") const;

  [[nodiscard]] int ordinal() const { return ordinal_; }
  // The events themselves, for another stream to wait for (Stream::wait_for).
  [[nodiscard]] CuEvent start_event() const { return start_; }
  [[nodiscard]] CuEvent end_event() const { return end_; }

 private:
  EventPair(int ordinal, CUevent_st* start, CUevent_st* end) : ordinal_(ordinal), start_(start), end_(end) {}

  int ordinal_ = -1;
  CUevent_st* start_ = nullptr;
  CUevent_st* end_ = nullptr;
};

// Memory on one device (cuMemAlloc: at least 256-byte aligned).
class DeviceBuffer {
 public:
  [[nodiscard]] static Result<DeviceBuffer> allocate(int ordinal, std::size_t bytes);

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  // A device address: never dereference it on the host.
  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::size_t size_bytes() const { return size_bytes_; }
  [[nodiscard]] int ordinal() const { return ordinal_; }

  // Copies of a few bytes, for setting up and checking (never for timed
  // work); they return when the copy is done. Not a synchronous copy, which blocks
  // for ever on a stuck device: the bytes go through a pinned stage on a
  // stream of their own, polled until policy.timeout_s. A timeout is an error
  // and retires the device; the caller's span is never touched by the
  // device, so nothing late can land in it.
  // REQUIRES: offset + host.size() <= size_bytes().
  [[nodiscard]] Status copy_from_host(std::size_t offset, std::span<const std::byte> host,
                                      const PollPolicy& policy = {});
  [[nodiscard]] Status copy_to_host(std::size_t offset, std::span<std::byte> host, const PollPolicy& policy = {}) const;

 private:
  DeviceBuffer(int ordinal, std::byte* data, std::size_t size_bytes)
      : ordinal_(ordinal), data_(data), size_bytes_(size_bytes) {}

  int ordinal_ = -1;
  std::byte* data_ = nullptr;
  std::size_t size_bytes_ = 0;
};

// A little page-locked host memory from CUDA (cuMemHostAlloc): what a copy on
// a stream lands in (or comes from) without blocking the host, so the host
// can wait for it with a deadline; a copy to pageable memory blocks inside
// the driver instead. For readback words and staging only: cuMemHostAlloc
// places pages wherever the calling thread runs, so measured buffers use
// HostRegistration. Zero-filled; portable (pinned for every context). The
// destructor frees the memory unless the
// device it was allocated for was retired: a late copy of that device may
// still land in it.
class PinnedHostBuffer {
 public:
  [[nodiscard]] static Result<PinnedHostBuffer> allocate(int ordinal, std::size_t bytes);

  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept;
  ~PinnedHostBuffer();

  // A host address the device also reaches (unified addressing).
  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::size_t size_bytes() const { return size_bytes_; }
  [[nodiscard]] int ordinal() const { return ordinal_; }

 private:
  PinnedHostBuffer(int ordinal, std::byte* data, std::size_t size_bytes)
      : ordinal_(ordinal), data_(data), size_bytes_(size_bytes) {}

  int ordinal_ = -1;
  std::byte* data_ = nullptr;
  std::size_t size_bytes_ = 0;
};

// Page-locks an existing host range (cuMemHostRegister) so copy engines can
// DMA it, and optionally maps it into the devices' address space so kernels
// can load and store it over PCIe. The range keeps its NUMA placement:
// registering pins pages where they are, which is why pcieval allocates host
// buffers on a chosen node first and registers them after, instead of
// cuMemHostAlloc (which places pages wherever the calling thread runs).
// Registration is portable: every device's context sees the range as pinned.
// The destructor unregisters. REQUIRES: the range outlives the registration,
// and no other registration covers any of its pages.
class HostRegistration {
 public:
  // cuMemHostRegister cannot be polled, and on a sick driver it can block for
  // ever, so it runs on a thread of its own (blocking_call.hpp) and is given
  // up after copy_deadline_s(host.size(), 0, timeout_floor_s): pinning is
  // never slower than a stuck-slow copy. A timeout is an error and retires
  // device `ordinal`; the late call may still pin the range, so its owner
  // must then neither free nor reuse it (check cuda_device_retired(ordinal)
  // after an error).
  [[nodiscard]] static Result<HostRegistration> register_range(int ordinal, std::span<std::byte> host, bool mapped,
                                                               double timeout_floor_s = kDefaultOperationTimeoutS);

  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  HostRegistration(HostRegistration&& other) noexcept;
  HostRegistration& operator=(HostRegistration&& other) noexcept;
  ~HostRegistration();

  [[nodiscard]] std::span<std::byte> host() const { return host_; }
  [[nodiscard]] bool mapped() const { return mapped_; }
  // The address kernels of device `ordinal` use for the range. Error unless
  // the registration is mapped.
  [[nodiscard]] Result<std::byte*> device_pointer(int ordinal) const;

 private:
  HostRegistration(int ordinal, std::span<std::byte> host, bool mapped)
      : ordinal_(ordinal), host_(host), mapped_(mapped) {}

  int ordinal_ = -1;  // the device it was registered through
  std::span<std::byte> host_;
  bool mapped_ = false;
};

}  // namespace pcieval
