// CUresult values the simulated driver returns, and their names and texts
// as the real driver says them (cuGetErrorName, cuGetErrorString). Written
// from cuda.h's C ABI, not from pcieval's own declarations, so the two are
// not made to agree by sharing.
#pragma once

namespace pcieval::sim {

namespace curesult {
constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kOutOfMemory = 2;
constexpr int kNotInitialized = 3;
constexpr int kNoDevice = 100;
constexpr int kInvalidDevice = 101;
constexpr int kInvalidImage = 200;
constexpr int kInvalidContext = 201;
constexpr int kPeerAccessUnsupported = 217;
constexpr int kUnsupportedPtxVersion = 222;
constexpr int kInvalidHandle = 400;
constexpr int kNotFound = 500;
constexpr int kNotReady = 600;
constexpr int kIllegalAddress = 700;
constexpr int kHostMemoryAlreadyRegistered = 712;
constexpr int kHostMemoryNotRegistered = 713;
constexpr int kPeerAccessAlreadyEnabled = 704;
constexpr int kPeerAccessNotEnabled = 705;
constexpr int kNotSupported = 801;
}  // namespace curesult

struct ErrorText {
  const char* name;  // CUDA_ERROR_...
  const char* text;
};

// Null for a code the simulator never returns.
const ErrorText* error_text(int code);

}  // namespace pcieval::sim
