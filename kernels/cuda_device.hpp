// Which CUDA devices this process can use, and how they map to the PCI
// addresses the rest of pcieval speaks. Plain C++: bench/ and app/ include it
// with the host compiler, and a build without CUDA implements it with errors.
#pragma once

#include <string>
#include <string_view>

#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval {

// The reason every call of kernels/ fails in a build without CUDA.
inline constexpr std::string_view kBuiltWithoutCudaMessage =
    "pcieval was built without CUDA (nvcc not found at build time)";

// Whether this binary contains the CUDA code. False: every call of kernels/
// returns an error carrying kBuiltWithoutCudaMessage.
[[nodiscard]] bool built_with_cuda();

// The number of CUDA devices this process may use (CUDA_VISIBLE_DEVICES
// applies). Errors: none usable, with CUDA's own reason ("no NVIDIA driver:
// libcuda.so.1 ...", "cudaGetDeviceCount: cudaErrorNoDevice (...)"); zero
// devices is an error too, so ok() means at least one.
[[nodiscard]] Result<int> cuda_device_count();

// The CUDA ordinal of the GPU at `address` (cudaDeviceGetByPCIBusId). Error
// when CUDA does not see it: hidden by CUDA_VISIBLE_DEVICES, not a CUDA
// device, or no driver.
[[nodiscard]] Result<int> cuda_ordinal_of(const PciAddress& address);

// The PCI address of CUDA device `ordinal` (cudaDeviceGetPCIBusId).
[[nodiscard]] Result<PciAddress> cuda_pci_address(int ordinal);

// The marketing name of CUDA device `ordinal` ("NVIDIA H100 80GB HBM3").
[[nodiscard]] Result<std::string> cuda_device_name(int ordinal);

// Loads every kernel of kernels/ into device `ordinal`'s context now.
// Why: CUDA 12 loads modules lazily, at a kernel's first launch, and loading
// may wait for the device to go idle; a first launch behind a latch kernel
// that spins until the host releases it then hangs until the latch times
// out (nvbandwidth preloads for the same reason). Every copy stream and every
// all-reduce rank calls it when it is created; call it yourself before
// holding a stream of a device that has neither.
[[nodiscard]] Status preload_kernels(int ordinal);

}  // namespace pcieval
