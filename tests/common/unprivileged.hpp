// Runs a piece of a test without root's power to read and write anything, so
// permission failures are tested for real on CI machines that run as root.
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace pcieval::testing {

// Runs `body` as the unprivileged user nobody (65534) in a forked child when
// the test runs as root, or in-process otherwise, and returns what `body`
// returned. Only the returned text crosses back: gtest assertions belong in the
// caller. Returns "child failed: ..." if the child could not run or drop root.
inline std::string run_unprivileged(const std::function<std::string()>& body) {
  if (::geteuid() != 0) return body();
  int fds[2];
  if (::pipe(fds) != 0) return "child failed: pipe";
  const pid_t pid = ::fork();
  if (pid < 0) return "child failed: fork";
  if (pid == 0) {
    ::close(fds[0]);
    constexpr uid_t kNobody = 65534;
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
    const std::string result = body();
    const bool sent = ::write(fds[1], result.data(), result.size()) == static_cast<ssize_t>(result.size());
    ::_exit(sent ? 0 : 3);
  }
  ::close(fds[1]);
  std::string result;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) result.append(buffer, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed: status " + std::to_string(status);
  return result;
}

}  // namespace pcieval::testing
