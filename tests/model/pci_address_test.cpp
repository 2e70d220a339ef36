#include "model/pci_address.hpp"

#include <gtest/gtest.h>

namespace pcieval {
namespace {

TEST(PciAddress, ParsesFullFormAndPrintsCanonically) {
  const auto address = parse_pci_address("0000:17:00.0");
  ASSERT_TRUE(address.ok()) << address.error().message;
  EXPECT_EQ(address->domain, 0U);
  EXPECT_EQ(address->bus, 0x17);
  EXPECT_EQ(address->device, 0);
  EXPECT_EQ(address->function, 0);
  EXPECT_EQ(to_string(*address), "0000:17:00.0");
}

TEST(PciAddress, ShortFormMeansDomainZero) {
  const auto address = parse_pci_address("b7:00.1");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(to_string(*address), "0000:b7:00.1");
}

TEST(PciAddress, UppercaseIsNormalisedToLowercase) {
  // nvidia-smi prints "00000000:AB:00.0"; the kernel and lspci print lowercase.
  const auto address = parse_pci_address("0001:AB:1F.7");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(to_string(*address), "0001:ab:1f.7");
}

TEST(PciAddress, WideVmDomainsKeepAllDigits) {
  // Hyper-V guests use 32-bit PCI domains such as 0x0001e2c3.
  const auto address = parse_pci_address("0001e2c3:00:00.0");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(address->domain, 0x1e2c3U);
  // The kernel prints domains with %04x, so wider ones keep every digit.
  EXPECT_EQ(to_string(*address), "1e2c3:00:00.0");
}

TEST(PciAddress, OrdersByDomainBusDeviceFunction) {
  EXPECT_LT(*parse_pci_address("0000:17:00.0"), *parse_pci_address("0000:18:00.0"));
  EXPECT_LT(*parse_pci_address("0000:ff:1f.7"), *parse_pci_address("0001:00:00.0"));
}

class PciAddressRejects : public ::testing::TestWithParam<const char*> {};

TEST_P(PciAddressRejects, WithAMessageNamingTheInput) {
  const auto address = parse_pci_address(GetParam());
  ASSERT_FALSE(address.ok());
  EXPECT_NE(address.error().message.find(std::string("'") + GetParam() + "'"), std::string::npos)
      << address.error().message;
}

INSTANTIATE_TEST_SUITE_P(Malformed, PciAddressRejects,
                         ::testing::Values("", "17:00", "17.0", "0000:17:00.8", "0000:17:20.0", "0000:117:00.0",
                                           "zz:00.0", "0000:17:00.0 ", " 17:00.0", "0000:17:00.", "0000::00.0",
                                           "-1:00.0", "0x17:00.0", "0000:17:00.0.0", ":17:00.0", "123456789:00:00.0"));

}  // namespace
}  // namespace pcieval
