// Real GPU tests of kernels/: copies verify, the latch releases in time,
// rates are positive and below a sane ceiling, and corruption is caught.
// Each test skips, with the reason, where no CUDA device is usable.
#include "kernels/copy_stream.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/detail/device_pattern.hpp"
#include "kernels/latch.hpp"
#include "kernels/pattern.hpp"
#include "kernels/resources.hpp"

namespace pcieval {
namespace {

using testing::kSaneCeilingGbps;

constexpr std::size_t kCopyBytes = std::size_t{64} << 20;

// Page-aligned anonymous host memory, as NumaBuffer gives (kernels/ tests do
// not link topology/).
class HostBytes {
 public:
  explicit HostBytes(std::size_t bytes) : bytes_(bytes) {
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = memory == MAP_FAILED ? nullptr : static_cast<std::byte*>(memory);
    if (data_ != nullptr) std::memset(data_, 0, bytes);
  }
  HostBytes(const HostBytes&) = delete;
  HostBytes& operator=(const HostBytes&) = delete;
  ~HostBytes() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  [[nodiscard]] std::span<std::byte> span() const { return {data_, bytes_}; }

 private:
  std::size_t bytes_;
  std::byte* data_ = nullptr;
};

template <class T>
T take(Result<T> result) {
  if (!result) throw std::runtime_error(result.error().message);
  return std::move(result).value();
}

struct StreamCase {
  Direction direction;
  CopyMethod method;
};

class CopyStreamTest : public ::testing::TestWithParam<StreamCase> {};

TEST_P(CopyStreamTest, TrialsVerifyAndRatesAreSane) {
  SKIP_WITHOUT_GPU();
  HostBytes host(kCopyBytes);
  CopyStream stream = take(CopyStream::create(0, GetParam().direction, GetParam().method, host.span(), 11));
  Latch latch = take(Latch::create(0, 5.0));
  CopyStream* streams[] = {&stream};
  for (int trial = 0; trial < 3; ++trial) {
    auto timing = run_latched_trial(streams, latch);
    ASSERT_TRUE(timing.ok()) << timing.error().message;
    EXPECT_FALSE(latch.timed_out());
    ASSERT_EQ(timing->stream_s.size(), 1U);
    const double gbps = gbps_of(stream.bytes_per_trial(), timing->stream_s[0]);
    EXPECT_GT(gbps, 0.5) << stream.label();
    EXPECT_LT(gbps, kSaneCeilingGbps) << stream.label();
    EXPECT_NEAR(timing->wall_s, timing->stream_s[0], 1e-6) << "one stream: the wall time is its time";
  }
}

TEST_P(CopyStreamTest, SeveralSmallCopiesPerTrialVerify) {
  SKIP_WITHOUT_GPU();
  HostBytes host(kCopyBytes);
  CopyStream stream = take(CopyStream::create(0, GetParam().direction, GetParam().method, host.span(), 12));
  ASSERT_TRUE(stream.reshape({4096, 256}).ok());
  EXPECT_EQ(stream.bytes_per_trial(), 4096U * 256U);
  Latch latch = take(Latch::create(0, 5.0));
  CopyStream* streams[] = {&stream};
  auto timing = run_latched_trial(streams, latch);
  ASSERT_TRUE(timing.ok()) << timing.error().message;
  EXPECT_GT(timing->stream_s[0], 0);
}

INSTANTIATE_TEST_SUITE_P(EveryPath, CopyStreamTest,
                         ::testing::Values(StreamCase{Direction::kHostToDevice, CopyMethod::kCopyEngine},
                                           StreamCase{Direction::kDeviceToHost, CopyMethod::kCopyEngine},
                                           StreamCase{Direction::kHostToDevice, CopyMethod::kSmKernel},
                                           StreamCase{Direction::kDeviceToHost, CopyMethod::kSmKernel}),
                         [](const auto& info) {
                           return std::string(to_string(info.param.direction)) + "_" +
                                  std::string(to_string(info.param.method));
                         });

TEST(CopyStream, ReshapeRejectsBadShapes) {
  SKIP_WITHOUT_GPU();
  HostBytes host(1 << 20);
  CopyStream stream = take(CopyStream::create(0, Direction::kHostToDevice, CopyMethod::kCopyEngine, host.span(), 1));
  EXPECT_FALSE(stream.reshape({0, 1}).ok());
  EXPECT_FALSE(stream.reshape({100, 1}).ok()) << "not a multiple of 16";
  EXPECT_FALSE(stream.reshape({2 << 20, 1}).ok()) << "above the capacity";
  EXPECT_FALSE(stream.reshape({4096, 0}).ok());
}

TEST(CopyStream, CorruptedDeviceDestinationIsCaught) {
  SKIP_WITHOUT_GPU();
  HostBytes host(kCopyBytes);
  CopyStream stream = take(CopyStream::create(0, Direction::kHostToDevice, CopyMethod::kCopyEngine, host.span(), 21));
  Latch latch = take(Latch::create(0, 5.0));
  CopyStream* streams[] = {&stream};
  ASSERT_TRUE(run_latched_trial(streams, latch).ok());
  ASSERT_EQ(take(stream.count_destination_mismatches()), 0U);
  const std::byte garbage[4] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  ASSERT_TRUE(stream.device_buffer().copy_from_host(4096, garbage).ok());
  EXPECT_EQ(take(stream.count_destination_mismatches()), 1U);
}

TEST(CopyStream, CorruptedHostDestinationIsCaught) {
  SKIP_WITHOUT_GPU();
  HostBytes host(kCopyBytes);
  CopyStream stream = take(CopyStream::create(0, Direction::kDeviceToHost, CopyMethod::kSmKernel, host.span(), 22));
  Latch latch = take(Latch::create(0, 5.0));
  CopyStream* streams[] = {&stream};
  ASSERT_TRUE(run_latched_trial(streams, latch).ok());
  host.span()[kCopyBytes - 1] ^= std::byte{0x80};
  host.span()[8] ^= std::byte{0x01};
  EXPECT_EQ(take(stream.count_destination_mismatches()), 2U);
}

TEST(CopyStream, WrongSourceDataFailsTheTrial) {
  SKIP_WITHOUT_GPU();
  HostBytes host(kCopyBytes);
  CopyStream stream = take(CopyStream::create(0, Direction::kHostToDevice, CopyMethod::kCopyEngine, host.span(), 23));
  // The source no longer carries the stream's pattern: every copy now delivers
  // wrong data, and the trial must say so instead of returning a time.
  host.span()[100] ^= std::byte{0xff};
  Latch latch = take(Latch::create(0, 5.0));
  CopyStream* streams[] = {&stream};
  auto timing = run_latched_trial(streams, latch);
  ASSERT_FALSE(timing.ok());
  EXPECT_NE(timing.error().message.find("1 of"), std::string::npos) << timing.error().message;
}

TEST(CopyStream, BothDirectionsAtOnceAreTimedSeparately) {
  SKIP_WITHOUT_GPU();
  HostBytes up(kCopyBytes);
  HostBytes down(kCopyBytes);
  CopyStream h2d = take(CopyStream::create(0, Direction::kHostToDevice, CopyMethod::kCopyEngine, up.span(), 31));
  CopyStream d2h = take(CopyStream::create(0, Direction::kDeviceToHost, CopyMethod::kCopyEngine, down.span(), 32));
  Latch latch = take(Latch::create(0, 5.0));
  CopyStream* streams[] = {&h2d, &d2h};
  auto timing = run_latched_trial(streams, latch);
  ASSERT_TRUE(timing.ok()) << timing.error().message;
  ASSERT_EQ(timing->stream_s.size(), 2U);
  for (double seconds : timing->stream_s) {
    EXPECT_GT(seconds, 0);
    EXPECT_GE(timing->wall_s, seconds - 1e-6) << "the wall time covers every stream";
    EXPECT_LT(gbps_of(kCopyBytes, seconds), kSaneCeilingGbps);
  }
}

// bidir_ce's pass for one direction (issue 26 item 5): the other direction
// copies twice the bytes, so the measured copy never runs alone at its tail.
TEST(CopyStream, ADoubledInterferingCopyOutlastsTheMeasuredOne) {
  SKIP_WITHOUT_GPU();
  HostBytes up(kCopyBytes);
  HostBytes down(kCopyBytes);
  CopyStream measured = take(CopyStream::create(0, Direction::kHostToDevice, CopyMethod::kCopyEngine, up.span(), 33));
  CopyStream interfering =
      take(CopyStream::create(0, Direction::kDeviceToHost, CopyMethod::kCopyEngine, down.span(), 34));
  ASSERT_TRUE(interfering.reshape({kCopyBytes, 2}).ok());
  Latch latch = take(Latch::create(0, 5.0));
  CopyStream* streams[] = {&measured, &interfering};
  auto timing = run_latched_trial(streams, latch);
  ASSERT_TRUE(timing.ok()) << timing.error().message;
  EXPECT_GE(timing->stream_s[1], timing->stream_s[0]) << "the interfering copy ended before the measured one";
  EXPECT_GE(timing->wall_s, timing->stream_s[1] - 1e-6);
}

TEST(CopyStream, EveryGpuAtOnce) {
  SKIP_WITHOUT_GPU();
  const int count = cuda_device_count().value();
  if (count < 2) GTEST_SKIP() << "needs two CUDA devices, this machine has " << count;
  std::vector<std::unique_ptr<HostBytes>> hosts;
  std::vector<CopyStream> streams;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    hosts.push_back(std::make_unique<HostBytes>(kCopyBytes));
    streams.push_back(take(CopyStream::create(ordinal, Direction::kHostToDevice, CopyMethod::kCopyEngine,
                                              hosts.back()->span(), static_cast<std::uint32_t>(40 + ordinal))));
  }
  std::vector<CopyStream*> pointers;
  pointers.reserve(streams.size());
  for (CopyStream& stream : streams) pointers.push_back(&stream);
  Latch latch = take(Latch::create(0, 5.0));
  auto timing = run_latched_trial(pointers, latch);
  ASSERT_TRUE(timing.ok()) << timing.error().message;
  for (double seconds : timing->stream_s) EXPECT_GE(timing->wall_s, seconds - 1e-6);
}

TEST(PageableCopyStream, BothDirectionsVerify) {
  SKIP_WITHOUT_GPU();
  for (Direction direction : {Direction::kHostToDevice, Direction::kDeviceToHost}) {
    HostBytes host(kCopyBytes);
    PageableCopyStream stream = take(PageableCopyStream::create(0, direction, host.span(), 51));
    for (int trial = 0; trial < 2; ++trial) {
      auto seconds = stream.run_trial();
      ASSERT_TRUE(seconds.ok()) << seconds.error().message;
      EXPECT_GT(seconds.value(), 0);
      EXPECT_LT(gbps_of(kCopyBytes, seconds.value()), kSaneCeilingGbps);
    }
  }
}

TEST(DevicePattern, FillPoisonAndCountOnDeviceMemory) {
  SKIP_WITHOUT_GPU();
  Stream stream = take(Stream::create(0));
  DeviceBuffer buffer = take(DeviceBuffer::allocate(0, 1 << 20));
  ASSERT_TRUE(fill_pattern_device(stream, buffer.data(), buffer.size_bytes(), 5).ok());
  EXPECT_EQ(take(count_mismatches_device(stream, buffer.data(), buffer.size_bytes(), 5)), 0U);
  // The device writes the same words the host computes.
  std::vector<std::byte> copy(buffer.size_bytes());
  ASSERT_TRUE(buffer.copy_to_host(0, copy).ok());
  EXPECT_EQ(count_mismatches_host(copy, 5), 0U);
  const std::byte garbage[1] = {std::byte{0x5a}};
  ASSERT_TRUE(buffer.copy_from_host(777, garbage).ok());
  EXPECT_EQ(take(count_mismatches_device(stream, buffer.data(), buffer.size_bytes(), 5)), 1U);
  ASSERT_TRUE(poison_device(stream, buffer.data(), buffer.size_bytes()).ok());
  EXPECT_EQ(take(count_mismatches_device(stream, buffer.data(), buffer.size_bytes(), 5)), buffer.size_bytes() / 4);
}

TEST(DeviceApi, OrdinalAndAddressAgree) {
  SKIP_WITHOUT_GPU();
  const PciAddress address = take(cuda_pci_address(0));
  EXPECT_EQ(take(cuda_ordinal_of(address)), 0);
  EXPECT_FALSE(take(cuda_device_name(0)).empty());
  EXPECT_TRUE(preload_kernels(0).ok());
}

TEST(DeviceApi, AnAddressCudaDoesNotSeeIsAnErrorNamingIt) {
  SKIP_WITHOUT_GPU();
  auto ordinal = cuda_ordinal_of(*parse_pci_address("0000:f7:1f.7"));
  ASSERT_FALSE(ordinal.ok());
  EXPECT_NE(ordinal.error().message.find("0000:f7:1f.7"), std::string::npos) << ordinal.error().message;
}

}  // namespace
}  // namespace pcieval
