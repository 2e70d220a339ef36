// Helpers shared by the sources of kernels/ that call the CUDA driver API
// (cuda_driver.hpp): its errors as the project's Error values, the current
// context, waits with a deadline. Never included by a public header.
#pragma once

#include <string>

#include "kernels/blocking_call.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/cuda_driver.hpp"
#include "kernels/deadline_wait.hpp"
#include "kernels/retired_devices.hpp"
#include "model/result.hpp"

namespace pcieval::detail {

// The loaded driver's entry points. REQUIRES: cuda_driver() succeeded, which
// use_device() checks: every entry point of kernels/ calls it before any
// other, and only objects made after it have destructors that call in.
[[nodiscard]] const CudaDriverApi& cu();

// "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)": `call` is the
// driver entry point's name.
inline Error cuda_error(const char* call, CuResult code) { return make_error(cuda_error_text(call, code)); }

inline Status cuda_status(const char* call, CuResult code) {
  if (code == kCudaSuccess) return ok_status();
  return cuda_error(call, code);
}

// Makes device `ordinal`'s primary context current on the calling thread
// (retained on first use and kept for the process, as the CUDA runtime
// keeps it: NCCL's runtime calls find the same context). Every entry point of
// kernels/ calls it first: the current context is per host thread, and a
// stream or kernel of one device used while another is current fails. It is
// also where a missing driver and a retired device (retired_devices.hpp) are
// refused, so nothing touches a context that may be wedged.
[[nodiscard]] Status use_device(int ordinal);

// Device `ordinal`'s primary context, retained on first use as use_device
// retains it (cuMemcpyPeerAsync and peer access name contexts).
[[nodiscard]] Result<CuContext> context_of(int ordinal);

// Makes `ordinal`'s context current for a destructor's release, when the
// driver is loaded and the device not retired; false otherwise (release
// nothing then).
[[nodiscard]] bool current_for_release(int ordinal) noexcept;

// A cuEventQuery / cuStreamQuery code as a poll's answer: done, still
// running (CUDA_ERROR_NOT_READY), or failed.
inline Result<bool> cuda_ready(const char* call, CuResult code) {
  if (code == kCudaSuccess) return true;
  if (code == kCudaErrorNotReady) return false;
  return cuda_error(call, code);
}

// The error of a call on device `ordinal` that returned `code`. A sticky
// error (an illegal address, a launch failure, an uncorrectable ECC error:
// cuda_error_is_sticky) leaves the context unusable for the rest of the
// process, so the device is retired with it: later probes skip it instead
// of failing on it one by one. Not as a hung GPU: its verdict is
// inconclusive with the error, never gpu_unresponsive.
[[nodiscard]] Error device_error(int ordinal, const char* call, CuResult code);

// cuda_ready for a query on device `ordinal`: a failure is device_error's.
inline Result<bool> device_ready(int ordinal, const char* call, CuResult code) {
  if (code == kCudaSuccess) return true;
  if (code == kCudaErrorNotReady) return false;
  return device_error(ordinal, call, code);
}

// " on 0000:17:00.0": where device `ordinal` sits, for error messages; empty
// when CUDA cannot say. cuDeviceGetPCIBusId reads what the driver knows,
// without touching the device.
inline std::string where_is(int ordinal) {
  auto address = cuda_pci_address(ordinal);
  return address ? " on " + to_string(address.value()) : std::string();
}

// Retires device `ordinal` after an operation on it missed its deadline
// (`message` says which, "<what> did not complete within 30 s"), and returns
// the error saying so. `where` is where_is(ordinal), looked up before the
// operation by a caller that must not call into CUDA afterwards (another
// thread may still be stuck inside the driver).
inline Error retire_after_timeout(int ordinal, const std::string& message, const std::string& where) {
  retire_cuda_device(ordinal, message + where);
  return make_error(message + where + "; CUDA device " + std::to_string(ordinal) + " is not used again in this run");
}

inline Error retire_after_timeout(int ordinal, const std::string& message) {
  // The PCI address makes the reason readable wherever it is repeated.
  return retire_after_timeout(ordinal, message, where_is(ordinal));
}

// Polls `query` (see deadline_wait.hpp) for work of device `ordinal`. A
// timeout retires the device (its context may be wedged) and says so.
inline Status wait_ready(int ordinal, const ReadyQuery& query, const PollPolicy& policy, const std::string& what) {
  const WaitResult waited = wait_until_ready(query, policy, what);
  if (waited.outcome == WaitOutcome::kReady) return ok_status();
  if (waited.outcome == WaitOutcome::kFailed) return make_error(waited.message);
  return retire_after_timeout(ordinal, waited.message);
}

// The error of a blocking call (blocking_call.hpp) that did not return: a
// timeout retires the device, as a timed-out wait does. `where`: see
// retire_after_timeout (the call's thread may still be inside the driver).
inline Error blocking_call_error(int ordinal, DeadlineOutcome outcome, const std::string& what, double timeout_s,
                                 const std::string& where) {
  if (outcome == DeadlineOutcome::kRefused) {
    return make_error(what + " could not be started: no thread for it");
  }
  return retire_after_timeout(ordinal, what + " did not complete within " + format_timeout_s(timeout_s), where);
}

// The error of host work for device `ordinal` (cudaHostRegister) that did
// not return: the device is retired as after any timeout (the call's thread
// may still be inside the driver, pinning the range), but for host work, so
// the GPU's verdict is inconclusive naming the host, not gpu_unresponsive.
inline Error host_work_call_error(int ordinal, DeadlineOutcome outcome, const std::string& what, double timeout_s,
                                  const std::string& where) {
  if (outcome == DeadlineOutcome::kRefused) {
    return make_error(what + " could not be started: no thread for it");
  }
  const std::string message = host_work_timeout_message(what, format_timeout_s(timeout_s), where, this_host_name());
  retire_cuda_device(ordinal, message, RetireCause::kHostWork);
  return make_error(message + "; CUDA device " + std::to_string(ordinal) + " is not used again in this run");
}

}  // namespace pcieval::detail

// Returns the error of a failed driver call from the enclosing function,
// whose return type is a Result or Status; `name` is the entry point called
// ("cuStreamCreate"), which the error names.
#define PCIEVAL_CU_TRY(name, call)                                   \
  do {                                                               \
    const ::pcieval::CuResult pcieval_cuda_code = (call);            \
    if (pcieval_cuda_code != ::pcieval::kCudaSuccess) {              \
      return ::pcieval::detail::cuda_error(name, pcieval_cuda_code); \
    }                                                                \
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
