#include "model/verdict.hpp"

#include <gtest/gtest.h>

#include "model/device.hpp"

namespace pcieval {
namespace {

Verdict with_status(VerdictStatus status) {
  Verdict verdict;
  verdict.status = status;
  return verdict;
}

TEST(Overall, WorstVerdictWinsAndFailOutranksInconclusive) {
  // Nothing judged is never a pass.
  EXPECT_EQ(overall_of({}), Overall::kInconclusive);
  EXPECT_EQ(overall_of({with_status(VerdictStatus::kPass)}), Overall::kPass);
  EXPECT_EQ(overall_of({with_status(VerdictStatus::kPass), with_status(VerdictStatus::kInconclusive)}),
            Overall::kInconclusive);
  EXPECT_EQ(overall_of({with_status(VerdictStatus::kInconclusive), with_status(VerdictStatus::kLinkDowngraded)}),
            Overall::kFail);
  EXPECT_EQ(overall_of({with_status(VerdictStatus::kMissing)}), Overall::kFail);
}

TEST(VerdictStatus, StableNames) {
  EXPECT_EQ(to_string(VerdictStatus::kLinkDowngraded), "link_downgraded");
  EXPECT_EQ(to_string(VerdictStatus::kBandwidthLow), "bandwidth_low");
  EXPECT_EQ(to_string(ReasonCode::kGpuLinkSpeedIdle), "gpu_link_speed_idle");
  EXPECT_TRUE(is_failing(VerdictStatus::kLinkErrors));
  EXPECT_FALSE(is_failing(VerdictStatus::kInconclusive));
}

TEST(Classify, GpusNicsNvmeAndOthers) {
  EXPECT_EQ(classify_device(0x10de, 0x030200), DeviceKind::kGpu);    // H100, A100: 3D controller
  EXPECT_EQ(classify_device(0x10de, 0x030000), DeviceKind::kGpu);    // RTX 6000 Ada: VGA
  EXPECT_EQ(classify_device(0x10de, 0x040300), DeviceKind::kOther);  // the GPU's HDMI audio
  EXPECT_EQ(classify_device(0x1002, 0x030000), DeviceKind::kOther);  // not NVIDIA
  EXPECT_EQ(classify_device(0x15b3, 0x020000), DeviceKind::kNic);    // ConnectX Ethernet
  EXPECT_EQ(classify_device(0x15b3, 0x020700), DeviceKind::kNic);    // ConnectX InfiniBand
  EXPECT_EQ(classify_device(0x144d, 0x010802), DeviceKind::kNvme);
  EXPECT_EQ(classify_device(0x8086, 0x010601), DeviceKind::kOther);  // AHCI
  EXPECT_TRUE(is_pci_bridge_class(0x060400));
  EXPECT_FALSE(is_pci_bridge_class(0x060000));  // host bridge
}

}  // namespace
}  // namespace pcieval
