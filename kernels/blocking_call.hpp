// CUDA calls that block the host thread by nature, given a deadline. Most
// waits on GPU work poll (deadline_wait.hpp), but some calls cannot be
// polled: cudaHostRegister pins every page of a range inside the driver, and
// a copy from or to pageable memory stages through the driver's pinned
// buffers before it returns. On a sick driver or a GPU that fell off the bus
// they may never return. Such a call runs on a thread of its own, and the
// caller waits for it until a deadline.
//
// A call that misses its deadline cannot be cancelled (a thread stuck inside
// the driver cannot be stopped safely): its thread is detached and left to
// finish, or not, on its own. So everything the call touches must outlive
// the caller's interest in it:
// - what the call writes back lives in the call's closure and a shared slot,
//   never in the caller's frame;
// - memory the call reads or writes (a host range being pinned, the source
//   and destination of a copy) is never freed or reused once the call was
//   abandoned: its device is retired (retired_devices.hpp), and the owners of
//   such memory keep it until the process exits.
//
// A thread per call, not a long-lived worker: these calls come once per
// setup or per untimed trial step, where starting a thread (tens of
// microseconds) is nothing, and a stuck call then never holds up a later one.
// The thread and its deadline are support/deadline_worker.hpp's, with a
// worker of its own for each call.
//
// Plain C++ (no CUDA header), tested with calls that block on purpose.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "support/deadline_worker.hpp"

namespace pcieval {

namespace detail {
// `timeout_s` as the worker's wait: a negative, infinite or NaN timeout counts
// as zero (as in deadline_wait.hpp; the call is still queued), and a huge one
// is capped at a year so that it cannot overflow the clock.
[[nodiscard]] std::chrono::nanoseconds blocking_call_timeout(double timeout_s);
// Process-wide: the calls that missed their deadline and have not returned.
[[nodiscard]] std::shared_ptr<std::atomic<int>> stuck_blocking_call_count();
}  // namespace detail

// Runs fn() on a new thread and waits for it for at most `timeout_s` seconds.
// The result is fn()'s value when it returned in time (DeadlineCall's
// outcome kReturned); kTimedOut: the call had not returned at the deadline
// (its thread is left behind, or it never started); kRefused: no thread could
// be started, the call did not run.
// REQUIRES: fn owns everything it uses (captures by value), is copyable (it
// travels in a std::function) and does not throw; the result type is movable.
template <class Fn>
[[nodiscard]] auto call_with_deadline(Fn fn, double timeout_s) -> DeadlineCall<std::invoke_result_t<Fn&>> {
  DeadlineWorker worker(detail::stuck_blocking_call_count());
  return worker.call(std::move(fn), detail::blocking_call_timeout(timeout_s));
}

// call_with_deadline of a call without a value.
// REQUIRES: as call_with_deadline.
[[nodiscard]] DeadlineOutcome run_blocking_call(std::function<void()> body, double timeout_s);

// The message of host work done for a GPU that missed its deadline: `what`
// ("cudaHostRegister of 1073741824 bytes") did not complete `within` ("30 s")
// on `where` (" on 0000:17:00.0", may be empty). It names the host, since
// pinning memory is the host kernel's work (walking and mapping every page,
// through the IOMMU where there is one), not the GPU's: a slow host, not a
// hung GPU (retired_devices.hpp, RetireCause::kHostWork).
[[nodiscard]] std::string host_work_timeout_message(const std::string& what, const std::string& within,
                                                    const std::string& where, const std::string& host_name);

// This machine's host name (gethostname), or "this host" when it has none.
[[nodiscard]] std::string this_host_name();

// Calls that missed their deadline and have not returned yet, process-wide:
// each holds a thread (and whatever the driver holds for it).
[[nodiscard]] int stuck_blocking_calls();

}  // namespace pcieval
