#include "bench/nccl_library.hpp"

#include <utility>
#include <vector>

#include "model/enum_names.hpp"

// The declarations of nccl_library.hpp, checked against the real header where
// the build has one (bench/CMakeLists.txt defines PCIEVAL_CHECK_NCCL_H when
// the CUDA toolkit is found and gives this file its include directory).
#if defined(PCIEVAL_CHECK_NCCL_H) && __has_include(<nccl.h>)
#include <nccl.h>

#include <type_traits>

static_assert(sizeof(ncclUniqueId) == sizeof(pcieval::NcclUniqueId), "ncclUniqueId size changed");
static_assert(NCCL_UNIQUE_ID_BYTES == pcieval::kNcclUniqueIdBytes, "NCCL_UNIQUE_ID_BYTES changed");
static_assert(static_cast<int>(ncclSuccess) == pcieval::kNcclSuccess, "ncclSuccess changed");
static_assert(static_cast<int>(ncclInProgress) == pcieval::kNcclInProgress, "ncclInProgress changed");
static_assert(static_cast<int>(ncclFloat32) == pcieval::kNcclFloat32, "ncclFloat32 changed");
static_assert(static_cast<int>(ncclSum) == pcieval::kNcclSum, "ncclSum changed");
// The enums are passed as int across the C ABI: their size must be int's.
static_assert(sizeof(ncclResult_t) == sizeof(int) && sizeof(ncclDataType_t) == sizeof(int) &&
                  sizeof(ncclRedOp_t) == sizeof(int),
              "an NCCL enum is not int-sized");
#endif

namespace pcieval {
namespace {

bool complete(const NcclApi& api) {
  return api.get_version != nullptr && api.get_unique_id != nullptr && api.comm_init_rank != nullptr &&
         api.group_start != nullptr && api.group_end != nullptr && api.all_reduce != nullptr &&
         api.comm_abort != nullptr && api.comm_destroy != nullptr && api.comm_get_async_error != nullptr &&
         api.get_error_string != nullptr;
}

}  // namespace

std::string nccl_result_name(NcclResult code) {
  // Names from nccl.h's ncclResult_t.
  constexpr EnumNames<NcclResult, 8> kNames{{{0, "ncclSuccess"},
                                             {1, "ncclUnhandledCudaError"},
                                             {2, "ncclSystemError"},
                                             {3, "ncclInternalError"},
                                             {4, "ncclInvalidArgument"},
                                             {5, "ncclInvalidUsage"},
                                             {6, "ncclRemoteError"},
                                             {7, "ncclInProgress"}}};
  const std::string_view name = name_of(kNames, code, "");
  return name.empty() ? "ncclResult " + std::to_string(code) : std::string(name);
}

std::string format_nccl_version(int code) {
  if (code <= 0) return {};
  // NCCL_VERSION changed its major multiplier from 1000 to 10000 at 2.9.
  const int major_scale = code >= 20900 ? 10000 : 1000;
  const int major = code / major_scale;
  const int minor = (code % major_scale) / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

Result<NcclApi> resolve_nccl_api(const std::function<void*(const char* symbol)>& lookup,
                                 std::string_view library_name) {
  NcclApi api;
  std::vector<std::string> missing;
  const auto want = [&](auto& slot, const char* name) {
    if (!bind_symbol(slot, name, lookup)) missing.emplace_back(name);
  };
  want(api.get_version, "ncclGetVersion");
  want(api.get_unique_id, "ncclGetUniqueId");
  want(api.comm_init_rank, "ncclCommInitRank");
  want(api.group_start, "ncclGroupStart");
  want(api.group_end, "ncclGroupEnd");
  want(api.all_reduce, "ncclAllReduce");
  want(api.comm_abort, "ncclCommAbort");
  want(api.comm_destroy, "ncclCommDestroy");
  want(api.comm_get_async_error, "ncclCommGetAsyncError");
  want(api.get_error_string, "ncclGetErrorString");
  if (!missing.empty()) {
    std::string names;
    for (const auto& name : missing) names += (names.empty() ? "" : ", ") + name;
    return make_error(std::string(library_name) + " lacks " + names +
                      ": not an NCCL library, or an NCCL older than 2.4 (ncclCommAbort and ncclCommGetAsyncError "
                      "came in 2.4)");
  }
  return api;
}

std::string nccl_error_text(const NcclApi& api, std::string_view call, NcclResult code) {
  std::string text = std::string(call) + ": " + nccl_result_name(code);
  if (api.get_error_string != nullptr) {
    const char* detail = api.get_error_string(code);
    if (detail != nullptr && *detail != '\0') text += std::string(" (") + detail + ")";
  }
  return text;
}

Result<NcclLibrary> NcclLibrary::load(std::string_view library_name) {
  const std::string name(library_name);
  auto library = SharedLibrary::open(name);
  if (!library) return make_error(name + " could not be loaded: " + library.error().message);
  auto api = resolve_nccl_api([&library](const char* symbol) { return library.value().symbol(symbol); }, name);
  if (!api) return api.error();
  return NcclLibrary(std::move(library).value(), api.value());
}

Result<NcclLibrary> NcclLibrary::from_api(const NcclApi& api) {
  if (!complete(api)) return make_error("NCCL function table lacks an entry");
  return NcclLibrary(SharedLibrary{}, api);
}

NcclLibrary::NcclLibrary(SharedLibrary library, const NcclApi& api) : library_(std::move(library)), api_(api) {
  if (api_.get_version == nullptr) return;
  int code = 0;
  if (api_.get_version(&code) == kNcclSuccess) version_ = format_nccl_version(code);
}

}  // namespace pcieval
