// The rules each simulated runtime enforces, its exports, and the scenarios
// that need their own process (SIMRT_* is read once per process).
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>

#include "test_support.h"

using namespace simrt_test;

TEST_CASE("memcpy kinds: the vendor's range, and matching where the pointers are") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    REQUIRE(r.SetDevice(0) == 0);
    char host[64] = {}, back[64] = {};
    void* d = nullptr;
    REQUIRE(r.Malloc(&d, sizeof host) == 0);
    int rc = r.MemcpyAsync(d, host, sizeof host, 4, nullptr);
    if (v.has_default_kind) {
      CHECK(rc == 0);  // Default: inferred from the pointers
      CHECK(r.Memcpy(back, d, sizeof back, 4) == 0);
    } else {
      CHECK(rc == 21);
      std::string p = v.prefix;
      CHECK(error_text(r, 21) == p + "MemcpyAsync: kind 4 is not a " + p + "MemcpyKind (0..3)");
      CHECK(r.GetLastError() == 21);
    }
    CHECK(r.Memcpy(d, host, sizeof host, 7) == 21);
    CHECK(r.Memcpy(host, d, sizeof host, kH2D) == 1);  // src is device memory
    CHECK(error_text(r, 1).find("src") != std::string::npos);
    CHECK(r.Memcpy(back, host, sizeof host, kD2H) == 1);  // src is host memory
    CHECK(r.Memcpy(d, host, sizeof host, kH2H) == 1);
    CHECK(r.PeekAtLastError() == 1);
    CHECK(r.GetLastError() == 1);
    CHECK(r.GetLastError() == 0);
    // H2H runs on the stream and is synchronous.
    char a[8] = "abcdefg", b[8] = {};
    CHECK(r.MemcpyAsync(b, a, sizeof a, kH2H, nullptr) == 0);
    CHECK(std::strcmp(b, "abcdefg") == 0);
    REQUIRE(r.Free(d) == 0);
  }
}

TEST_CASE("bounds: every op stays inside a live allocation") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    REQUIRE(r.SetDevice(0) == 0);
    char host[200] = {};
    char* d = nullptr;
    REQUIRE(r.Malloc(reinterpret_cast<void**>(&d), 100) == 0);
    CHECK(r.Memcpy(d, host, 101, kH2D) == 1);
    CHECK(error_text(r, 1).find("out of bounds") != std::string::npos);
    CHECK(r.Memcpy(d + 50, host, 50, kH2D) == 0);
    CHECK(r.MemsetAsync(d + 99, 0, 2, nullptr) == 1);
    CHECK(r.MemsetAsync(d + 100, 0, 1, nullptr) == 1);
    CHECK(r.Free(d + 4) == 1);  // not the start of an allocation
    CHECK(r.Free(host) == 1);
    REQUIRE(r.Free(d) == 0);
    CHECK(r.Memcpy(host, d, 10, kD2H) == 1);  // use after free
    CHECK(error_text(r, 1).find("outside any live allocation") != std::string::npos);
  }
}

TEST_CASE("flags and attribute ids: only the vendor's documented values") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    REQUIRE(r.SetDevice(0) == 0);
    std::string p = v.prefix;
    void* e = nullptr;
    CHECK(r.EventCreateWithFlags(&e, 0x4) == 1);  // Interprocess without DisableTiming
    CHECK(error_text(r, 1) == p + "EventCreateWithFlags: flags 0x4: Interprocess (0x4) needs DisableTiming (0x2)");
    REQUIRE(r.EventCreateWithFlags(&e, 0x6) == 0);
    REQUIRE(r.EventDestroy(e) == 0);
    CHECK(r.EventCreateWithFlags(&e, 0x8) == 1);
    CHECK(error_text(r, 1).find("are not valid event flags") != std::string::npos);
    int value = 0;
    CHECK(r.DeviceGetAttribute(&value, 1000, 0) == 1);
    CHECK(error_text(r, 1) == p + "DeviceGetAttribute: attribute 1000 is not one the simulator answers");
    CHECK(r.GetLastError() == 1);
  }
}

