// Which CUDA devices this process can use, and how they map to the PCI
// addresses the rest of pcieval speaks, through the CUDA driver API loaded
// at run time (cuda_driver.hpp). Plain C++, built on every machine.
#pragma once

#include <string>
#include <string_view>

#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval {

// The reason every GPU probe fails in a build without its GPU kernels.
inline constexpr std::string_view kBuiltWithoutCudaMessage =
    "pcieval was built without CUDA (nvcc not found at build time, so it has no GPU kernels)";

// Whether this binary holds its GPU kernels (a PTX module nvcc made at build
// time). False: cuda_device_count(), and so every GPU probe, fails with
// kBuiltWithoutCudaMessage.
[[nodiscard]] bool built_with_cuda();

// The number of CUDA devices this process may use (CUDA_VISIBLE_DEVICES
// applies). Errors: none usable, with CUDA's own reason ("no NVIDIA driver:
// libcuda.so.1 ...", "cuInit: CUDA_ERROR_NO_DEVICE (...)"); zero
// devices is an error too, so ok() means at least one.
[[nodiscard]] Result<int> cuda_device_count();

// The CUDA ordinal of the GPU at `address` (cuDeviceGetByPCIBusId). Error
// when CUDA does not see it: hidden by CUDA_VISIBLE_DEVICES, not a CUDA
// device, or no driver.
[[nodiscard]] Result<int> cuda_ordinal_of(const PciAddress& address);

// The PCI address of CUDA device `ordinal` (cuDeviceGetPCIBusId).
[[nodiscard]] Result<PciAddress> cuda_pci_address(int ordinal);

// The marketing name of CUDA device `ordinal` ("NVIDIA H100 80GB HBM3").
[[nodiscard]] Result<std::string> cuda_device_name(int ordinal);

// Loads every kernel of kernels/ into device `ordinal`'s context now
// (detail/module.hpp). Why: CUDA 12 loads kernels lazily, and loading may
// wait for the device to go idle; a first launch behind a latch kernel that
// spins until the host releases it then hangs until the latch times out
// (nvbandwidth preloads for the same reason). Every copy stream and every
// all-reduce rank calls it when it is created; call it yourself before
// holding a stream of a device that has neither.
[[nodiscard]] Status preload_kernels(int ordinal);

}  // namespace pcieval
