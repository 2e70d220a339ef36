// A stand-in for libcuda.so.1 with no GPU behind it, for the tests of how
// pcieval loads the CUDA driver (PCIEVAL_CUDA_LIBRARY): it exports every
// entry point kernels/cuda_driver.cpp looks up, reports the CUDA 12.2 driver
// API of an R535 driver and no device. Built twice: as is, and with
// PCIEVAL_FAKE_OLD_DRIVER, which leaves out cuMemHostRegister_v2 as a driver
// older than CUDA 4.0's API would. cuInit returns PCIEVAL_FAKE_CUINIT's
// number when that is set (100: CUDA_ERROR_NO_DEVICE). Not a simulator: every
// call past the device count fails with CUDA_ERROR_NOT_SUPPORTED.
#include <cstddef>
#include <cstdlib>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kNoDevice = 100;
constexpr int kNotSupported = 801;

// The codes this stand-in returns, named as the real driver names them.
struct ErrorText {
  int code;
  const char* name;
  const char* text;
};
constexpr ErrorText kErrorTexts[] = {
    {kSuccess, "CUDA_SUCCESS", "no error"},
    {kNoDevice, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {kNotSupported, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

const ErrorText* error_text(int code) {
  for (const ErrorText& known : kErrorTexts) {
    if (known.code == code) return &known;
  }
  return nullptr;
}

}  // namespace

extern "C" {

int cuInit(unsigned int /*flags*/) {
  const char* forced = std::getenv("PCIEVAL_FAKE_CUINIT");
  return forced != nullptr ? std::atoi(forced) : kSuccess;
}
int cuDriverGetVersion(int* version) {
  *version = 12020;
  return kSuccess;
}
int cuGetErrorName(int code, const char** name) {
  const ErrorText* known = error_text(code);
  *name = known == nullptr ? nullptr : known->name;
  return known == nullptr ? kInvalidValue : kSuccess;
}
int cuGetErrorString(int code, const char** text) {
  const ErrorText* known = error_text(code);
  *text = known == nullptr ? nullptr : known->text;
  return known == nullptr ? kInvalidValue : kSuccess;
}
int cuDeviceGetCount(int* count) {
  *count = 0;
  return kSuccess;
}

#define PCIEVAL_FAKE_UNSUPPORTED(name) \
  int name() { return kNotSupported; }
PCIEVAL_FAKE_UNSUPPORTED(cuDeviceGet)
PCIEVAL_FAKE_UNSUPPORTED(cuDeviceGetName)
PCIEVAL_FAKE_UNSUPPORTED(cuDeviceGetAttribute)
PCIEVAL_FAKE_UNSUPPORTED(cuDeviceGetByPCIBusId)
PCIEVAL_FAKE_UNSUPPORTED(cuDeviceGetPCIBusId)
PCIEVAL_FAKE_UNSUPPORTED(cuDevicePrimaryCtxRetain)
PCIEVAL_FAKE_UNSUPPORTED(cuCtxSetCurrent)
PCIEVAL_FAKE_UNSUPPORTED(cuStreamCreate)
PCIEVAL_FAKE_UNSUPPORTED(cuStreamDestroy_v2)
PCIEVAL_FAKE_UNSUPPORTED(cuStreamQuery)
PCIEVAL_FAKE_UNSUPPORTED(cuEventCreate)
PCIEVAL_FAKE_UNSUPPORTED(cuEventDestroy_v2)
PCIEVAL_FAKE_UNSUPPORTED(cuEventRecord)
PCIEVAL_FAKE_UNSUPPORTED(cuEventQuery)
PCIEVAL_FAKE_UNSUPPORTED(cuEventElapsedTime)
PCIEVAL_FAKE_UNSUPPORTED(cuStreamWaitEvent)
PCIEVAL_FAKE_UNSUPPORTED(cuMemAlloc_v2)
PCIEVAL_FAKE_UNSUPPORTED(cuMemFree_v2)
PCIEVAL_FAKE_UNSUPPORTED(cuMemHostAlloc)
PCIEVAL_FAKE_UNSUPPORTED(cuMemFreeHost)
#if !defined(PCIEVAL_FAKE_OLD_DRIVER)
PCIEVAL_FAKE_UNSUPPORTED(cuMemHostRegister_v2)
#endif
PCIEVAL_FAKE_UNSUPPORTED(cuMemHostUnregister)
PCIEVAL_FAKE_UNSUPPORTED(cuMemHostGetDevicePointer_v2)
PCIEVAL_FAKE_UNSUPPORTED(cuMemcpyHtoDAsync_v2)
PCIEVAL_FAKE_UNSUPPORTED(cuMemcpyDtoHAsync_v2)
PCIEVAL_FAKE_UNSUPPORTED(cuMemsetD32Async)
PCIEVAL_FAKE_UNSUPPORTED(cuModuleLoadData)
PCIEVAL_FAKE_UNSUPPORTED(cuModuleGetFunction)
PCIEVAL_FAKE_UNSUPPORTED(cuLaunchKernel)
PCIEVAL_FAKE_UNSUPPORTED(cuOccupancyMaxActiveBlocksPerMultiprocessor)
PCIEVAL_FAKE_UNSUPPORTED(cuDeviceCanAccessPeer)
PCIEVAL_FAKE_UNSUPPORTED(cuCtxEnablePeerAccess)
PCIEVAL_FAKE_UNSUPPORTED(cuCtxDisablePeerAccess)
PCIEVAL_FAKE_UNSUPPORTED(cuMemcpyPeerAsync)
#undef PCIEVAL_FAKE_UNSUPPORTED

}  // extern "C"
