// CUDA devices this process stopped using. A device whose work did not
// complete by its deadline may hold a wedged context: any later call on it
// (a synchronize, a free, which synchronizes implicitly) could block for
// ever. So a timed-out wait retires the device, and from then on every entry
// point of kernels/ refuses it with the reason, destructors release nothing
// on it (its handles and memory are leaked on purpose), and bench/ skips it.
//
// Process-wide on purpose: a CUDA context is per process, and so is the
// state of being wedged. Thread-safe. Plain C++.
#pragma once

#include <optional>
#include <string>

namespace pcieval {

// What missed its deadline. Both retire the device (a call may still be
// running inside the driver on its behalf, and what it touches must not be
// freed or reused), but only work of the GPU says the GPU hung:
// - kDeviceWork: a copy, kernel or synchronize on the GPU (a wedged GPU,
//   or one fallen off the bus): the GPU's verdict is gpu_unresponsive.
// - kHostWork: work the host does for the GPU, such as cudaHostRegister,
//   which pins and maps every page of a range in the host's kernel (1 GiB of
//   4 KiB pages behind a guest's vIOMMU can take longer than any copy): the
//   host is slow, not the GPU, so its verdict is inconclusive, naming the host.
// - kContextError: a call on the GPU returned one of CUDA's sticky errors
//   (an illegal address, a launch failure, an uncorrectable ECC error): the
//   context cannot be used again, but nothing is stuck and the cause may be
//   pcieval's own, so its verdict is inconclusive with the error.
enum class RetireCause { kDeviceWork, kHostWork, kContextError };

// Marks CUDA device `ordinal` unusable for the rest of the process, with the
// reason (the timeout's message) and its cause. The first reason given is
// kept, with its cause.
void retire_cuda_device(int ordinal, std::string reason, RetireCause cause = RetireCause::kDeviceWork);

// nullopt while `ordinal` is usable; otherwise "CUDA device 0 is not used
// again in this run: <reason>".
[[nodiscard]] std::optional<std::string> cuda_device_retired_reason(int ordinal);

// Whether `ordinal` was retired (cheaper than the reason: no string).
[[nodiscard]] bool cuda_device_retired(int ordinal);

// Whether `ordinal` was retired because work of the GPU itself missed its
// deadline (RetireCause::kDeviceWork): the GPU hung. False for a device
// retired for slow host work, and for one never retired.
[[nodiscard]] bool cuda_device_hung(int ordinal);

// Forgets every retirement. For tests only: a real run never takes a device
// back.
void forget_retired_cuda_devices_for_testing();

}  // namespace pcieval
