// Which transport NCCL chose, from its INFO log (bench/detail/nccl_transport.hpp):
// the parser on logs written for this project in the formats of NCCL 2.7 to
// 2.26 (src/transport/*.cc, src/init.cc; golden files in
// tests/fixtures/nccl_logs/), and the capture that points NCCL's
// log at a private file.
#include "bench/detail/nccl_transport.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

namespace pcieval {
namespace {

namespace fs = std::filesystem;

// A golden NCCL log of tests/fixtures/nccl_logs/ (its README names the
// machine and run each models).
std::string nccl_log(const std::string& name) {
  const fs::path path = fs::path(PCIEVAL_SOURCE_DIR) / "tests" / "fixtures" / "nccl_logs" / name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// DGX H100, NCCL 2.21.5, all_reduce_perf one process per GPU, rank 0: NVLink
// peer-to-peer with reads, and NVLS buffers over the NVSwitches.
TEST(NcclTransportSummary, DgxH100UsesNvlinkPeerToPeerReadsAndNvls) {
  const NcclTransportSummary summary = summarize_nccl_transports(nccl_log("dgx_h100_nccl_2.21.5_init.log"));
  ASSERT_EQ(summary.transports.size(), 1U);
  EXPECT_EQ(summary.transports[0].transport, "P2P/CUMEM/read");
  EXPECT_EQ(summary.transports[0].connections, 24U);  // not the two ring listings "Channel 00/24 :    0   1 ..."
  EXPECT_TRUE(summary.nvls);
  EXPECT_EQ(summary.nvls_channels, 16);
  EXPECT_FALSE(summary.nvls_tree);
  EXPECT_FALSE(summary.collnet);
  EXPECT_TRUE(summary.rings_connected);
  EXPECT_TRUE(summary.trees_connected);
  EXPECT_EQ(summary.nccl_lines, 40U);  // every "NCCL INFO" line; the bare version line is not one
  EXPECT_EQ(summary.summary, "P2P/CUMEM/read (24 channel connections), NVLS (16 channels)");
}

// 8x RTX 5090 PCIe without peer-to-peer, NCCL 2.26.2, one process: every ring
// hop through host memory, two channels per rank.
TEST(NcclTransportSummary, Rtx5090NodeWithPeerToPeerDisabledGoesThroughSharedMemory) {
  const NcclTransportSummary summary = summarize_nccl_transports(nccl_log("rtx5090_p2p_disabled_nccl_2.26.2_init.log"));
  ASSERT_EQ(summary.transports.size(), 1U);
  EXPECT_EQ(summary.transports[0].transport, "SHM/direct/direct");
  EXPECT_EQ(summary.transports[0].connections, 16U);
  // "0 nvls channels" is read, and is not NVLS.
  EXPECT_FALSE(summary.nvls);
  EXPECT_EQ(summary.nvls_channels, 0);
  EXPECT_EQ(summary.summary, "SHM/direct/direct (16 channel connections)");
}

// Two DGX H100 over NDR InfiniBand, NCCL 2.23.4, 16 ranks, rank 0: NVLink in
// the node, NET/IB with GDRDMA between nodes (one channel through a PXN proxy).
TEST(NcclTransportSummary, TwoNodesOverInfinibandCountNicsAndProxiesUnderOneName) {
  const NcclTransportSummary summary = summarize_nccl_transports(nccl_log("2x_dgx_h100_ib_nccl_2.23.4_init.log"));
  ASSERT_EQ(summary.transports.size(), 2U);
  // NIC 0 and NIC 1 through PXN proxy rank 1, send and receive: one transport.
  EXPECT_EQ(summary.transports[0].transport, "NET/IB/GDRDMA");
  EXPECT_EQ(summary.transports[0].connections, 5U);
  EXPECT_EQ(summary.transports[1].transport, "P2P/CUMEM/read");
  EXPECT_EQ(summary.transports[1].connections, 3U);
  EXPECT_TRUE(summary.nvls);
  EXPECT_TRUE(summary.nvls_tree);
  EXPECT_TRUE(summary.rings_connected);  // "Connected all rings, use ring PXN 1 GDR 1"
  EXPECT_EQ(summary.summary,
            "NET/IB/GDRDMA (5 channel connections), P2P/CUMEM/read (3 channel connections), NVLS (16 channels), "
            "NVLS tree");
}

// A Quantum-2 InfiniBand cluster of DGX H100 nodes with the SHARP plugin of
// HPC-X (NCCL 2.21.5, net plugin IBext_v8, collnet plugin SHARP): CollNet
// connections for in-network reduction beside the ring's network hops.
TEST(NcclTransportSummary, CollNetThroughTheSharpPluginIsReported) {
  const NcclTransportSummary summary =
      summarize_nccl_transports(nccl_log("dgx_h100_sharp_collnet_nccl_2.21.5_init.log"));
  ASSERT_EQ(summary.transports.size(), 2U);
  EXPECT_EQ(summary.transports[0].transport, "COLLNET/SHARP/GDRDMA");
  EXPECT_EQ(summary.transports[0].connections, 2U);
  EXPECT_EQ(summary.transports[1].transport, "NET/IBext_v8/GDRDMA");
  EXPECT_TRUE(summary.collnet);
  EXPECT_EQ(summary.summary,
            "COLLNET/SHARP/GDRDMA (2 channel connections), NET/IBext_v8/GDRDMA (2 channel connections), CollNet");
}

// A DGX-1 (8x V100 SXM2, hybrid cube-mesh NVLink), NCCL 2.7.8, one process
// for all GPUs: the older lines without a connection index, with bus ids in
// brackets, a relayed hop between GPUs without a direct link, and (2.7) the
// communicator appended to some lines.
TEST(NcclTransportSummary, OlderFormatsAndRelayedHopsAreRead) {
  const NcclTransportSummary summary = summarize_nccl_transports(nccl_log("dgx1_v100_nccl_2.7.8_init.log"));
  ASSERT_EQ(summary.transports.size(), 4U);
  EXPECT_EQ(summary.transports[0].transport, "P2P/direct pointer");
  EXPECT_EQ(summary.transports[0].connections, 2U);
  // Ties in name order.
  EXPECT_EQ(summary.transports[1].transport, "P2P/IPC");
  EXPECT_EQ(summary.transports[2].transport, "P2P/indirect");
  EXPECT_EQ(summary.transports[3].transport, "P2P/indirect/read");
}

TEST(NcclTransportSummary, GarbageOtherSubsystemsAndTruncatedLinesAreSkipped) {
  const std::string p = "dgx-h100-01:2714093:2714163 [0]";
  std::string log;
  log += "\x01\x7f\xff binary noise\n";
  log += "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n";  // no NCCL prefix: not NCCL's log
  log += p + " NCCL INFO AllReduce: opCount 0 sendbuff 0x7f1a sendcount 262144 datatype 7 op 0 root 0\n";  // COLL
  log += p + " NCCL INFO Channel 00/24 :    0   1   2   3   4   5   6   7\n";  // a ring listing
  log += p + " NCCL INFO Channel 05/0 : 0[0] -> 1[1] via \n";                  // cut after "via"
  log += p + " NCCL INFO Channel 06/0 : 0[0] -> 1[1] vi";                      // cut mid-word
  log += "\n" + p + " NCCL INFO Channel 07/0 : 0[0]";                          // cut before "via"
  log += "\n" + p + " NCCL INFO Channel xx/0 : 0[0] -> 1[1] via P2P/CUMEM\n";  // no channel number
  log += p + " NCCL INFO Channel 08/0 : 0[0] -> 1[1] via P2P/CUMEM/read\r\n";  // CRLF (a Windows copy)
  // NCCL_DEBUG_TIMESTAMP_LEVELS=ALL puts the time first.
  log += "[2026-12-03 18:02:11] " + p + " NCCL INFO Channel 09/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n";
  log += "\n" + p + " transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported'\n";
  log += p + " NCCL INFO";  // the last line, cut short
  const NcclTransportSummary summary = summarize_nccl_transports(log);
  ASSERT_EQ(summary.transports.size(), 1U);
  EXPECT_EQ(summary.transports[0].transport, "P2P/CUMEM/read");
  EXPECT_EQ(summary.transports[0].connections, 2U);
  EXPECT_FALSE(summary.rings_connected);
  EXPECT_EQ(summary.nccl_lines, 10U);  // the INFO lines (cut ones too) and the WARN line
}

TEST(NcclTransportSummary, NothingLoggedSaysSo) {
  const NcclTransportSummary empty = summarize_nccl_transports("");
  EXPECT_FALSE(empty.any_transport());
  EXPECT_EQ(empty.nccl_lines, 0U);
  EXPECT_EQ(empty.summary, "no channel connections logged");

  // NCCL wrote, but no channel line: a one-rank communicator, or a log read
  // before the first collective (NCCL 2.22+ connects there).
  const NcclTransportSummary init_only =
      summarize_nccl_transports("gpu-5090-03:88120:88120 [0] NCCL INFO Bootstrap: Using enp65s0f0:192.168.40.23<0>\n");
  EXPECT_FALSE(init_only.any_transport());
  EXPECT_EQ(init_only.nccl_lines, 1U);
  EXPECT_EQ(init_only.summary, "no channel connections logged");
}

TEST(NcclTransportSummary, OneConnectionIsSingular) {
  const NcclTransportSummary summary =
      summarize_nccl_transports("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n");
  EXPECT_EQ(summary.summary, "P2P/CUMEM (1 channel connection)");
}

// --- The capture

// Saves NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE, clears them for
// the test, and puts them back after it.
class NcclDebugCaptureTest : public ::testing::Test {
 protected:
  static constexpr const char* kNames[] = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};

  void SetUp() override {
    for (std::size_t i = 0; i < 3; ++i) {
      const char* value = std::getenv(kNames[i]);
      saved_[i] = value == nullptr ? std::nullopt : std::optional<std::string>(value);
      ::unsetenv(kNames[i]);
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("pcieval-nccl-capture-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    for (std::size_t i = 0; i < 3; ++i) {
      if (saved_[i]) {
        ::setenv(kNames[i], saved_[i]->c_str(), 1);
      } else {
        ::unsetenv(kNames[i]);
      }
    }
    fs::remove_all(dir_);
  }

  static std::optional<std::string> env(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  }

  // What NCCL does: appends to the file it opened.
  static void append(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << text;
  }

  std::optional<std::string> saved_[3];
  fs::path dir_;
};

TEST_F(NcclDebugCaptureTest, SetsNcclsLogToAPrivateFileAndRestoresEverything) {
  ::setenv("NCCL_DEBUG_SUBSYS", "COLL", 1);  // without NCCL_DEBUG it logs nothing: taken over, then given back
  fs::path path;
  {
    const NcclDebugCapture capture(dir_);
    ASSERT_TRUE(capture.available()) << capture.unavailable_reason();
    EXPECT_TRUE(capture.unavailable_reason().empty());
    path = capture.path();
    EXPECT_EQ(path.parent_path(), dir_);
    EXPECT_EQ(env("NCCL_DEBUG"), "INFO");
    EXPECT_EQ(env("NCCL_DEBUG_SUBSYS"), "INIT");
    EXPECT_EQ(env("NCCL_DEBUG_FILE"), path.string());
    struct stat status {};
    ASSERT_EQ(::stat(path.c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 0777, 0600U);  // the log names hosts, NICs and addresses
    EXPECT_EQ(capture.mark(), 0U);
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(env("NCCL_DEBUG"), std::nullopt);
  EXPECT_EQ(env("NCCL_DEBUG_SUBSYS"), "COLL");
  EXPECT_EQ(env("NCCL_DEBUG_FILE"), std::nullopt);
}

TEST_F(NcclDebugCaptureTest, TheUsersOwnNcclDebugIsLeftAloneAndSaidWhy) {
  ::setenv("NCCL_DEBUG", "WARN", 1);
  {
    const NcclDebugCapture capture(dir_);
    EXPECT_FALSE(capture.available());
    EXPECT_NE(capture.unavailable_reason().find("NCCL_DEBUG=WARN is set by the user"), std::string::npos)
        << capture.unavailable_reason();
    EXPECT_TRUE(capture.path().empty());
    EXPECT_EQ(capture.mark(), 0U);
    EXPECT_FALSE(capture.read_since(0).ok());
    EXPECT_EQ(env("NCCL_DEBUG"), "WARN");
    EXPECT_EQ(env("NCCL_DEBUG_SUBSYS"), std::nullopt);
    EXPECT_EQ(env("NCCL_DEBUG_FILE"), std::nullopt);
    EXPECT_TRUE(fs::is_empty(dir_));
  }
  EXPECT_EQ(env("NCCL_DEBUG"), "WARN");
}

TEST_F(NcclDebugCaptureTest, TheUsersOwnNcclDebugFileIsLeftAlone) {
  const std::string theirs = (dir_ / "nccl.%h.%p.log").string();
  ::setenv("NCCL_DEBUG_FILE", theirs.c_str(), 1);
  const NcclDebugCapture capture(dir_);
  EXPECT_FALSE(capture.available());
  EXPECT_NE(capture.unavailable_reason().find("NCCL_DEBUG_FILE=" + theirs), std::string::npos);
  EXPECT_EQ(env("NCCL_DEBUG"), std::nullopt);
  EXPECT_EQ(env("NCCL_DEBUG_FILE"), theirs);
}

TEST_F(NcclDebugCaptureTest, AnEmptyNcclDebugCountsAsUnsetAndComesBackEmpty) {
  ::setenv("NCCL_DEBUG", "", 1);
  {
    const NcclDebugCapture capture(dir_);
    EXPECT_TRUE(capture.available()) << capture.unavailable_reason();
    EXPECT_EQ(env("NCCL_DEBUG"), "INFO");
  }
  EXPECT_EQ(env("NCCL_DEBUG"), "");
}

TEST_F(NcclDebugCaptureTest, ReadsWhatNcclWroteSinceAMarkInWholeLines) {
  const NcclDebugCapture capture(dir_);
  ASSERT_TRUE(capture.available()) << capture.unavailable_reason();
  const std::string setup = "dgx-h100-01:2714093:2714093 [0] NCCL INFO Bootstrap : Using bond0:10.32.4.17<0>\n";
  append(capture.path(), setup);
  const std::uint64_t mark = capture.mark();
  EXPECT_EQ(mark, setup.size());

  const std::string first =
      "dgx-h100-01:2714093:2714163 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n";
  const std::string partial = "dgx-h100-01:2714093:2714163 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CU";
  append(capture.path(), first + partial);
  auto read = capture.read_since(mark);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->text, first);  // the line still being written waits
  EXPECT_EQ(read->next_mark, mark + first.size());

  append(capture.path(), "MEM/read\n");
  auto rest = capture.read_since(read->next_mark);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(rest->text, partial + "MEM/read\n");
  EXPECT_EQ(summarize_nccl_transports(read->text + rest->text).transports.at(0).connections, 2U);

  // Nothing new: nothing read, and the mark stays.
  auto none = capture.read_since(rest->next_mark);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->text.empty());
  EXPECT_EQ(none->next_mark, rest->next_mark);
}

TEST_F(NcclDebugCaptureTest, AFileShorterThanTheMarkIsReadFromItsStart) {
  const NcclDebugCapture capture(dir_);
  ASSERT_TRUE(capture.available());
  // NCCL opens the file with "w": had anything been there, it would be gone.
  append(capture.path(), "h:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n");
  auto read = capture.read_since(4096);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(summarize_nccl_transports(read->text).summary, "SHM/direct/direct (1 channel connection)");
}

TEST_F(NcclDebugCaptureTest, APercentInTheDirectoryReachesNcclDoubled) {
  // NCCL expands %h and %p in NCCL_DEBUG_FILE and reads "%%" as "%".
  const fs::path odd = dir_ / "run 100%p";
  fs::create_directories(odd);
  const NcclDebugCapture capture(odd);
  ASSERT_TRUE(capture.available()) << capture.unavailable_reason();
  EXPECT_TRUE(fs::exists(capture.path()));
  const std::string value = env("NCCL_DEBUG_FILE").value_or("");
  EXPECT_EQ(value.substr(0, (dir_ / "run 100%%p/").string().size()), (dir_ / "run 100%%p/").string());
}

TEST_F(NcclDebugCaptureTest, ADirectoryThatCannotTakeTheFileMakesItUnavailableAndChangesNothing) {
  const NcclDebugCapture capture(dir_ / "missing");
  EXPECT_FALSE(capture.available());
  EXPECT_NE(capture.unavailable_reason().find("No such file or directory"), std::string::npos)
      << capture.unavailable_reason();
  EXPECT_EQ(env("NCCL_DEBUG"), std::nullopt);
  EXPECT_EQ(env("NCCL_DEBUG_FILE"), std::nullopt);
}

}  // namespace
}  // namespace pcieval
