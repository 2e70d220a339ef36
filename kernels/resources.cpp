#include "kernels/resources.hpp"

#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <utility>

#include "kernels/detail/cuda_check.cuh"

namespace pcieval {

// --- Stream

Result<Stream> Stream::create(int ordinal) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  cudaStream_t stream = nullptr;
  PCIEVAL_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
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
  if (stream_ != nullptr && !cuda_device_retired(ordinal_)) static_cast<void>(cudaStreamDestroy(stream_));
}

Status Stream::synchronize(const PollPolicy& policy) const {
  if (stream_ == nullptr) return make_error("synchronize on an empty (moved-from) stream");
  if (auto reason = cuda_device_retired_reason(ordinal_)) return make_error(*reason);
  // Polled, not cudaStreamSynchronize: that one never returns from a stuck
  // device.
  cudaStream_t stream = stream_;
  return detail::wait_ready(
      ordinal_, [stream] { return detail::cuda_ready("cudaStreamQuery", cudaStreamQuery(stream)); }, policy,
      "work queued on a stream of CUDA device " + std::to_string(ordinal_));
}

// --- EventPair

Result<EventPair> EventPair::create(int ordinal) {
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
  PCIEVAL_CUDA_TRY(cudaEventCreate(&start));
  // Owned from here on, so the second failure cannot leak the first event.
  EventPair pair(ordinal, start, nullptr);
  PCIEVAL_CUDA_TRY(cudaEventCreate(&end));
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
  if (cuda_device_retired(ordinal_)) return;
  if (start_ != nullptr) static_cast<void>(cudaEventDestroy(start_));
  if (end_ != nullptr) static_cast<void>(cudaEventDestroy(end_));
}

Status EventPair::record_start(const Stream& stream) {
  return detail::cuda_status("cudaEventRecord", cudaEventRecord(start_, stream.handle()));
}

Status EventPair::record_end(const Stream& stream) {
  return detail::cuda_status("cudaEventRecord", cudaEventRecord(end_, stream.handle()));
}

namespace {

// Polled, not cudaEventSynchronize: that one never returns from a stuck
// device. The event's own timestamps are untouched by how late the host
// learns it fired.
Status wait_event(int ordinal, cudaEvent_t event, const PollPolicy& policy, const std::string& what) {
  if (auto reason = cuda_device_retired_reason(ordinal)) return make_error(*reason);
  return detail::wait_ready(
      ordinal, [event] { return detail::cuda_ready("cudaEventQuery", cudaEventQuery(event)); }, policy, what);
}

}  // namespace

Result<double> EventPair::elapsed_s(const PollPolicy& policy, const std::string& what) const {
  PCIEVAL_TRY_STATUS(wait_event(ordinal_, end_, policy, what));
  float elapsed_ms = 0;
  PCIEVAL_CUDA_TRY(cudaEventElapsedTime(&elapsed_ms, start_, end_));
  return static_cast<double>(elapsed_ms) * 1e-3;
}

Result<double> EventPair::start_to_start_s(const EventPair& later, const PollPolicy& policy) const {
  if (later.ordinal_ != ordinal_) {
    return make_error("events of devices " + std::to_string(ordinal_) + " and " + std::to_string(later.ordinal_) +
                      " share no clock");
  }
  PCIEVAL_TRY_STATUS(wait_event(ordinal_, start_, policy, "the start of the timed work"));
  PCIEVAL_TRY_STATUS(wait_event(later.ordinal_, later.start_, policy, "the start of the timed work"));
  float elapsed_ms = 0;
  PCIEVAL_CUDA_TRY(cudaEventElapsedTime(&elapsed_ms, start_, later.start_));
  return static_cast<double>(elapsed_ms) * 1e-3;
}

// --- DeviceBuffer

Result<DeviceBuffer> DeviceBuffer::allocate(int ordinal, std::size_t bytes) {
  if (bytes == 0) return make_error("cannot allocate an empty device buffer");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  void* data = nullptr;
  const cudaError_t code = cudaMalloc(&data, bytes);
  if (code != cudaSuccess) {
    return make_error("cannot allocate " + std::to_string(bytes) + " bytes on CUDA device " + std::to_string(ordinal) +
                      ": " + detail::cuda_error("cudaMalloc", code).message);
  }
  return DeviceBuffer(ordinal, static_cast<std::byte*>(data), bytes);
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
  // cudaFree needs no current device: the address says which one. It
  // synchronizes the device, so a retired one keeps its memory.
  if (data_ != nullptr && !cuda_device_retired(ordinal_)) static_cast<void>(cudaFree(data_));
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
Status staged_copy(int ordinal, void* destination, const void* source, std::size_t bytes, cudaMemcpyKind kind,
                   const PollPolicy& policy) {
  PCIEVAL_ASSIGN_OR_RETURN(Stream stream, Stream::create(ordinal));
  PCIEVAL_CUDA_TRY(cudaMemcpyAsync(destination, source, bytes, kind, stream.handle()));
  cudaStream_t handle = stream.handle();
  const std::string what = "cudaMemcpyAsync " + std::string(kind == cudaMemcpyHostToDevice ? "h2d" : "d2h") + " of " +
                           std::to_string(bytes) + " bytes";
  return detail::wait_ready(
      ordinal, [handle] { return detail::cuda_ready("cudaStreamQuery", cudaStreamQuery(handle)); }, policy, what);
}

}  // namespace

