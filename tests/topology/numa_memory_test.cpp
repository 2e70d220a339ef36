// Where host buffers' pages are (topology/numa_memory.hpp): the check made
// again after pinning (issue 17, item 6), on its plain inputs and on a live
// buffer of this machine.
#include "topology/numa_memory.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace pcieval {
namespace {

using ::testing::HasSubstr;

TEST(PagesOnNode, AllOnTheExpectedNodeIsFine) { EXPECT_TRUE(check_pages_on_node(1, {1}, "after registration").ok()); }

TEST(PagesOnNode, MovedToAnotherNodeIsAnErrorSayingWhereAndWhen) {
  const Status moved = check_pages_on_node(0, {1}, "after registration");
  ASSERT_FALSE(moved.ok());
  EXPECT_THAT(moved.error().message, HasSubstr("placed on NUMA node 0 were on node 1 after registration"));
}

TEST(PagesOnNode, SpreadOverNodesIsAnError) {
  const Status spread = check_pages_on_node(0, {0, 1}, "after registration");
  ASSERT_FALSE(spread.ok());
  EXPECT_THAT(spread.error().message, HasSubstr("were on nodes 0,1 after registration"));
}

TEST(PagesOnNode, NoNodeReportedIsAnError) {
  const Status none = check_pages_on_node(0, {}, "after registration");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("were on node no node"));
}

TEST(PagesOnNode, ALiveBufferIsStillOnItsNodeAfterLocking) {
  auto topology = HwlocTopology::load_live();
  if (!topology) GTEST_SKIP() << "hwloc cannot load this machine: " << topology.error().message;
  const int node = numa_nodes(topology.value()).front();
  auto buffer = NumaBuffer::allocate(topology.value(), node, std::size_t{1} << 20);
  ASSERT_TRUE(buffer.ok()) << buffer.error().message;
  EXPECT_TRUE(buffer.value().verify_node().ok());
  // mlock pins as registration does (it may be refused under RLIMIT_MEMLOCK).
  static_cast<void>(buffer.value().lock_pages());
  const Status verified = buffer.value().verify_node();
  EXPECT_TRUE(verified.ok()) << verified.error().message;
}

}  // namespace
}  // namespace pcieval
