// libFuzzer harness: the peer-to-peer readers of issue 28,
// p2pBandwidthLatencyTest output and `nvidia-smi topo -p2p` matrices.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/nvidia_smi_topo.hpp"
#include "ingest/p2p_bandwidth_latency.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)pcieval::looks_like_p2p_bandwidth_latency_test(text);
  (void)pcieval::looks_like_nvidia_smi_topo_p2p(text);
  (void)pcieval::parse_p2p_bandwidth_latency_test(text, "fuzz");
  (void)pcieval::parse_nvidia_smi_topo_p2p(text, "fuzz");
  return 0;
}
