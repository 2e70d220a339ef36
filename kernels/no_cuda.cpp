// kernels/ in a build without CUDA: the same public API, every call an error
// saying so. Objects cannot be created (every create() fails), so the other
// members exist only to link; they fail the same way.
#include <string>
#include <utility>

#include "kernels/copy_stream.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/detail/device_pattern.hpp"
#include "kernels/latch.hpp"
#include "kernels/resources.hpp"

namespace pcieval {
namespace {

Error no_cuda() { return make_error(std::string(kBuiltWithoutCudaMessage)); }

}  // namespace

bool built_with_cuda() { return false; }
Result<int> cuda_device_count() { return no_cuda(); }
Result<int> cuda_ordinal_of(const PciAddress& /*address*/) { return no_cuda(); }
Result<PciAddress> cuda_pci_address(int /*ordinal*/) { return no_cuda(); }
Result<std::string> cuda_device_name(int /*ordinal*/) { return no_cuda(); }
Status preload_kernels(int /*ordinal*/) { return no_cuda(); }

// --- Stream

Result<Stream> Stream::create(int /*ordinal*/) { return no_cuda(); }
Stream::Stream(Stream&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)), stream_(std::exchange(other.stream_, nullptr)) {}
Stream& Stream::operator=(Stream&& other) noexcept {
  ordinal_ = std::exchange(other.ordinal_, -1);
  stream_ = std::exchange(other.stream_, nullptr);
  return *this;
}
Stream::~Stream() {}  // nothing was acquired
Status Stream::synchronize(const PollPolicy& /*policy*/) const { return no_cuda(); }

// --- EventPair

Result<EventPair> EventPair::create(int /*ordinal*/) { return no_cuda(); }
EventPair::EventPair(EventPair&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)),
      start_(std::exchange(other.start_, nullptr)),
      end_(std::exchange(other.end_, nullptr)) {}
EventPair& EventPair::operator=(EventPair&& other) noexcept {
  ordinal_ = std::exchange(other.ordinal_, -1);
  start_ = std::exchange(other.start_, nullptr);
  end_ = std::exchange(other.end_, nullptr);
  return *this;
}
EventPair::~EventPair() {}  // nothing was acquired
Status EventPair::record_start(const Stream& /*stream*/) { return no_cuda(); }
Status EventPair::record_end(const Stream& /*stream*/) { return no_cuda(); }
Result<double> EventPair::elapsed_s(const PollPolicy& /*policy*/, const std::string& /*what*/) const {
  return no_cuda();
}
Result<double> EventPair::start_to_start_s(const EventPair& /*later*/, const PollPolicy& /*policy*/) const {
  return no_cuda();
}

// --- DeviceBuffer

Result<DeviceBuffer> DeviceBuffer::allocate(int /*ordinal*/, std::size_t /*bytes*/) { return no_cuda(); }
DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  ordinal_ = std::exchange(other.ordinal_, -1);
  data_ = std::exchange(other.data_, nullptr);
  size_bytes_ = std::exchange(other.size_bytes_, 0);
  return *this;
}
DeviceBuffer::~DeviceBuffer() {}  // nothing was acquired
Status DeviceBuffer::copy_from_host(std::size_t /*offset*/, std::span<const std::byte> /*host*/,
                                    const PollPolicy& /*policy*/) {
  return no_cuda();
}
Status DeviceBuffer::copy_to_host(std::size_t /*offset*/, std::span<std::byte> /*host*/,
                                  const PollPolicy& /*policy*/) const {
  return no_cuda();
}

// --- PinnedHostBuffer

Result<PinnedHostBuffer> PinnedHostBuffer::allocate(int /*ordinal*/, std::size_t /*bytes*/) { return no_cuda(); }
PinnedHostBuffer::PinnedHostBuffer(PinnedHostBuffer&& other) noexcept
    : ordinal_(std::exchange(other.ordinal_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)) {}
PinnedHostBuffer& PinnedHostBuffer::operator=(PinnedHostBuffer&& other) noexcept {
  ordinal_ = std::exchange(other.ordinal_, -1);
  data_ = std::exchange(other.data_, nullptr);
  size_bytes_ = std::exchange(other.size_bytes_, 0);
  return *this;
}
PinnedHostBuffer::~PinnedHostBuffer() {}  // nothing was acquired

