#include "kernels/resources.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/launchers.hpp"

namespace pcieval {

// --- Stream

Result<Stream> Stream::create(int ordinal) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  CuStream stream = nullptr;
  PCIEVAL_CU_TRY("cuStreamCreate", detail::cu().stream_create(&stream, kCuStreamNonBlocking));
  return Stream(ordinal, stream);
}

Stream::Stream(Stream&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)), stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Stream old(std::move(*this));
    ordinal_ = std::exchange(other.ordinal_, -1);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() {
  // Errors are ignored: a destructor has no one to tell, and the only
  // failure (a context already torn down) leaves nothing to release.
  if (stream_ != nullptr && detail::current_for_release(ordinal_)) {
    static_cast<void>(detail::cu().stream_destroy(stream_));
  }
}

Status Stream::synchronize(const PollPolicy& policy) const {
  if (stream_ == nullptr) return make_error("synchronize on an empty (moved-from) stream");
  if (auto reason = cuda_device_retired_reason(ordinal_)) return make_error(*reason);
  // Polled, not cuStreamSynchronize: that one never returns from a stuck
  // device.
  CuStream stream = stream_;
  const int ordinal = ordinal_;
  return detail::wait_ready(
      ordinal_,
      [ordinal, stream] { return detail::device_ready(ordinal, "cuStreamQuery", detail::cu().stream_query(stream)); },
      policy, "work queued on a stream of CUDA device " + std::to_string(ordinal_));
}

Status Stream::wait_for(CuEvent event) const {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal_));
  PCIEVAL_CU_TRY("cuStreamWaitEvent", detail::cu().stream_wait_event(stream_, event, 0));
  return ok_status();
}

// --- EventPair

Result<EventPair> EventPair::create(int ordinal) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  CuEvent start = nullptr;
  CuEvent end = nullptr;
  PCIEVAL_CU_TRY("cuEventCreate", detail::cu().event_create(&start, kCuEventDefault));
  // Owned from here on, so the second failure cannot leak the first event.
  EventPair pair(ordinal, start, nullptr);
  PCIEVAL_CU_TRY("cuEventCreate", detail::cu().event_create(&end, kCuEventDefault));
  pair.end_ = end;
  return Result<EventPair>(std::move(pair));
}

EventPair::EventPair(EventPair&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)),
      start_(std::exchange(other.start_, nullptr)),
      end_(std::exchange(other.end_, nullptr)) {}

EventPair& EventPair::operator=(EventPair&& other) noexcept {
  if (this != &other) {
    EventPair old(std::move(*this));
    ordinal_ = std::exchange(other.ordinal_, -1);
    start_ = std::exchange(other.start_, nullptr);
    end_ = std::exchange(other.end_, nullptr);
  }
  return *this;
}

EventPair::~EventPair() {
  if ((start_ == nullptr && end_ == nullptr) || !detail::current_for_release(ordinal_)) return;
  if (start_ != nullptr) static_cast<void>(detail::cu().event_destroy(start_));
  if (end_ != nullptr) static_cast<void>(detail::cu().event_destroy(end_));
}

Status EventPair::record_start(const Stream& stream) {
  return detail::cuda_status("cuEventRecord", detail::cu().event_record(start_, stream.handle()));
}

Status EventPair::record_end(const Stream& stream) {
  return detail::cuda_status("cuEventRecord", detail::cu().event_record(end_, stream.handle()));
}

namespace {

// Polled, not cuEventSynchronize: that one never returns from a stuck
// device. The event's own timestamps are untouched by how late the host
// learns it fired.
Status wait_event(int ordinal, CuEvent event, const PollPolicy& policy, const std::string& what) {
  if (auto reason = cuda_device_retired_reason(ordinal)) return make_error(*reason);
  return detail::wait_ready(
      ordinal,
      [ordinal, event] { return detail::device_ready(ordinal, "cuEventQuery", detail::cu().event_query(event)); },
      policy, what);
}

// Milliseconds from `start` to `end`, both done, as seconds.
Result<double> event_seconds(CuEvent start, CuEvent end) {
  float elapsed_ms = 0;
  PCIEVAL_CU_TRY("cuEventElapsedTime", detail::cu().event_elapsed_time(&elapsed_ms, start, end));
  return static_cast<double>(elapsed_ms) * 1e-3;
}

}  // namespace

