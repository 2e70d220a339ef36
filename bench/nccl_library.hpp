// NCCL (libnccl.so.2), loaded at run time so that the binary starts on a node
// without it and the all-reduce probes say why they were skipped. Never
// linked: NCCL ships with the ML frameworks, not with the driver, and a node
// without it must still run every other probe.
//
// No nccl.h here: the few types pcieval passes across the C ABI are declared
// below with the values nccl.h gives them (NCCL 2.x, unchanged since 2.4). A
// build that finds the CUDA toolkit checks them against the real nccl.h at
// compile time (nccl_library.cpp), so a drift fails the build, not a run.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "model/result.hpp"
#include "support/shared_library.hpp"

struct CUstream_st;  // cudaStream_t, as kernels/resources.hpp declares it

namespace pcieval {

// ncclComm_t: an opaque pointer owned by NCCL.
struct NcclCommOpaque;
using NcclComm = NcclCommOpaque*;

// ncclResult_t: a C enum, passed as int.
using NcclResult = int;
inline constexpr NcclResult kNcclSuccess = 0;
inline constexpr NcclResult kNcclInProgress = 7;  // ncclInProgress: a non-blocking call still running

// ncclUniqueId: NCCL_UNIQUE_ID_BYTES opaque bytes, passed by value.
inline constexpr std::size_t kNcclUniqueIdBytes = 128;
struct NcclUniqueId {
  char internal[kNcclUniqueIdBytes];
};

// ncclDataType_t and ncclRedOp_t values pcieval uses (C enums, passed as int).
inline constexpr int kNcclFloat32 = 7;  // ncclFloat32 == ncclFloat
inline constexpr int kNcclSum = 0;      // ncclSum

// "ncclUnhandledCudaError"; an unknown code gives "ncclResult <n>".
[[nodiscard]] std::string nccl_result_name(NcclResult code);

// "2.28.3" from ncclGetVersion's code: NCCL_VERSION is X*10000+Y*100+Z since
// 2.9 and X*1000+Y*100+Z before.
[[nodiscard]] std::string format_nccl_version(int code);

// The functions pcieval calls, one pointer per NCCL symbol: the seam tests
// replace with fakes. Every entry is required.
struct NcclApi {
  NcclResult (*get_version)(int*) = nullptr;                                  // ncclGetVersion
  NcclResult (*get_unique_id)(NcclUniqueId*) = nullptr;                       // ncclGetUniqueId
  NcclResult (*comm_init_rank)(NcclComm*, int, NcclUniqueId, int) = nullptr;  // ncclCommInitRank
  NcclResult (*group_start)() = nullptr;                                      // ncclGroupStart
  NcclResult (*group_end)() = nullptr;                                        // ncclGroupEnd
  // ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream)
  NcclResult (*all_reduce)(const void*, void*, std::size_t, int, int, NcclComm, CUstream_st*) = nullptr;
  NcclResult (*comm_abort)(NcclComm) = nullptr;                         // ncclCommAbort
  NcclResult (*comm_destroy)(NcclComm) = nullptr;                       // ncclCommDestroy
  NcclResult (*comm_get_async_error)(NcclComm, NcclResult*) = nullptr;  // ncclCommGetAsyncError
  const char* (*get_error_string)(NcclResult) = nullptr;                // ncclGetErrorString
};

inline constexpr std::string_view kNcclLibraryName = "libnccl.so.2";
// Names another library to load instead (support/shared_library.hpp).
inline constexpr std::string_view kNcclLibraryEnvironment = "PCIEVAL_NCCL_LIBRARY";

// Fills an NcclApi from a symbol lookup (dlsym on the real library; a table in
// tests). Missing symbols are one error naming every one of them.
[[nodiscard]] Result<NcclApi> resolve_nccl_api(const std::function<void*(const char* symbol)>& lookup,
                                               std::string_view library_name);

// "ncclCommInitRank: ncclSystemError (unhandled system error ...)": the call,
// the code's name and NCCL's own text when the table has it.
[[nodiscard]] std::string nccl_error_text(const NcclApi& api, std::string_view call, NcclResult code);

// A loaded NCCL: the dlopen handle (when loaded from a file) and its resolved
// table. Move-only. The destructor dlcloses unless keep_loaded() was called:
// a communicator that was abandoned (its setup never returned) still has
// NCCL threads running inside the library, and unloading it would pull the
// code from under them.
class NcclLibrary {
 public:
  // dlopens `library_name` (RTLD_NOW | RTLD_LOCAL) and resolves the symbols.
  // Errors: "libnccl.so.2 could not be loaded: <dlerror text>", or missing
  // symbols. Does not call into NCCL beyond ncclGetVersion.
  [[nodiscard]] static Result<NcclLibrary> load(std::string_view library_name = kNcclLibraryName);
  // Takes an already resolved table (a fake in tests). Every entry must be set.
  [[nodiscard]] static Result<NcclLibrary> from_api(const NcclApi& api);

  NcclLibrary(NcclLibrary&&) noexcept = default;
  NcclLibrary& operator=(NcclLibrary&&) noexcept = default;
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;
  ~NcclLibrary() = default;

  [[nodiscard]] const NcclApi& api() const { return api_; }
  // "2.28.3", or "" when ncclGetVersion failed.
  [[nodiscard]] const std::string& version() const { return version_; }
  // Never dlclose (see the class comment).
  void keep_loaded() { library_.keep_loaded(); }

 private:
  NcclLibrary(SharedLibrary library, const NcclApi& api);

  SharedLibrary library_;  // owns nothing for a table given by from_api
  NcclApi api_;
  std::string version_;
};

}  // namespace pcieval
