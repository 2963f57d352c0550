// helpers.h — small tools shared by the groups: formatting, RAII owners of
// plugin objects, data patterns, threads and clocks.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "flagos/flagos.h"
#include "framework.h"

namespace conformance {

std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string st(flagos_status_t s);  // e.g. "INVALID_DEVICE (101)"

// The optional extension of `type` the plugin chains, at least `min_size`
// bytes; the check is skipped when the plugin does not provide it.
template <class Ext>
const Ext& need_extension(Ctx& c, int32_t type, const char* name, size_t min_size) {
  auto* e = reinterpret_cast<const Ext*>(find_extension(c.api, type));
  if (!e) c.skip(strf("the plugin does not provide the %s extension", name));
  c.require(e->base.struct_size >= min_size,
            strf("%s extension struct_size %zu < %zu", name, e->base.struct_size, min_size));
  return *e;
}

double now_ms();  // steady clock
void sleep_ms(double ms);

// Deterministic bytes from `seed`; the same (n, seed) always gives the same data.
void fill_pattern(void* p, size_t n, uint64_t seed);
uint64_t checksum(const void* p, size_t n);  // FNV-1a 64
// "" when equal, else where the first difference is, with both checksums.
std::string compare_bytes(const void* got, const void* want, size_t n);

// Device memory from mem_alloc, freed on scope exit. Never dereferenced here.
class DevBuf {
 public:
  DevBuf(Ctx& c, int32_t device, uint64_t size);
  ~DevBuf();
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void* get() const { return p_; }
  void* at(uint64_t off) const { return static_cast<char*>(p_) + off; }  // arithmetic only
  uint64_t size() const { return size_; }
  int32_t device() const { return device_; }

 private:
  Ctx& c_;
  int32_t device_;
  uint64_t size_;
  void* p_ = nullptr;
};

enum class HostKind { kPageable, kPinned };
const char* host_kind_name(HostKind k);

// Host memory: ordinary heap (pageable) or host_alloc (pinned). A pinned buffer
// of size 0 is NULL, as host_alloc returns it.
class HostBuf {
 public:
  HostBuf(Ctx& c, HostKind kind, uint64_t size);
  ~HostBuf();
  HostBuf(const HostBuf&) = delete;
  HostBuf& operator=(const HostBuf&) = delete;
  unsigned char* data() const { return p_; }
  uint64_t size() const { return size_; }

 private:
  Ctx& c_;
  HostKind kind_;
  uint64_t size_;
  unsigned char* p_ = nullptr;
};

class Stream {
 public:
  Stream(Ctx& c, int32_t device, int32_t priority = 0);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  flagos_stream_t get() const { return s_; }
  flagos_stream_t release() {  // the caller destroys it
    flagos_stream_t s = s_;
    s_ = nullptr;
    return s;
  }

 private:
  Ctx& c_;
  flagos_stream_t s_ = nullptr;
};

class Event {
 public:
  Event(Ctx& c, int32_t device, uint32_t flags = FLAGOS_EVENT_DEFAULT);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  flagos_event_t get() const { return e_; }
  flagos_event_t release() {
    flagos_event_t e = e_;
    e_ = nullptr;
    return e;
  }

 private:
  Ctx& c_;
  flagos_event_t e_ = nullptr;
};

flagos_stream_t default_stream(Ctx& c, int32_t device);
// memcpy_sync through pageable memory: the reference path used to set up and
// read back device data.
void upload(Ctx& c, void* dev, const void* host, uint64_t n);
void download(Ctx& c, void* host, const void* dev, uint64_t n);
// Testing extension: a pause of `ms` on `stream` (skips the check without it).
void delay(Ctx& c, flagos_stream_t stream, double ms);

// Runs fn(i) for i in [0, n) on n threads and joins them. A fail/skip or
// exception inside a thread is recorded on `c` as a failure.
void run_threads(Ctx& c, int n, const std::function<void(int)>& fn);

class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, waiting_ = 0;
  unsigned generation_ = 0;
};

}  // namespace conformance
