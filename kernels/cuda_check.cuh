// CUDA-only helpers shared by the .cu files of kernels/: turning cudaError_t
// into the project's Error values. Never included by a .hpp.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "model/result.hpp"

namespace pcieval::detail {

// "cudaMemcpyAsync: cudaErrorInvalidValue (invalid argument)". `call` may be
// the whole call text (from PCIEVAL_CUDA_TRY); only the function name is kept.
inline Error cuda_error(const char* call, cudaError_t code) {
  std::string name(call);
  name = name.substr(0, name.find('('));
  return make_error(name + ": " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}

inline Status cuda_status(const char* call, cudaError_t code) {
  if (code == cudaSuccess) return ok_status();
  return cuda_error(call, code);
}

// Makes `ordinal` the calling thread's current device. Every entry point of
// kernels/ calls it first: the current device is per host thread, and a
// stream or kernel of one device used while another is current fails.
inline Status use_device(int ordinal) { return cuda_status("cudaSetDevice", cudaSetDevice(ordinal)); }

}  // namespace pcieval::detail

// Returns the error of a failed CUDA call from the enclosing function, whose
// return type is a Result or Status.
#define PCIEVAL_CUDA_TRY(call)                                        \
  do {                                                                \
    const cudaError_t pcieval_cuda_code = (call);                     \
    if (pcieval_cuda_code != cudaSuccess) {                           \
      return ::pcieval::detail::cuda_error(#call, pcieval_cuda_code); \
    }                                                                 \
  } while (false)

// Returns from the enclosing function when a Status-valued expression failed.
#define PCIEVAL_TRY_STATUS(expr)     \
  do {                               \
    auto pcieval_status = (expr);    \
    if (!pcieval_status.ok()) {      \
      return pcieval_status.error(); \
    }                                \
  } while (false)

#define PCIEVAL_CONCAT_INNER(a, b) a##b
#define PCIEVAL_CONCAT(a, b) PCIEVAL_CONCAT_INNER(a, b)

// Declares `lhs` from the value of a Result-valued expression, or returns its
// error from the enclosing function.
#define PCIEVAL_ASSIGN_OR_RETURN(lhs, expr) \
  PCIEVAL_ASSIGN_OR_RETURN_IMPL(PCIEVAL_CONCAT(pcieval_result_, __LINE__), lhs, expr)
#define PCIEVAL_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                  \
  if (!result.ok()) return result.error();               \
  lhs = std::move(result).value()
