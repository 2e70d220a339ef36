// nvmlDeviceGetP2PStatus through NvmlReader::read_peer_status, against the
// fake NVML (fake_nvml.hpp): every ordered GPU pair, read and write, NVML's
// status codes as the model's words, and what cannot be asked left out with
// a note.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "topology/fake_nvml.hpp"
#include "topology/nvml.hpp"
#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using testing::bdf;
using testing::busy_h100;
using ::testing::ElementsAre;
using testing::fake_nvml_table;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using NvmlPeerStatusTest = testing::FakeNvmlTest;

// "0000:17:00.0>0000:2a:00.0 read ok".
std::vector<std::string> lines(const std::vector<PeerStatus>& statuses) {
  std::vector<std::string> out;
  for (const PeerStatus& status : statuses) {
    EXPECT_EQ(status.source, "nvml");
    out.push_back(to_string(status.gpu) + ">" + to_string(status.peer) + " " +
                  std::string(to_string(status.capability)) + " " + status.status);
  }
  return out;
}

TEST(NvmlPeerStatusWord, FollowsNvmlsEnumOrder) {
  EXPECT_EQ(peer_status_word(kNvmlP2PStatusOk).value(), "ok");
  EXPECT_EQ(peer_status_word(kNvmlP2PStatusChipsetNotSupported).value(), "chipset_not_supported");
  EXPECT_EQ(peer_status_word(kNvmlP2PStatusGpuNotSupported).value(), "gpu_not_supported");
  EXPECT_EQ(peer_status_word(kNvmlP2PStatusIohTopologyNotSupported).value(), "topology_not_supported");
  EXPECT_EQ(peer_status_word(kNvmlP2PStatusDisabledByRegkey).value(), "disabled_by_regkey");
  EXPECT_EQ(peer_status_word(kNvmlP2PStatusNotSupported).value(), "not_supported");
  EXPECT_EQ(peer_status_word(kNvmlP2PStatusUnknown).value(), "unknown");
  EXPECT_THAT(peer_status_word(7).error().message, HasSubstr("not a status NVML defines"));
  EXPECT_FALSE(peer_status_word(-1).ok());
}

TEST_F(NvmlPeerStatusTest, EveryOrderedPairReadAndWrite) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  fake().gpus["00000000:2A:00.0"] = busy_h100();
  fake().gpus["00000000:3A:00.0"] = busy_h100();
  // 17 and 2a share a switch; 3a is across the root complex, where the
  // chipset refuses peer writes (TNS) but reads are fine.
  fake().p2p_status[{"00000000:17:00.0", "00000000:3A:00.0", 1}] = kNvmlP2PStatusIohTopologyNotSupported;
  fake().p2p_status[{"00000000:3A:00.0", "00000000:17:00.0", 1}] = kNvmlP2PStatusIohTopologyNotSupported;
  fake().p2p_status[{"00000000:2A:00.0", "00000000:3A:00.0", 0}] = kNvmlP2PStatusChipsetNotSupported;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  std::vector<std::string> notes;
  const auto statuses =
      reader.read_peer_status({bdf("0000:17:00.0"), bdf("0000:2a:00.0"), bdf("0000:3a:00.0")}, &notes);
  EXPECT_THAT(lines(statuses),
              ElementsAre("0000:17:00.0>0000:2a:00.0 read ok", "0000:17:00.0>0000:2a:00.0 write ok",
                          "0000:17:00.0>0000:3a:00.0 read ok", "0000:17:00.0>0000:3a:00.0 write topology_not_supported",
                          "0000:2a:00.0>0000:17:00.0 read ok", "0000:2a:00.0>0000:17:00.0 write ok",
                          "0000:2a:00.0>0000:3a:00.0 read chipset_not_supported", "0000:2a:00.0>0000:3a:00.0 write ok",
                          "0000:3a:00.0>0000:17:00.0 read ok", "0000:3a:00.0>0000:17:00.0 write topology_not_supported",
                          "0000:3a:00.0>0000:2a:00.0 read ok", "0000:3a:00.0>0000:2a:00.0 write ok"));
  EXPECT_THAT(notes, IsEmpty());
}

TEST_F(NvmlPeerStatusTest, OneGpuHasNoPairs) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  std::vector<std::string> notes;
  EXPECT_THAT(reader.read_peer_status({bdf("0000:17:00.0")}, &notes), IsEmpty());
  EXPECT_THAT(notes, IsEmpty());
}

