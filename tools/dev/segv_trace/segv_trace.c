/*
 * libsegv_trace.so — the native stack of a crash, where there is no gdb
 * (test/gpu/run.sh preloads it into its test suites): LD_PRELOAD it and a
 * SIGSEGV, SIGBUS or SIGFPE prints "[segv_trace]" and the frames (glibc
 * backtrace: "lib.so(+0xOFFSET)"; resolve with `addr2line -f -C -e lib.so
 * 0xOFFSET` against the unstripped build under build/<tag>/out/lib, or with
 * symbolize.py) to stderr as it was at load, then the default action runs
 * (the process still dies with it).
 *
 *   LD_PRELOAD=build/<tag>/out/lib/libsegv_trace.so python -m pytest ...
 *
 * Python's faulthandler (on under pytest) runs first, prints the Python
 * frames, restores this handler and re-raises. Not async-signal-safe in
 * theory (backtrace() may allocate on its first call, so it is called once at
 * load); good enough for a process that is about to die.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* stderr as it was at load: pytest's fd-level capture points fd 2 at a
 * temporary file during a test, and that file dies with the process. */
static int report_fd = STDERR_FILENO;

static void on_fault(int sig) {
  static const char head[] = "[segv_trace] native stack (most recent call first):\n";
  void* frames[96];
  int n = backtrace(frames, 96);
  (void)!write(report_fd, head, sizeof head - 1);
  backtrace_symbols_fd(frames, n, report_fd);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  void* warm[1];
  backtrace(warm, 1); /* loads libgcc's unwinder now, not inside the handler */
  int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd >= 0) report_fd = fd;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fault;
  sa.sa_flags = SA_NODEFER;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigaction(SIGFPE, &sa, NULL);
}