TEST_CASE("a runtime call inside a host function is NotPermitted") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    struct Ctx { Rt* r; int rc = -1; } ctx{&r};
    auto cb = [](void* p) {
      auto* c = static_cast<Ctx*>(p);
      int n = 0;
      c->rc = c->r->GetDeviceCount(&n);
    };
    REQUIRE(r.LaunchHostFunc(nullptr, cb, &ctx) == 0);
    REQUIRE(r.StreamSynchronize(nullptr) == 0);
    CHECK(ctx.rc == v.not_permitted);
    CHECK(r.LaunchHostFunc(nullptr, nullptr, nullptr) == 1);
  }
}

TEST_CASE("a child forked after use gets InitializationError") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    int n = 0;
    REQUIRE(r.GetDeviceCount(&n) == 0);
    pid_t pid = fork();
    if (pid == 0) {
      void* p = nullptr;
      _exit(r.GetDeviceCount(&n) == 3 && r.Malloc(&p, 8) == 3 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
    REQUIRE(r.GetDeviceCount(&n) == 0);  // the parent is unaffected
  }
}

TEST_CASE("exports: real SONAMEs, no properties structs, metax has no cuda*") {
  struct Lib { const char* path; const char* soname; const char* prefix; };
  const Lib libs[] = {
      {"cuda/lib64/libcudart.so.13", "libcudart.so.13", "cuda"},
      {"cuda/lib64/libcuda.so.1", "libcuda.so.1", "cu"},
      {"ppu/CUDA_SDK/lib64/libcudart.so.13", "libcudart.so.13", "cuda"},
      {"ppu/CUDA_SDK/lib64/libcuda.so.1", "libcuda.so.1", "cu"},
      {"metax/lib/libmcruntime.so", "libmcruntime.so", "mc"},
      {"dcu/hip/lib/libgalaxyhip.so.5", "libgalaxyhip.so.5", "hip"},
      {"musa/lib/libmusart.so", "libmusart.so", "musa"},
      {"musa/lib/libmusa.so", "libmusa.so", "mu"},
      {"tsingmicro/lib/libhpgr.so", "libhpgr.so", "tx"},
      {"cuda/lib64/libcupti.so.13", "libcupti.so.13", "cupti"},
      {"ppu/CUDA_SDK/lib64/libcupti.so.13", "libcupti.so.13", "cupti"},
      {"musa/lib/libmupti.so", "libmupti.so", "mupti"},
  };
  for (const Lib& l : libs) {
    INFO(l.path);
    DynInfo info = dyn_info(root() + "/" + l.path);
    CHECK(info.soname == l.soname);
    for (const std::string& s : info.symbols) {
      INFO(s);
      CHECK((s.rfind(l.prefix, 0) == 0 || s == info.soname));  // the version node
      CHECK(s.find("Properties") == std::string::npos);
      // CUDA's own runtime alone has its pointer-attribute call.
      CHECK((s.find("PointerGetAttributes") == std::string::npos || s == "cudaPointerGetAttributes"));
    }
  }
  DynInfo mc = dyn_info(root() + "/metax/lib/libmcruntime.so");
  for (const std::string& s : mc.symbols) CHECK(s.rfind("cuda", 0) != 0);
  CHECK(mc.symbols.count("mcMallocHost") == 1);
  CHECK(dyn_info(root() + "/cuda/lib64/libcuda.so.1").symbols.count("cuDeviceTotalMem_v2") == 1);
}

