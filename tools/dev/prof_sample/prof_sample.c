/*
 * libprof_sample.so — a sampling profiler for one thread, where there is no
 * perf (e.g. a GPU host without network): where a loop of operator calls spends its host
 * time, function by function, in torch and in torch_fl alike.
 *
 * Loaded with ctypes by the thread to profile (tools/dev/prof_sample/sample.py):
 *
 *   prof_sample_start(interval_us, max_samples)  0, or -1 (see errno)
 *   prof_sample_stop(path)                       samples written, or -1
 *
 * Between the two, a CLOCK_MONOTONIC timer signals the calling thread every
 * interval_us (SIGPROF, delivered to that thread only) and the handler keeps
 * its native stack (glibc backtrace: return addresses, innermost first).
 * Samples past max_samples are dropped and counted. The stop writes
 * "# dropped N", each sample as "S addr addr ..." (hex) and the process's
 * /proc/self/maps ("M line"), for sample.py to name the addresses.
 *
 * One profile at a time per process; start and stop on the same thread.
 * backtrace() is not async-signal-safe in theory: it is warmed up at start
 * (libgcc's unwinder loaded), which is what makes it usable here in practice.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kDepth = 64 };

struct sample {
  int depth;
  void* frames[kDepth];
};

static struct sample* samples;
static size_t capacity;
static atomic_size_t taken;
static atomic_size_t dropped;
static timer_t timer;
static int running;

static void on_tick(int sig) {
  (void)sig;
  int saved = errno;
  size_t i = atomic_fetch_add(&taken, 1);
  if (i < capacity) {
    samples[i].depth = backtrace(samples[i].frames, kDepth);
  } else {
    atomic_fetch_add(&dropped, 1);
  }
  errno = saved;
}

int prof_sample_start(long interval_us, long max_samples) {
  if (running || interval_us <= 0 || max_samples <= 0) {
    errno = EINVAL;
    return -1;
  }
  samples = calloc((size_t)max_samples, sizeof *samples);
  if (!samples) return -1;
  capacity = (size_t)max_samples;
  atomic_store(&taken, 0);
  atomic_store(&dropped, 0);
  void* warm[1];
  backtrace(warm, 1);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_tick;
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGPROF, &sa, NULL) != 0) return -1;

  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGPROF;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) return -1;
  struct itimerspec spec;
  spec.it_interval.tv_sec = interval_us / 1000000;
  spec.it_interval.tv_nsec = (interval_us % 1000000) * 1000;
  spec.it_value = spec.it_interval;
  if (timer_settime(timer, 0, &spec, NULL) != 0) {
    timer_delete(timer);
    return -1;
  }
  running = 1;
  return 0;
}

long prof_sample_stop(const char* path) {
  if (!running) {
    errno = EINVAL;
    return -1;
  }
  timer_delete(timer);
  signal(SIGPROF, SIG_IGN);  // a tick already queued must not kill the process
  running = 0;
  size_t n = atomic_load(&taken);
  if (n > capacity) n = capacity;

  FILE* out = fopen(path, "w");
  if (!out) return -1;
  fprintf(out, "# dropped %zu\n", atomic_load(&dropped));
  for (size_t i = 0; i < n; ++i) {
    fputc('S', out);
    for (int d = 0; d < samples[i].depth; ++d) fprintf(out, " %lx", (unsigned long)samples[i].frames[d]);
    fputc('\n', out);
  }
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[4096];
  while (maps && fgets(line, sizeof line, maps)) fprintf(out, "M %s", line);
  if (maps) fclose(maps);
  fclose(out);
  free(samples);
  samples = NULL;
  return (long)n;
}