TEST_F(NvmlPeerStatusTest, DriverWithoutTheSymbolGivesNoEntriesAndANote) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  fake().gpus["00000000:2A:00.0"] = busy_h100();
  NvmlApi table = fake_nvml_table();
  table.device_get_p2p_status = nullptr;
  const NvmlLibrary library = open_session(table);
  const NvmlReader reader(library);
  std::vector<std::string> notes;
  EXPECT_THAT(reader.read_peer_status({bdf("0000:17:00.0"), bdf("0000:2a:00.0")}, &notes), IsEmpty());
  EXPECT_THAT(notes, ElementsAre(HasSubstr("nvmlDeviceGetP2PStatus: not exported by this driver")));
  EXPECT_EQ(fake().calls_for("00000000:17:00.0"), 0) << "nothing asked, not even the handle";
}

TEST_F(NvmlPeerStatusTest, RefusedCallsAreOneNoteNotOnePerPair) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  fake().gpus["00000000:2A:00.0"] = busy_h100();
  fake().gpus["00000000:3A:00.0"] = busy_h100();
  fake().p2p_code = kNvmlErrorNotSupported;  // a vGPU guest
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  std::vector<std::string> notes;
  EXPECT_THAT(reader.read_peer_status({bdf("0000:17:00.0"), bdf("0000:2a:00.0"), bdf("0000:3a:00.0")}, &notes),
              IsEmpty());
  ASSERT_THAT(notes, SizeIs(1));
  EXPECT_THAT(notes[0], HasSubstr("NVML_ERROR_NOT_SUPPORTED (3) for 12 of 12"));
  EXPECT_THAT(notes[0], HasSubstr("first nvmlDeviceGetP2PStatus(0000:17:00.0, 0000:2a:00.0, read)"));
}

TEST_F(NvmlPeerStatusTest, UnknownGpuAndUndefinedStatusAreLeftOutWithNotes) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  fake().gpus["00000000:2A:00.0"] = busy_h100();
  fake().p2p_status[{"00000000:2A:00.0", "00000000:17:00.0", 0}] = 42;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library);
  std::vector<std::string> notes;
  const auto statuses =
      reader.read_peer_status({bdf("0000:17:00.0"), bdf("0000:2a:00.0"), bdf("0000:99:00.0")}, &notes);
  EXPECT_THAT(lines(statuses), ElementsAre("0000:17:00.0>0000:2a:00.0 read ok", "0000:17:00.0>0000:2a:00.0 write ok",
                                           "0000:2a:00.0>0000:17:00.0 write ok"));
  ASSERT_THAT(notes, SizeIs(2));
  EXPECT_THAT(notes[0], HasSubstr("peer status of 0000:99:00.0 not read: no GPU at 0000:99:00.0 known to NVML"));
  EXPECT_THAT(notes[1], HasSubstr("nvmlGpuP2PStatus 42 is not a status NVML defines"));
}

TEST_F(NvmlPeerStatusTest, AGpuWhoseCallHangsIsGivenUpTheOthersStillRead) {
  fake().gpus["00000000:17:00.0"] = busy_h100();
  fake().gpus["00000000:2A:00.0"] = busy_h100();
  fake().gpus["00000000:3A:00.0"] = busy_h100();
  fake().gpus["00000000:2A:00.0"].p2p_hangs = true;
  const NvmlLibrary library = open_session();
  const NvmlReader reader(library, std::chrono::milliseconds(50));
  std::vector<std::string> notes;
  const auto statuses =
      reader.read_peer_status({bdf("0000:17:00.0"), bdf("0000:2a:00.0"), bdf("0000:3a:00.0")}, &notes);
  // 2a's first call hangs: 2a is given up on, so no pair with 2a on either
  // side is asked again.
  EXPECT_THAT(lines(statuses), ElementsAre("0000:17:00.0>0000:2a:00.0 read ok", "0000:17:00.0>0000:2a:00.0 write ok",
                                           "0000:17:00.0>0000:3a:00.0 read ok", "0000:17:00.0>0000:3a:00.0 write ok",
                                           "0000:3a:00.0>0000:17:00.0 read ok", "0000:3a:00.0>0000:17:00.0 write ok"));
  ASSERT_THAT(notes, SizeIs(1));
  EXPECT_THAT(notes[0], HasSubstr("nvmlDeviceGetP2PStatus on 0000:2a:00.0 did not return within 0.05 s"));
  EXPECT_THAT(reader.timeouts(), SizeIs(1));
}

}  // namespace
}  // namespace pcieval
