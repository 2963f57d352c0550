// The tests' view of a simulated runtime: the CUDA-shaped calls resolved by
// prefix with dlsym, as a plugin would.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace simrt_test {

constexpr int kH2H = 0, kH2D = 1, kD2H = 2, kD2D = 3;

struct Vendor {
  const char* name;
  const char* lib;     // runtime library, relative to SIMRT_ROOT
  const char* prefix;  // runtime symbol prefix
  bool has_default_kind;
  int not_permitted;   // what a callback's runtime call gets
};

// The four vendors (ppu is the cuda libraries under another SDK tree).
inline const Vendor kVendors[] = {
    {"cuda", "cuda/lib64/libcudart.so.13", "cuda", true, 800},
    {"metax", "metax/lib/libmcruntime.so", "mc", false, 800},
    {"dcu", "dcu/hip/lib/libgalaxyhip.so.5", "hip", true, 801},
    {"musa", "musa/lib/libmusart.so", "musa", false, 800},
};

inline void* symbol(void* lib, const std::string& name) {
  void* f = dlsym(lib, name.c_str());
  if (f == nullptr) throw std::runtime_error("missing symbol " + name);
  return f;
}

struct Rt {
#define SIMRT_FN(ret, name, ...) ret (*name)(__VA_ARGS__) = nullptr;
#define SIMRT_CLIENT_LIST(X)                                        \
  X(int, GetDeviceCount, int*)                                      \
  X(int, SetDevice, int)                                            \
  X(int, GetDevice, int*)                                           \
  X(int, DeviceGetAttribute, int*, int, int)                        \
  X(int, DeviceGetStreamPriorityRange, int*, int*)                  \
  X(int, DeviceCanAccessPeer, int*, int, int)                       \
  X(int, DeviceEnablePeerAccess, int, unsigned)                     \
  X(int, DeviceSynchronize, void)                                   \
  X(int, MemGetInfo, size_t*, size_t*)                              \
  X(int, Malloc, void**, size_t)                                    \
  X(int, Free, void*)                                               \
  X(int, Memcpy, void*, const void*, size_t, int)                   \
  X(int, MemcpyAsync, void*, const void*, size_t, int, void*)       \
  X(int, MemcpyPeerAsync, void*, int, const void*, int, size_t, void*) \
  X(int, MemsetAsync, void*, int, size_t, void*)                    \
  X(int, StreamCreateWithPriority, void**, unsigned, int)           \
  X(int, StreamCreateWithFlags, void**, unsigned)                   \
  X(int, StreamDestroy, void*)                                      \
  X(int, StreamQuery, void*)                                        \
  X(int, StreamSynchronize, void*)                                  \
  X(int, StreamWaitEvent, void*, void*, unsigned)                   \
  X(int, EventCreateWithFlags, void**, unsigned)                    \
  X(int, EventRecord, void*, void*)                                 \
  X(int, EventQuery, void*)                                         \
  X(int, EventSynchronize, void*)                                   \
  X(int, EventDestroy, void*)                                       \
  X(int, EventElapsedTime, float*, void*, void*)                    \
  X(int, GetLastError, void)                                        \
  X(int, PeekAtLastError, void)                                     \
  X(const char*, GetErrorName, int)                                 \
  X(const char*, GetErrorString, int)                               \
  X(int, LaunchHostFunc, void*, void (*)(void*), void*)
  SIMRT_CLIENT_LIST(SIMRT_FN)
#undef SIMRT_FN
  void* lib = nullptr;
  std::string prefix;

  explicit Rt(const std::string& path, const std::string& p) : prefix(p) {
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
#define SIMRT_LOAD(ret, name, ...) name = reinterpret_cast<decltype(name)>(symbol(lib, prefix + #name));
    SIMRT_CLIENT_LIST(SIMRT_LOAD)
#undef SIMRT_LOAD
  }
  void* sym(const std::string& name) const { return symbol(lib, name); }
};

}  // namespace simrt_test