TEST_CASE("tsingmicro: tx* shapes without flags or priorities, host-to-host copies rejected") {
  DynInfo info = dyn_info(root() + "/tsingmicro/lib/libhpgr.so");
  for (const char* absent : {"txStreamCreateWithPriority", "txDeviceGetStreamPriorityRange", "txStreamCreateWithFlags",
                             "txEventCreateWithFlags", "txMemcpyPeerAsync", "txDeviceGetAttribute"})
    CHECK(info.symbols.count(absent) == 0);
  void* lib = dlopen((root() + "/tsingmicro/lib/libhpgr.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  auto count = reinterpret_cast<int (*)(uint32_t*)>(symbol(lib, "txGetDeviceCount"));
  auto alloc = reinterpret_cast<int (*)(void**, uint64_t)>(symbol(lib, "txMalloc"));
  auto copy = reinterpret_cast<int (*)(void*, const void*, uint64_t, int)>(symbol(lib, "txMemcpy"));
  auto text = reinterpret_cast<const char* (*)(int)>(symbol(lib, "txGetErrorString"));
  uint32_t n = 0;
  REQUIRE(count(&n) == 0);
  CHECK(n == 2);
  char host[64] = {1}, back[64] = {};
  void* d = nullptr;
  REQUIRE(alloc(&d, sizeof host) == 0);
  int rc = copy(back, host, sizeof host, kH2H);
  CHECK(rc == 0x42000001);
  CHECK(std::string(text(rc)).rfind("txMemcpy: host-to-host copies (txMemcpyHostToHost, kind 0) are rejected", 0) == 0);
  CHECK(copy(d, host, sizeof host, kH2D) == 0);
  CHECK(copy(back, d, sizeof back, kD2H) == 0);
  CHECK(back[0] == 1);
  CHECK(copy(d, d, sizeof host, 4) == 0x42000001);  // no "default" kind
}

TEST_CASE("scenarios in their own process: SIMRT_FAIL, no devices, memory cap, guard, driver") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    std::string lib = root() + "/" + v.lib, p = v.prefix;
    Run fail = scenario({lib, p, "fail"}, {"SIMRT_FAIL=" + p + "Malloc:2," + p + "StreamCreateWithFlags:1:999"});
    INFO(fail.out);
    CHECK(fail.status == 0);
    Run none = scenario({lib, p, "no_devices"}, {"SIMRT_DEVICES=0"});
    INFO(none.out);
    CHECK(none.status == 0);
    Run oom = scenario({lib, p, "oom"}, {"SIMRT_MEMORY_MB=1"});
    INFO(oom.out);
    CHECK(oom.status == 0);
    Run delay = scenario({lib, p, "delay"}, {"SIMRT_DELAY_US=20000"});
    INFO(delay.out);
    CHECK(delay.status == 0);
    Run guard = scenario({lib, p, "guard"}, {"SIMRT_GUARD=1"});
    INFO(guard.out);
    // A sanitizer build reports the SEGV itself and exits with its own code.
    CHECK((guard.status == 128 + SIGSEGV || guard.out.find("SEGV") != std::string::npos));
    CHECK(guard.out.find("roundtrip ok") != std::string::npos);
  }
  struct Drv { const char* rt; const char* drv; const char* p; const char* dp; const char* total; };
  const Drv drivers[] = {
      {"cuda/lib64/libcudart.so.13", "cuda/lib64/libcuda.so.1", "cuda", "cu", "cuDeviceTotalMem_v2"},
      {"ppu/CUDA_SDK/lib64/libcudart.so.13", "ppu/CUDA_SDK/lib64/libcuda.so.1", "cuda", "cu", "cuDeviceTotalMem_v2"},
      {"musa/lib/libmusart.so", "musa/lib/libmusa.so", "musa", "mu", "muDeviceTotalMem"},
  };
  for (const Drv& d : drivers) {
    INFO(d.drv);
    Run run = scenario({root() + "/" + d.rt, d.p, "driver", root() + "/" + d.drv, d.dp, d.total}, {});
    INFO(run.out);
    CHECK(run.status == 0);
  }
}
