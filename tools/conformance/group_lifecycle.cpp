// lifecycle: fork after load, process exit with live resources, a plugin
// with no devices.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

// A small alloc + copy round trip on raw API calls, for forked children
// (which must not throw into the runner's machinery). "" on success.
std::string plain_roundtrip(const flagos_plugin_api_t* api) {
  unsigned char in[4099], out[4099];
  fill_pattern(in, sizeof in, 77);
  void* d = nullptr;
  flagos_stream_t s = nullptr;
  flagos_status_t r = api->mem_alloc(0, sizeof in, &d);
  if (r != FLAGOS_SUCCESS) return "mem_alloc: " + st(r) + " " + api->last_error_message();
  if ((r = api->stream_create(0, 0, &s)) != FLAGOS_SUCCESS) return "stream_create: " + st(r);
  if ((r = api->memcpy_async(d, in, sizeof in, FLAGOS_MEMCPY_HOST_TO_DEVICE, s)) != FLAGOS_SUCCESS)
    return "memcpy_async: " + st(r);
  if ((r = api->stream_synchronize(s)) != FLAGOS_SUCCESS) return "stream_synchronize: " + st(r);
  if ((r = api->memcpy_sync(out, d, sizeof out, FLAGOS_MEMCPY_DEVICE_TO_HOST)) != FLAGOS_SUCCESS)
    return "memcpy_sync: " + st(r);
  if (std::memcmp(in, out, sizeof in) != 0) return "data differs after the round trip";
  if ((r = api->stream_destroy(s)) != FLAGOS_SUCCESS) return "stream_destroy: " + st(r);
  if ((r = api->mem_free(0, d)) != FLAGOS_SUCCESS) return "mem_free: " + st(r);
  return "";
}

// waitpid with a deadline; -1 (after SIGKILL) when the child did not end.
int wait_child(pid_t pid, double timeout_ms) {
  int status = 0;
  for (double t0 = now_ms(); now_ms() - t0 < timeout_ms; sleep_ms(5))
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// Forks; the child runs `body` and leaves its error text in a pipe. The
// child's end stays open until the process is gone, and the parent waits on
// the process itself, so a hang at exit is seen as a hang.
int run_forked(const std::function<std::string()>& body, bool exit_normally, std::string* report) {
  int fds[2];
  if (pipe(fds) != 0) return -2;
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string why = body().substr(0, 512);  // fits the pipe: never blocks
    if (!why.empty() && write(fds[1], why.data(), why.size()) < 0) _exit(4);
    if (exit_normally) std::exit(why.empty() ? 0 : 1);  // atexit handlers, static destructors
    _exit(why.empty() ? 0 : 1);
  }
  close(fds[1]);
  int status = pid > 0 ? wait_child(pid, 60000) : -2;
  char buf[512];
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  ssize_t n = read(fds[0], buf, sizeof buf);
  if (n > 0) report->assign(buf, static_cast<size_t>(n));
  close(fds[0]);
  return status;
}

std::string describe(int status) {
  if (status == -1) return "timed out after 60 s";
  if (status == -2) return "fork or pipe failed";
  if (WIFSIGNALED(status)) return strf("killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return strf("exit status %d", WEXITSTATUS(status));
}

void need_pristine(Ctx& c) {
  c.need_devices(1);
  if (!c.pristine)
    c.skip("a device was already used in this process (--no-fork); run with forking or --group lifecycle");
}

// Ending a process that holds streams, pending work and memory must not hang
// or crash in the plugin's teardown (the core never calls a shutdown).
void clean_exit(Ctx& c) {
  need_pristine(c);
  const flagos_plugin_api_t* api = c.api;
  const flagos_testing_ext_t* testing = c.testing;
  std::string report;
  int status = run_forked(
      [api, testing] {
        std::string why = plain_roundtrip(api);
        void* leak = nullptr;
        flagos_stream_t s = nullptr;
        if (why.empty() && api->mem_alloc(0, 1 << 20, &leak) == FLAGOS_SUCCESS &&
            api->stream_create(0, 0, &s) == FLAGOS_SUCCESS) {
          if (testing) testing->stream_enqueue_delay(s, 20000);
          api->memset_async(leak, 1, 1 << 20, s);
        }
        return why;
      },
      true, &report);
  c.require(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "child calling exit() with live resources: " + describe(status) + (report.empty() ? "" : ": " + report));
  c.note("exit(0) with a live stream, pending work and unfreed memory");
}

// Loading (and the entry, device_count, properties) before fork is allowed;
// the child then initialises the device itself.
void fork_before_use(Ctx& c) {
  need_pristine(c);
  const flagos_plugin_api_t* api = c.api;
  std::string report;
  int status = run_forked([api] { return plain_roundtrip(api); }, false, &report);
  c.expect(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "forked child: " + describe(status) + (report.empty() ? "" : ": " + report));
  c.pristine = false;
  std::string parent = plain_roundtrip(api);
  c.expect(parent.empty(), "the parent after fork: " + parent);
  c.note("child and parent each ran alloc + copy round trips");
}

void devices_zero(Ctx& c) {
  const std::string* v = c.plugin.option("devices");
  if (!v || *v != "0") c.skip("pass --option devices=0 to check a plugin that finds no device");
  int32_t n = -1;
  c.ok(c.api->device_count(&n), "device_count");
  c.require(n == 0, strf("device_count is %d with devices=0", n));
  flagos_device_t cur = -1;
  c.ok(c.api->get_device(&cur), "get_device");
  c.expect(cur == 0, strf("get_device returned %d", cur));
  void* p = nullptr;
  c.expect_status(c.api->mem_alloc(0, 16, &p), FLAGOS_ERROR_INVALID_DEVICE, "mem_alloc(0) with no device");
  c.note("device_count 0 with SUCCESS");
}

}  // namespace

Group lifecycle_group() {
  Group g("lifecycle", "exit with live resources, fork after load, no devices");
  g.add("exit-with-live-resources", clean_exit)
      .add("fork-before-device-use", fork_before_use)
      .add("no-devices", devices_zero);
  return g;
}

}  // namespace conformance
