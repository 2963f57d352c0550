#include "probe.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "vendor.h"

extern char** environ;

namespace flagos_cudalike {
namespace {

// Driver initialisation of many GPUs without persistence mode takes seconds;
// beyond this the driver is considered hung.
constexpr int kTimeoutMs = 120 * 1000;
constexpr size_t kMaxOutput = 1 << 20;

std::string probe_name() { return std::string("flagos-") + vendor().name + "-probe"; }

// <directory of this library>/flagos-<vendor>-probe, or "" when unknown.
std::string probe_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&run_probe), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::string lib = info.dli_fname;
  size_t slash = lib.rfind('/');
  return slash == std::string::npos ? "./" + probe_name() : lib.substr(0, slash + 1) + probe_name();
}

// Starts the probe with stdout on a pipe (stdin and stderr on /dev/null).
// posix_spawn runs no fork handlers and copies no address space.
bool spawn(const std::string& path, const std::string& runtime_path, pid_t* pid, int* read_fd,
           std::string* why) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *why = std::string("pipe2: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>(runtime_path.c_str()), nullptr};
  int rc = posix_spawn(pid, path.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *why = path + ": " + std::strerror(rc);
    return false;
  }
  *read_fd = fds[0];
  return true;
}

// Reads until EOF; false on timeout.
bool read_all(int fd, std::string* text) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;  // timed out
    if (ready < 0) return true;    // poll failed: stop here, the parse decides
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (text->size() < kMaxOutput) text->append(buf, static_cast<size_t>(n));
  }
}

// The child's wait status, or -1 when it was reaped elsewhere (SIGCHLD ignored).
int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

}  // namespace

ProbeOutcome run_probe(const std::string& runtime_path, DeviceTable* out, std::string* why) {
  std::string path = probe_path();
  if (path.empty() || access(path.c_str(), X_OK) != 0) {
    *why = "no executable " + (path.empty() ? probe_name() : path);
    return ProbeOutcome::kUnavailable;
  }
  pid_t pid = 0;
  int fd = -1;
  if (!spawn(path, runtime_path, &pid, &fd, why)) return ProbeOutcome::kUnavailable;
  std::string text;
  bool finished = read_all(fd, &text);
  close(fd);
  if (!finished) {
    kill(pid, SIGKILL);
    reap(pid);
    *why = path + " did not answer within " + std::to_string(kTimeoutMs / 1000) + " s";
    return ProbeOutcome::kBroken;
  }
  int status = reap(pid);
  if (status != -1 && WIFSIGNALED(status)) {
    *why = path + " was killed by signal " + std::to_string(WTERMSIG(status));
    return ProbeOutcome::kBroken;
  }
  if (status != -1 && WEXITSTATUS(status) != 0) {
        *why = path + " exited with status " + std::to_string(WEXITSTATUS(status));
    return ProbeOutcome::kUnavailable;
  }
  if (!parse(text, out)) {
    *why = path + " gave an answer that does not parse";
    return ProbeOutcome::kUnavailable;
  }
  return ProbeOutcome::kAnswered;
}

}  // namespace flagos_cudalike