// --- HostRegistration

Result<HostRegistration> HostRegistration::register_range(int /*ordinal*/, std::span<std::byte> /*host*/,
                                                          bool /*mapped*/, double /*timeout_floor_s*/) {
  return no_cuda();
}
HostRegistration::HostRegistration(HostRegistration&& other) noexcept
    : host_(std::exchange(other.host_, {})), mapped_(std::exchange(other.mapped_, false)) {}
HostRegistration& HostRegistration::operator=(HostRegistration&& other) noexcept {
  host_ = std::exchange(other.host_, {});
  mapped_ = std::exchange(other.mapped_, false);
  return *this;
}
HostRegistration::~HostRegistration() {}  // nothing was acquired
Result<std::byte*> HostRegistration::device_pointer(int /*ordinal*/) const { return no_cuda(); }

// --- Latch

Result<Latch> Latch::create(int /*ordinal*/, double /*timeout_s*/) { return no_cuda(); }
Latch::Latch(Latch&& other) noexcept
    : flags_(std::exchange(other.flags_, nullptr)), timeout_s_(std::exchange(other.timeout_s_, 0)) {}
Latch& Latch::operator=(Latch&& other) noexcept {
  flags_ = std::exchange(other.flags_, nullptr);
  timeout_s_ = std::exchange(other.timeout_s_, 0);
  return *this;
}
Latch::~Latch() {}  // nothing was acquired
void Latch::arm() {}
Status Latch::hold(const Stream& /*stream*/) { return no_cuda(); }
void Latch::release() {}
bool Latch::timed_out() const { return false; }

// --- Pattern kernels

Status fill_pattern_device(const Stream& /*stream*/, std::byte* /*data*/, std::size_t /*bytes*/,
                           std::uint32_t /*seed*/) {
  return no_cuda();
}
Status poison_device(const Stream& /*stream*/, std::byte* /*data*/, std::size_t /*bytes*/) { return no_cuda(); }
Result<std::uint64_t> count_mismatches_device(const Stream& /*stream*/, const std::byte* /*data*/,
                                              std::size_t /*bytes*/, std::uint32_t /*seed*/) {
  return no_cuda();
}

// --- CopyStream

Result<CopyStream> CopyStream::create(int /*ordinal*/, Direction /*direction*/, CopyMethod /*method*/,
                                      std::span<std::byte> /*host*/, std::uint32_t /*seed*/) {
  return no_cuda();
}
CopyStream::~CopyStream() {}  // nothing was acquired
Status CopyStream::reshape(CopyShape /*shape*/) { return no_cuda(); }
std::uint64_t CopyStream::bytes_per_trial() const { return 0; }
std::string CopyStream::label() const { return "no cuda"; }
const std::byte* CopyStream::copy_source() const { return nullptr; }
std::byte* CopyStream::copy_destination() const { return nullptr; }
std::byte* CopyStream::kernel_view_of_source() const { return nullptr; }
std::byte* CopyStream::kernel_view_of_destination() const { return nullptr; }
Status CopyStream::prepare_destination() { return no_cuda(); }
Status CopyStream::enqueue(Latch& /*latch*/) { return no_cuda(); }
Result<double> CopyStream::elapsed_s(const PollPolicy& /*policy*/) const { return no_cuda(); }
bool CopyStream::abandoned() const { return false; }
Result<std::uint64_t> CopyStream::count_destination_mismatches() const { return no_cuda(); }

Result<TrialTiming> run_latched_trial(std::span<CopyStream* const> /*streams*/, Latch& /*latch*/,
                                      double /*operation_timeout_s*/) {
  return no_cuda();
}

// --- PageableCopyStream

Result<PageableCopyStream> PageableCopyStream::create(int /*ordinal*/, Direction /*direction*/,
                                                      std::span<std::byte> /*host*/, std::uint32_t /*seed*/) {
  return no_cuda();
}
std::string PageableCopyStream::label() const { return "no cuda"; }
bool PageableCopyStream::abandoned() const { return false; }
Result<double> PageableCopyStream::run_trial() { return no_cuda(); }

}  // namespace pcieval
