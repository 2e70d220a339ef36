// model/probe_keys.hpp lists the registry's keys so that a threshold profile
// can be checked without including bench/: the list and the registry must
// stay the same, or a profile would refuse a real probe (or accept a
// retired one).
#include "model/probe_keys.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/probe.hpp"

namespace pcieval {
namespace {

TEST(ProbeKeys, TheModelsListIsTheRegistrysKeysInItsOrder) {
  std::vector<std::string> registry;
  for (const auto& probe : make_probe_registry()) registry.emplace_back(probe->key());
  const std::vector<std::string> listed(kRegistryProbeKeys.begin(), kRegistryProbeKeys.end());
  EXPECT_EQ(registry, listed);
}

}  // namespace
}  // namespace pcieval
