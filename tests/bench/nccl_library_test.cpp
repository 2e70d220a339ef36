// The NCCL function table: resolution through a fake lookup, error texts,
// and, where this machine has libnccl.so.2 (the CUDA toolkit's copy), the
// real library's symbols and version. No GPU needed: nothing here calls NCCL
// beyond ncclGetVersion.
#include "bench/nccl_library.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>

namespace pcieval {
namespace {

// A fake NCCL: every entry a function that answers without doing anything.
NcclResult fake_version(int* version) {
  *version = 22803;
  return kNcclSuccess;
}
NcclResult fake_unique_id(NcclUniqueId* /*id*/) { return kNcclSuccess; }
NcclResult fake_init(NcclComm* /*comm*/, int /*ranks*/, NcclUniqueId /*id*/, int /*rank*/) { return kNcclSuccess; }
NcclResult fake_group() { return kNcclSuccess; }
NcclResult fake_all_reduce(const void* /*send*/, void* /*receive*/, std::size_t /*count*/, int /*type*/, int /*op*/,
                           NcclComm /*comm*/, CUstream_st* /*stream*/) {
  return kNcclSuccess;
}
NcclResult fake_comm(NcclComm /*comm*/) { return kNcclSuccess; }
NcclResult fake_async(NcclComm /*comm*/, NcclResult* error) {
  *error = kNcclSuccess;
  return kNcclSuccess;
}
const char* fake_error_string(NcclResult code) { return code == 2 ? "unhandled system error" : ""; }

std::map<std::string, void*> fake_symbols() {
  // POSIX: function pointers round-trip through void* (dlsym relies on it).
  return {
      {"ncclGetVersion", reinterpret_cast<void*>(&fake_version)},
      {"ncclGetUniqueId", reinterpret_cast<void*>(&fake_unique_id)},
      {"ncclCommInitRank", reinterpret_cast<void*>(&fake_init)},
      {"ncclGroupStart", reinterpret_cast<void*>(&fake_group)},
      {"ncclGroupEnd", reinterpret_cast<void*>(&fake_group)},
      {"ncclAllReduce", reinterpret_cast<void*>(&fake_all_reduce)},
      {"ncclCommAbort", reinterpret_cast<void*>(&fake_comm)},
      {"ncclCommDestroy", reinterpret_cast<void*>(&fake_comm)},
      {"ncclCommGetAsyncError", reinterpret_cast<void*>(&fake_async)},
      {"ncclGetErrorString", reinterpret_cast<void*>(&fake_error_string)},
  };
}

Result<NcclApi> resolve_without(const std::set<std::string>& missing) {
  const auto symbols = fake_symbols();
  return resolve_nccl_api(
      [&](const char* name) -> void* {
        if (missing.count(name) != 0) return nullptr;
        const auto found = symbols.find(name);
        return found == symbols.end() ? nullptr : found->second;
      },
      "libnccl.so.2");
}

TEST(NcclLibrary, ResolvesEverySymbol) {
  const auto api = resolve_without({});
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_EQ(api.value().all_reduce, &fake_all_reduce);
  EXPECT_EQ(api.value().comm_get_async_error, &fake_async);
  EXPECT_EQ(api.value().group_end, &fake_group);
}

TEST(NcclLibrary, AMissingSymbolIsAnErrorNamingIt) {
  const auto api = resolve_without({"ncclCommAbort", "ncclCommGetAsyncError"});
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.error().message.find("libnccl.so.2 lacks ncclCommAbort, ncclCommGetAsyncError"), std::string::npos)
      << api.error().message;
  EXPECT_NE(api.error().message.find("older than 2.4"), std::string::npos) << api.error().message;
}

TEST(NcclLibrary, FromApiReadsTheVersion) {
  auto library = NcclLibrary::from_api(resolve_without({}).value());
  ASSERT_TRUE(library.ok()) << library.error().message;
  EXPECT_EQ(library.value().version(), "2.28.3");
  NcclLibrary moved = std::move(library).value();
  EXPECT_EQ(moved.version(), "2.28.3");
  EXPECT_EQ(moved.api().get_version, &fake_version);
}

TEST(NcclLibrary, FromApiRefusesAnIncompleteTable) {
  NcclApi api = resolve_without({}).value();
  api.comm_abort = nullptr;
  EXPECT_FALSE(NcclLibrary::from_api(api).ok());
}

TEST(NcclLibrary, VersionCodesOfBothEras) {
  EXPECT_EQ(format_nccl_version(22803), "2.28.3");  // NCCL_VERSION since 2.9: X*10000 + Y*100 + Z
  EXPECT_EQ(format_nccl_version(2804), "2.8.4");    // before: X*1000 + Y*100 + Z
  EXPECT_EQ(format_nccl_version(0), "");
}

TEST(NcclLibrary, ErrorTextNamesTheCallTheCodeAndNcclsOwnText) {
  const NcclApi api = resolve_without({}).value();
  EXPECT_EQ(nccl_error_text(api, "ncclCommInitRank", 2), "ncclCommInitRank: ncclSystemError (unhandled system error)");
  EXPECT_EQ(nccl_error_text(api, "ncclGroupEnd", 42), "ncclGroupEnd: ncclResult 42");
  EXPECT_EQ(nccl_result_name(7), "ncclInProgress");
}

TEST(NcclLibrary, AMissingLibraryGivesTheLoadersReason) {
  const auto library = NcclLibrary::load("/nonexistent/libnccl.so.2");
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.error().message.find("/nonexistent/libnccl.so.2 could not be loaded: "), std::string::npos)
      << library.error().message;
  EXPECT_NE(library.error().message.find("No such file or directory"), std::string::npos) << library.error().message;
}

TEST(NcclLibrary, TheRealLibraryResolvesWhereInstalled) {
  auto library = NcclLibrary::load();
  if (!library) GTEST_SKIP() << library.error().message;
  // ncclGetVersion needs no GPU.
  EXPECT_FALSE(library.value().version().empty());
  EXPECT_EQ(library.value().version().rfind("2.", 0), 0U) << library.value().version();
}

}  // namespace
}  // namespace pcieval
