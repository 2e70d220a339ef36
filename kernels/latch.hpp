// The latch: a one-thread spin kernel queued first on every stream of a
// trial, so that every copy of the trial is queued before any of them starts
// (launch and queueing latency are then outside the timed region, and the
// streams of several GPUs or directions start together when the host opens
// it).
//
// How it breaks, and what it does then: if the host does not release it in
// time (it was held up queueing, or a CUDA call synchronized the device while
// the latch held it, which would otherwise hang), each spin kernel gives up
// after timeout_s and sets a timed-out flag that the host reads back. The
// copies behind it then start early and their timing includes queueing, so
// a trial whose latch timed out is never reported (run_latched_trial makes it
// an error). The timeout is measured on the GPU's %globaltimer, a nanosecond
// clock whose update granularity is at most about a microsecond.
#pragma once

#include "kernels/resources.hpp"
#include "model/result.hpp"

namespace pcieval {

class Latch {
 public:
  // Allocates the latch's two flags (release, timed out) in mapped, portable
  // pinned host memory in device `ordinal`'s context; streams of any device
  // can be held by it. REQUIRES: timeout_s > 0.
  [[nodiscard]] static Result<Latch> create(int ordinal, double timeout_s);

  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;
  Latch(Latch&& other) noexcept;
  Latch& operator=(Latch&& other) noexcept;
  ~Latch();

  // Closes the latch and clears the timed-out flag. REQUIRES: no spin kernel
  // of an earlier arming is still running (its streams were synchronized).
  void arm();
  // Queues the spin kernel on `stream`: nothing queued on the stream after it
  // runs until release() or the timeout.
  [[nodiscard]] Status hold(const Stream& stream);
  // Opens the latch: every held stream proceeds.
  void release();
  // Whether a spin kernel of this arming gave up before release(). Meaningful
  // once the held streams were synchronized.
  [[nodiscard]] bool timed_out() const;
  [[nodiscard]] double timeout_s() const { return timeout_s_; }

 private:
  Latch(int ordinal, int* flags, double timeout_s) : ordinal_(ordinal), flags_(flags), timeout_s_(timeout_s) {}

  int ordinal_ = -1;      // the device whose context allocated the flags
  int* flags_ = nullptr;  // [0]: release (host writes), [1]: timed out (GPU writes)
  double timeout_s_ = 0;
};

}  // namespace pcieval