Result<double> EventPair::elapsed_s(const PollPolicy& policy, const std::string& what) const {
  PCIEVAL_TRY_STATUS(wait_event(ordinal_, end_, policy, what));
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal_));
  return event_seconds(start_, end_);
}

// --- DeviceBuffer

Result<DeviceBuffer> DeviceBuffer::allocate(int ordinal, std::size_t bytes) {
  if (bytes == 0) return make_error("cannot allocate an empty device buffer");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  CuDevicePtr data = 0;
  if (const CuResult code = detail::cu().mem_alloc(&data, bytes); code != kCudaSuccess) {
    return make_error("cannot allocate " + std::to_string(bytes) + " bytes on CUDA device " + std::to_string(ordinal) +
                      ": " + detail::cuda_error("cuMemAlloc_v2", code).message);
  }
  // Kept as a pointer type, as the rest of pcieval speaks of buffers; never
  // dereferenced on the host.
  return DeviceBuffer(ordinal, reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(data)), bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    ordinal_ = std::exchange(other.ordinal_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  // The free synchronizes the device, so a retired one keeps its memory.
  if (data_ != nullptr && detail::current_for_release(ordinal_)) {
    static_cast<void>(detail::cu().mem_free(detail::device_address(data_)));
  }
}

namespace {

Status check_copy_range(std::size_t offset, std::size_t bytes, std::size_t size_bytes) {
  if (offset > size_bytes || bytes > size_bytes - offset) {
    return make_error("copy of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                      " overruns a device buffer of " + std::to_string(size_bytes) + " bytes");
  }
  return ok_status();
}

// Queues a copy between device memory and a caller's pinned stage on a
// stream of its own, and polls it. The stream is released on return, before
// the stage; on a retired device neither is (a late copy may still use them).
// `to_device`: host (the stage) to device, else device to host.
Status staged_copy(int ordinal, bool to_device, std::byte* device, std::byte* host, std::size_t bytes,
                   const PollPolicy& policy) {
  PCIEVAL_ASSIGN_OR_RETURN(Stream stream, Stream::create(ordinal));
  const CudaDriverApi& api = detail::cu();
  const CuResult code = to_device ? api.memcpy_htod_async(detail::device_address(device), host, bytes, stream.handle())
                                  : api.memcpy_dtoh_async(host, detail::device_address(device), bytes, stream.handle());
  if (code != kCudaSuccess) {
    return detail::device_error(ordinal, to_device ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyDtoHAsync_v2", code);
  }
  CuStream handle = stream.handle();
  const std::string what =
      std::string(to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync") + " of " + std::to_string(bytes) + " bytes";
  return detail::wait_ready(
      ordinal,
      [ordinal, handle] { return detail::device_ready(ordinal, "cuStreamQuery", detail::cu().stream_query(handle)); },
      policy, what);
}

}  // namespace

Status DeviceBuffer::copy_from_host(std::size_t offset, std::span<const std::byte> host, const PollPolicy& policy) {
  PCIEVAL_TRY_STATUS(check_copy_range(offset, host.size(), size_bytes_));
  if (host.empty()) return ok_status();
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal_));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer stage, PinnedHostBuffer::allocate(ordinal_, host.size()));
  std::memcpy(stage.data(), host.data(), host.size());
  return staged_copy(ordinal_, true, data_ + offset, stage.data(), host.size(), policy);
}

Status DeviceBuffer::copy_to_host(std::size_t offset, std::span<std::byte> host, const PollPolicy& policy) const {
  PCIEVAL_TRY_STATUS(check_copy_range(offset, host.size(), size_bytes_));
  if (host.empty()) return ok_status();
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal_));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer stage, PinnedHostBuffer::allocate(ordinal_, host.size()));
  PCIEVAL_TRY_STATUS(staged_copy(ordinal_, false, data_ + offset, stage.data(), host.size(), policy));
  std::memcpy(host.data(), stage.data(), host.size());
  return ok_status();
}

// --- PinnedHostBuffer

Result<PinnedHostBuffer> PinnedHostBuffer::allocate(int ordinal, std::size_t bytes) {
  if (bytes == 0) return make_error("cannot allocate an empty pinned host buffer");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  void* data = nullptr;
  // Portable: pinned for every context, so a stage of one device's copy is
  // never pageable to another's.
  if (const CuResult code = detail::cu().mem_host_alloc(&data, bytes, kCuMemHostAllocPortable); code != kCudaSuccess) {
    return make_error("cannot allocate " + std::to_string(bytes) +
                      " bytes of pinned host memory: " + detail::cuda_error("cuMemHostAlloc", code).message);
  }
  // A readback word that a failed copy never wrote must read as zero, not
  // as whatever the allocator left.
  std::memset(data, 0, bytes);
  return PinnedHostBuffer(ordinal, static_cast<std::byte*>(data), bytes);
}

