// SharedLibrary: dlopen's handle, owned. Tested on the C library, which every
// process has loaded, and on a name no system has.
#include "support/shared_library.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>

namespace pcieval {
namespace {

TEST(SharedLibrary, OpensALibraryAndFindsItsSymbols) {
  auto libc = SharedLibrary::open("libc.so.6");
  ASSERT_TRUE(libc) << libc.error().message;
  EXPECT_NE(libc.value().symbol("malloc"), nullptr);
  EXPECT_EQ(libc.value().symbol("pcieval_no_such_symbol"), nullptr);
}

TEST(SharedLibrary, AMissingLibraryIsAnErrorInDlopensWords) {
  auto missing = SharedLibrary::open("libpcieval-no-such-library.so.1");
  ASSERT_FALSE(missing);
  // NvmlLibrary::load tells "not installed" from other failures by this text.
  EXPECT_NE(missing.error().message.find("No such file or directory"), std::string::npos) << missing.error().message;
}

TEST(SharedLibrary, AMovedFromOrEmptyLibraryOwnsNothing) {
  auto libc = SharedLibrary::open("libc.so.6");
  ASSERT_TRUE(libc);
  SharedLibrary moved = std::move(libc).value();
  EXPECT_NE(moved.symbol("malloc"), nullptr);
  SharedLibrary empty;
  EXPECT_EQ(empty.symbol("malloc"), nullptr);
  empty = std::move(moved);
  EXPECT_NE(empty.symbol("malloc"), nullptr);
  EXPECT_EQ(moved.symbol("malloc"), nullptr);  // NOLINT(bugprone-use-after-move): moved-from owns nothing
  empty.keep_loaded();                         // the C library is never closed anyway
}

// PCIEVAL_CUDA_LIBRARY, PCIEVAL_NVML_LIBRARY and PCIEVAL_NCCL_LIBRARY name
// another library to load; unset or empty, the usual name.
TEST(LibraryFromEnvironment, ASetVariableNamesTheLibraryAndAnEmptyOneDoesNot) {
  constexpr const char* kVariable = "PCIEVAL_TEST_LIBRARY_CHOICE";
  ::unsetenv(kVariable);
  EXPECT_EQ(library_from_environment(kVariable, "libnccl.so.2"), "libnccl.so.2");
  ::setenv(kVariable, "", 1);
  EXPECT_EQ(library_from_environment(kVariable, "libnccl.so.2"), "libnccl.so.2");
  ::setenv(kVariable, "/opt/sim/libnccl.so", 1);
  EXPECT_EQ(library_from_environment(kVariable, "libnccl.so.2"), "/opt/sim/libnccl.so");
  ::unsetenv(kVariable);
}

}  // namespace
}  // namespace pcieval
