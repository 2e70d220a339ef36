#include "sim/cuda_results.hpp"

#include <map>

namespace pcieval::sim {

using namespace curesult;  // NOLINT: the table reads as cuda.h does

const ErrorText* error_text(int code) {
  static const std::map<int, ErrorText> texts = {
      {kSuccess, {"CUDA_SUCCESS", "no error"}},
      {kInvalidValue, {"CUDA_ERROR_INVALID_VALUE", "invalid argument"}},
      {kOutOfMemory, {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"}},
      {kNotInitialized, {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"}},
      {kNoDevice, {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"}},
      {kInvalidDevice, {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"}},
      {kInvalidImage, {"CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"}},
      {kInvalidContext, {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"}},
      {kUnsupportedPtxVersion,
       {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."}},
      {kInvalidHandle, {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"}},
      {kNotFound, {"CUDA_ERROR_NOT_FOUND", "named symbol not found"}},
      {kNotReady, {"CUDA_ERROR_NOT_READY", "device not ready"}},
      {kIllegalAddress, {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"}},
      {kPeerAccessUnsupported,
       {"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices"}},
      {kPeerAccessAlreadyEnabled, {"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"}},
      {kPeerAccessNotEnabled, {"CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled"}},
      {kHostMemoryAlreadyRegistered,
       {"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped"}},
      {kHostMemoryNotRegistered,
       {"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"}},
      {kNotSupported, {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"}}};
  const auto found = texts.find(code);
  return found == texts.end() ? nullptr : &found->second;
}

}  // namespace pcieval::sim
