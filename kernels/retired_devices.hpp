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

// Marks CUDA device `ordinal` unusable for the rest of the process, with the
// reason (the timeout's message). The first reason given is kept.
void retire_cuda_device(int ordinal, std::string reason);

// nullopt while `ordinal` is usable; otherwise "CUDA device 0 is not used
// again in this run: <reason>".
[[nodiscard]] std::optional<std::string> cuda_device_retired_reason(int ordinal);

// Whether `ordinal` was retired (cheaper than the reason: no string).
[[nodiscard]] bool cuda_device_retired(int ordinal);

// Forgets every retirement. For tests only: a real run never takes a device
// back.
void forget_retired_cuda_devices_for_testing();

}  // namespace pcieval
