// diagnose of the captures issue 28 reads: p2pBandwidthLatencyTest,
// nvidia-smi topo -p2p and lspci -vvv with ACS, payload and ASPM lines,
// end to end through the rules. The fixtures are modelled on the public
// reports their headers cite; the corpus captures keep their ground truth
// (/work/shared/corpus/SOURCES.md: HEALTHY at Gen4 x16).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/diagnose_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

class DiagnosePeer : public DiagnoseRunner {};

std::vector<std::string> codes_of(const Json& document) {
  std::vector<std::string> codes;
  for (const Json& v : document["verdicts"])
    codes.push_back(v["status"].get<std::string>() + " " + v["code"].get<std::string>());
  return codes;
}

TEST_F(DiagnosePeer, PeerCopiesSlowerThanStagedFailWithoutAnyLink) {
  // NVIDIA/nccl issue 814: 9.6-10.5 GB/s with peer access, 20-22 without,
  // the device lines cut: no address, no link, and still no pass.
  const auto [exit_code, document] = diagnose({capture("p2pbw_nccl814_6gpu_p2p_enabled_slower.txt")});
  EXPECT_EQ(exit_code, 1);
  const Json* slower = verdict_for(document, "GPU 0->GPU 1", "peer_slower_than_host_staged");
  ASSERT_NE(slower, nullptr) << document["verdicts"].dump(2);
  EXPECT_EQ((*slower)["status"], "misconfigured");
  EXPECT_THAT((*slower)["reason"].get<std::string>(), HasSubstr("p2p_staged_ce 20.1 GB/s"));
  EXPECT_THAT(codes_of(document), Not(Contains(::testing::StartsWith("pass"))));
}

TEST_F(DiagnosePeer, HealthyCorpusPeerCopiesPassAgainstTheStatedLink) {
  const std::string corpus = std::string(PCIEVAL_SOURCE_DIR) + "/../shared/corpus/";
  const std::string file = corpus + "bw_puget_wrx90_rtx6000ada_bandwidthTest_p2p.txt";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "the shared corpus is not beside this checkout";
  const auto [exit_code, document] = diagnose({file}, "--link gen4x16");
  EXPECT_EQ(exit_code, 0);
  const Json* pair = verdict_for(document, "0000:c1:00.0->0000:c2:00.0", "peer_bandwidth_at_budget");
  ASSERT_NE(pair, nullptr) << document["verdicts"].dump(2);
  EXPECT_THAT((*pair)["reason"].get<std::string>(), HasSubstr("26.3 GB/s"));
  // Without a link the same numbers are read and not judged: inconclusive.
  EXPECT_EQ(diagnose({file}).first, 3);
}

TEST_F(DiagnosePeer, LspciWithAcsRedirectOnPlxPortsNamesThePortsAndTheSetpciLine) {
  // NVIDIA/nccl issues 19 and 304: a PLX switch whose downstream ports
  // redirect, every hop programmed at 128 bytes.
  const auto [exit_code, document] = diagnose({capture("lspci_vvv_supermicro_7048gr_plx_acs_redirect_mps128.txt")});
  EXPECT_EQ(exit_code, 1);
  const Json* acs = verdict_for(document, "0000:05:00.0", "acs_redirects_peer_traffic");
  ASSERT_NE(acs, nullptr) << document["verdicts"].dump(2);
  EXPECT_EQ((*acs)["status"], "misconfigured");
  EXPECT_THAT((*acs)["reason"].get<std::string>(), HasSubstr("0000:04:08.0"));
  EXPECT_THAT((*acs)["reason"].get<std::string>(), HasSubstr("ReqRedir+ CmpltRedir+"));
  EXPECT_THAT((*acs)["remediation"].get<std::string>(), HasSubstr("setpci -s 0000:04:08.0 ECAP_ACS+0x6.w=0000"));
  EXPECT_NE(verdict_for(document, "0000:05:00.0", "payload_below_supported"), nullptr);
}

TEST_F(DiagnosePeer, StatusMatricesAloneProveNothing) {
  // topo -p2p and CAN/CANNOT lines say which pairs may talk, not how fast
  // nor over which ports: read, and inconclusive.
  for (const char* name :
       {"topo_p2p_rw_2gpu_blackwell_phb_cns.txt", "p2pbw_nccl257_4x1080ti_cannot_across_sockets.txt"}) {
    const auto [exit_code, document] = diagnose({capture(name)});
    EXPECT_EQ(exit_code, 3) << name;
    EXPECT_THAT(codes_of(document), Each(::testing::StartsWith("inconclusive"))) << name;
  }
}

}  // namespace
}  // namespace pcieval::testing
