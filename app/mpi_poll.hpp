// Waiting on MPI requests without spinning a core: Open MPI's blocking calls
// poll at 100 % CPU, and a node's probes need its cores. Needs mpi.h: only
// pcieval-mpi and its tests include it.
#pragma once

#include <mpi.h>

#include <chrono>
#include <optional>
#include <thread>

namespace pcieval::app {

using MpiClock = std::chrono::steady_clock;

// How often a waiting rank looks at its request.
inline constexpr auto kMpiPollInterval = std::chrono::milliseconds(20);

// Waits for `request` with sleeps of `interval` between tests; false when
// `deadline` passed first (the request is still pending).
inline bool wait_for(MPI_Request& request, std::optional<MpiClock::time_point> deadline = std::nullopt,
                     std::chrono::microseconds interval = kMpiPollInterval) {
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (deadline && MpiClock::now() >= *deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

inline MpiClock::time_point deadline_after(double seconds) {
  return MpiClock::now() +
         std::chrono::duration_cast<MpiClock::duration>(std::chrono::duration<double>(seconds < 0 ? 0 : seconds));
}

}  // namespace pcieval::app