PinnedHostBuffer::PinnedHostBuffer(PinnedHostBuffer&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)) {}

PinnedHostBuffer& PinnedHostBuffer::operator=(PinnedHostBuffer&& other) noexcept {
  if (this != &other) {
    PinnedHostBuffer old(std::move(*this));
    ordinal_ = std::exchange(other.ordinal_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
  }
  return *this;
}

PinnedHostBuffer::~PinnedHostBuffer() {
  // A late copy of a retired device may still land here, and cuMemFreeHost
  // may synchronize with it: the memory is leaked instead.
  if (data_ != nullptr && detail::current_for_release(ordinal_)) static_cast<void>(detail::cu().mem_free_host(data_));
}

// --- HostRegistration

namespace {

// What the thread of a registration reports back.
struct RegisterOutcome {
  CuResult code = kCudaSuccess;
  std::string failure;  // use_device's error on that thread, if any
};

}  // namespace

Result<HostRegistration> HostRegistration::register_range(int ordinal, std::span<std::byte> host, bool mapped,
                                                          double timeout_floor_s) {
  if (host.empty()) return make_error("cannot register an empty host range");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  const unsigned int flags = kCuMemHostRegisterPortable | (mapped ? kCuMemHostRegisterDeviceMap : 0U);
  // On a thread of its own (the current device is per thread, so it is set
  // there too). The thread touches only the range and values it owns: if it
  // is abandoned, the range's owner keeps the range (the device is retired).
  void* data = host.data();
  const std::size_t bytes = host.size();
  const double timeout_s = copy_deadline_s(bytes, 0.0, timeout_floor_s);
  const std::string where = detail::where_is(ordinal);
  DeadlineCall<RegisterOutcome> registered = call_with_deadline(
      [ordinal, data, bytes, flags] {
        RegisterOutcome out;
        if (auto current = detail::use_device(ordinal); !current) {
          out.failure = current.error().message;
          return out;
        }
        out.code = detail::cu().mem_host_register(data, bytes, flags);
        return out;
      },
      timeout_s);
  const std::string what = "cuMemHostRegister of " + std::to_string(bytes) + " bytes";
  if (registered.outcome != DeadlineOutcome::kReturned) {
    // Pinning is host work: a slow host, not a hung GPU.
    return detail::host_work_call_error(ordinal, registered.outcome, what, timeout_s, where);
  }
  const RegisterOutcome& outcome = *registered.value;
  if (!outcome.failure.empty()) return make_error(outcome.failure);
  if (outcome.code != kCudaSuccess) {
    return make_error("cannot page-lock " + std::to_string(bytes) +
                      " bytes of host memory: " + detail::cuda_error("cuMemHostRegister_v2", outcome.code).message);
  }
  return HostRegistration(ordinal, host, mapped);
}

HostRegistration::HostRegistration(HostRegistration&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)),
      host_(std::exchange(other.host_, {})),
      mapped_(std::exchange(other.mapped_, false)) {}

HostRegistration& HostRegistration::operator=(HostRegistration&& other) noexcept {
  if (this != &other) {
    HostRegistration old(std::move(*this));
    ordinal_ = std::exchange(other.ordinal_, -1);
    host_ = std::exchange(other.host_, {});
    mapped_ = std::exchange(other.mapped_, false);
  }
  return *this;
}

HostRegistration::~HostRegistration() {
  // On a retired device the range stays registered (and its pages pinned):
  // a late DMA of the wedged device then lands in pages nobody reuses. The
  // owner of the range must not free it either (bench/ keeps such buffers).
  if (!host_.empty() && detail::current_for_release(ordinal_)) {
    static_cast<void>(detail::cu().mem_host_unregister(host_.data()));
  }
}

Result<std::byte*> HostRegistration::device_pointer(int ordinal) const {
  if (!mapped_) return make_error("the host range was registered without mapping: kernels cannot reach it");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  CuDevicePtr device = 0;
  PCIEVAL_CU_TRY("cuMemHostGetDevicePointer_v2", detail::cu().mem_host_get_device_pointer(&device, host_.data(), 0));
  return reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(device));
}

}  // namespace pcieval
