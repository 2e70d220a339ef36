// The kernels of kernels/device/kernels.cu: one PTX module, embedded in the
// binary at build time (kernels/CMakeLists.txt), loaded into each device's
// primary context with cuModuleLoadData (the driver compiles it for the
// device it runs on) and launched by name with cuLaunchKernel. Never
// included by a public header.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "kernels/cuda_driver.hpp"
#include "model/result.hpp"

namespace pcieval::detail {

// The embedded PTX text, empty in a build without nvcc (generated file).
[[nodiscard]] std::string_view kernels_ptx();

// The PTX ISA version the embedded module declares: what R535 (CUDA 12.2),
// the oldest driver pcieval supports, compiles. The build lowers nvcc's
// `.version` line to it and has ptxas check the module against it.
inline constexpr std::string_view kKernelsPtxVersion = "8.2";

enum class Kernel : std::size_t {
  kFillPattern,
  kPoison,
  kCountMismatches,
  kSmCopy,
  kLatch,
  kFillRank,
  kCountSumMismatches,
};
inline constexpr std::size_t kKernelCount = 7;

// The entry names in the module, indexed by Kernel.
inline constexpr std::array<std::string_view, kKernelCount> kKernelNames = {
    "pcieval_fill_pattern", "pcieval_poison",    "pcieval_count_mismatches",    "pcieval_sm_copy",
    "pcieval_latch",        "pcieval_fill_rank", "pcieval_count_sum_mismatches"};

[[nodiscard]] constexpr std::string_view kernel_name(Kernel kernel) {
  return kKernelNames[static_cast<std::size_t>(kernel)];
}

// Threads per block of every grid-stride kernel: whole warps, as the
// mismatch count's warp reduction requires.
inline constexpr unsigned int kThreadsPerBlock = 256;

// Loads the module into device `ordinal`'s context and looks every kernel
// up, once per device per process; later calls return at once. Loading may
// wait for the device to go idle, so a first launch queued behind a latch
// kernel would hang until the latch times out: every copy stream and
// all-reduce rank loads before it holds a stream (preload_kernels). Errors:
// a build without the module, a module the driver cannot compile (its code
// names why: CUDA_ERROR_UNSUPPORTED_PTX_VERSION on a driver too old).
// REQUIRES: use_device(ordinal) succeeded on this thread.
[[nodiscard]] Status load_kernels(int ordinal);

// Kernel `kernel` of device `ordinal`, loading the module first if needed.
[[nodiscard]] Result<CuFunction> kernel_function(int ordinal, Kernel kernel);

// Launches `kernel` on `stream` of device `ordinal` with `grid` blocks of
// `block` threads; `arguments` point at the kernel's parameters in order.
// The launch's own error is returned (cuLaunchKernel reports it, not an
// earlier call's, unlike the runtime's cudaGetLastError).
// REQUIRES: use_device(ordinal) succeeded on this thread.
[[nodiscard]] Status launch(int ordinal, Kernel kernel, unsigned int grid, unsigned int block, CuStream stream,
                            void** arguments);

// Blocks for a grid-stride kernel that must keep every SM busy: as many
// kThreadsPerBlock blocks as the device keeps resident at once, as the
// driver's occupancy calculator gives for `kernel` on this device (not an
// assumed figure: registers and the device's limits decide it). Reading host
// memory over PCIe takes about a microsecond per access, so saturating a
// Gen5 x16 link needs tens of thousands of 16-byte loads in flight.
[[nodiscard]] Result<int> saturating_blocks(int ordinal, Kernel kernel);

// No more blocks than `elements` needs at kThreadsPerBlock threads each, at
// most `blocks`, at least one.
[[nodiscard]] unsigned int grid_for(int blocks, std::size_t elements);

}  // namespace pcieval::detail