Status DeviceBuffer::copy_from_host(std::size_t offset, std::span<const std::byte> host, const PollPolicy& policy) {
  PCIEVAL_TRY_STATUS(check_copy_range(offset, host.size(), size_bytes_));
  if (host.empty()) return ok_status();
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal_));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer stage, PinnedHostBuffer::allocate(ordinal_, host.size()));
  std::memcpy(stage.data(), host.data(), host.size());
  return staged_copy(ordinal_, data_ + offset, stage.data(), host.size(), cudaMemcpyHostToDevice, policy);
}

Status DeviceBuffer::copy_to_host(std::size_t offset, std::span<std::byte> host, const PollPolicy& policy) const {
  PCIEVAL_TRY_STATUS(check_copy_range(offset, host.size(), size_bytes_));
  if (host.empty()) return ok_status();
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal_));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer stage, PinnedHostBuffer::allocate(ordinal_, host.size()));
  PCIEVAL_TRY_STATUS(staged_copy(ordinal_, stage.data(), data_ + offset, host.size(), cudaMemcpyDeviceToHost, policy));
  std::memcpy(host.data(), stage.data(), host.size());
  return ok_status();
}

// --- PinnedHostBuffer

Result<PinnedHostBuffer> PinnedHostBuffer::allocate(int ordinal, std::size_t bytes) {
  if (bytes == 0) return make_error("cannot allocate an empty pinned host buffer");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  void* data = nullptr;
  const cudaError_t code = cudaHostAlloc(&data, bytes, cudaHostAllocDefault);
  if (code != cudaSuccess) {
    return make_error("cannot allocate " + std::to_string(bytes) +
                      " bytes of pinned host memory: " + detail::cuda_error("cudaHostAlloc", code).message);
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
  // A late copy of a retired device may still land here, and cudaFreeHost
  // may synchronize with it: the memory is leaked instead.
  if (data_ != nullptr && !cuda_device_retired(ordinal_)) static_cast<void>(cudaFreeHost(data_));
}

// --- HostRegistration

Result<HostRegistration> HostRegistration::register_range(int ordinal, std::span<std::byte> host, bool mapped,
                                                          double timeout_floor_s) {
  if (host.empty()) return make_error("cannot register an empty host range");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  const unsigned int flags = cudaHostRegisterPortable | (mapped ? cudaHostRegisterMapped : 0U);
  // On a thread of its own (the current device is per thread, so it is set
  // there too). The thread touches only the range and values it owns: if it
  // is abandoned, the range's owner keeps the range (the device is retired).
  void* data = host.data();
  const std::size_t bytes = host.size();
  const double timeout_s = copy_deadline_s(bytes, 0.0, timeout_floor_s);
  const std::string where = detail::where_is(ordinal);
  DeadlineCall<cudaError_t> registered = call_with_deadline(
      [ordinal, data, bytes, flags] {
        const cudaError_t selected = cudaSetDevice(ordinal);
        if (selected != cudaSuccess) return selected;
        return cudaHostRegister(data, bytes, flags);
      },
      timeout_s);
  const std::string what = "cudaHostRegister of " + std::to_string(bytes) + " bytes";
  if (registered.outcome != DeadlineOutcome::kReturned) {
    // Pinning is host work: a slow host, not a hung GPU.
    return detail::host_work_call_error(ordinal, registered.outcome, what, timeout_s, where);
  }
  const cudaError_t code = *registered.value;
  if (code != cudaSuccess) {
    return make_error("cannot page-lock " + std::to_string(bytes) +
                      " bytes of host memory: " + detail::cuda_error("cudaHostRegister", code).message);
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
  if (!host_.empty() && !cuda_device_retired(ordinal_)) static_cast<void>(cudaHostUnregister(host_.data()));
}

Result<std::byte*> HostRegistration::device_pointer(int ordinal) const {
  if (!mapped_) return make_error("the host range was registered without mapping: kernels cannot reach it");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal));
  void* device = nullptr;
  PCIEVAL_CUDA_TRY(cudaHostGetDevicePointer(&device, host_.data(), 0));
  return static_cast<std::byte*>(device);
}

}  // namespace pcieval
