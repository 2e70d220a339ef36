#include "kernels/blocking_call.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace pcieval {

std::chrono::nanoseconds detail::blocking_call_timeout(double timeout_s) {
  const double wait_s = std::isfinite(timeout_s) && timeout_s > 0 ? timeout_s : 0.0;
  // Capped at a year: a nonsense timeout must not overflow the clock.
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(std::min(wait_s, 3.2e7)));
}

std::shared_ptr<std::atomic<int>> detail::stuck_blocking_call_count() {
  static const auto count = std::make_shared<std::atomic<int>>(0);
  return count;
}

DeadlineOutcome run_blocking_call(std::function<void()> body, double timeout_s) {
  return call_with_deadline(
             [body = std::move(body)] {
               body();
               return true;
             },
             timeout_s)
      .outcome;
}

int stuck_blocking_calls() { return detail::stuck_blocking_call_count()->load(); }

std::string host_work_timeout_message(const std::string& what, const std::string& within, const std::string& where,
                                      const std::string& host_name) {
  return what + " did not complete within " + within + where + ": pinning host memory is work of the host " +
         host_name +
         " (its kernel pins and maps every page, through the IOMMU where there is one; slow behind a guest's "
         "vIOMMU), not of the GPU, so the GPU cannot be judged";
}

std::string this_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "this host";
  return name;
}

}  // namespace pcieval
