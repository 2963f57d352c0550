// The simulated UCP runtime (vendors/bpu.cpp): the two copies of a block and
// the cache rules, through its own calls and signatures.
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "test_support.h"

namespace {

struct SysMem {  // hbUCPSysMem (hb_ucp_sys.h)
  uint64_t phyAddr;
  void* virAddr;
  uint64_t memSize;
};

constexpr int32_t kInvalidate = 1, kClean = 2;  // HB_SYS_MEM_CACHE_INVALIDATE, _CLEAN
constexpr int32_t kInvalidArgument = -100001;   // HB_UCP_INVALID_ARGUMENT

struct Ucp {
  Ucp() {
    void* ucp = dlopen((simrt_test::root() + "/bpu/lib/libhbucp.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    void* core = dlopen((simrt_test::root() + "/bpu/lib/libbpu.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(ucp != nullptr);
    REQUIRE(core != nullptr);
    core_num = reinterpret_cast<int32_t (*)()>(dlsym(core, "hb_bpu_core_num"));
    malloc_cached = reinterpret_cast<int32_t (*)(SysMem*, uint64_t, int32_t)>(dlsym(ucp, "hbUCPMallocCached"));
    flush = reinterpret_cast<int32_t (*)(const SysMem*, int32_t)>(dlsym(ucp, "hbUCPMemFlush"));
    free = reinterpret_cast<int32_t (*)(SysMem*)>(dlsym(ucp, "hbUCPFree"));
    desc = reinterpret_cast<const char* (*)(int32_t)>(dlsym(ucp, "hbUCPGetErrorDesc"));
    REQUIRE((core_num && malloc_cached && flush && free && desc));
  }
  int32_t (*core_num)();
  int32_t (*malloc_cached)(SysMem*, uint64_t, int32_t);
  int32_t (*flush)(const SysMem*, int32_t);
  int32_t (*free)(SysMem*);
  const char* (*desc)(int32_t);
};

Ucp& ucp() {
  static Ucp u;
  return u;
}

}  // namespace

TEST_CASE("bpu: cores follow SIMRT_DEVICES; only UCP's own symbols are exported") {
  CHECK(ucp().core_num() == 2);
  void* ucp_lib = dlopen((simrt_test::root() + "/bpu/lib/libhbucp.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(ucp_lib != nullptr);
  CHECK(dlsym(ucp_lib, "hb_bpu_core_num") == nullptr);  // libbpu.so's
  CHECK(dlsym(ucp_lib, "cudaMalloc") == nullptr);
}

TEST_CASE("bpu: CPU writes reach the device through CLEAN and come back through INVALIDATE") {
  Ucp& u = ucp();
  SysMem m{};
  REQUIRE(u.malloc_cached(&m, 10000, 0) == 0);
  CHECK(m.memSize == 10000);
  REQUIRE(u.flush(&m, kInvalidate) == 0);
  std::memset(m.virAddr, 0x3C, m.memSize);
  REQUIRE(u.flush(&m, kClean) == 0);
  REQUIRE(u.flush(&m, kInvalidate) == 0);
  const auto* bytes = static_cast<const unsigned char*>(m.virAddr);
  CHECK((bytes[0] == 0x3C && bytes[9999] == 0x3C));
  // A range inside the block, by its own virAddr and phyAddr.
  SysMem part{m.phyAddr + 100, static_cast<char*>(m.virAddr) + 100, 50};
  CHECK(u.flush(&part, kInvalidate) == 0);
  REQUIRE(u.free(&m) == 0);
}

TEST_CASE("bpu: the flush arguments are the allocator's, and the flags Horizon's") {
  Ucp& u = ucp();
  SysMem m{};
  REQUIRE(u.malloc_cached(&m, 4096, 0) == 0);
  CHECK(u.flush(&m, 3) == kInvalidArgument);
  CHECK(std::string(u.desc(kInvalidArgument)).find("neither HB_SYS_MEM_CACHE_INVALIDATE (1)") != std::string::npos);
  SysMem longer = m;
  longer.memSize = m.memSize + 1;
  CHECK(u.flush(&longer, kInvalidate) == kInvalidArgument);
  CHECK(std::string(u.desc(kInvalidArgument)).find("runs beyond the block") != std::string::npos);
  SysMem moved = m;
  moved.phyAddr += 64;
  CHECK(u.flush(&moved, kInvalidate) == kInvalidArgument);
  int outside = 0;
  SysMem stray{0, &outside, 4};
  CHECK(u.flush(&stray, kClean) == kInvalidArgument);
  REQUIRE(u.free(&m) == 0);
  CHECK(u.free(&m) != 0);  // freed already
}

TEST_CASE("bpu: an INVALIDATE over writes never CLEANed is refused") {
  Ucp& u = ucp();
  SysMem m{};
  REQUIRE(u.malloc_cached(&m, 4096, 0) == 0);
  REQUIRE(u.flush(&m, kInvalidate) == 0);
  static_cast<char*>(m.virAddr)[7] = 1;
  CHECK(u.flush(&m, kInvalidate) == kInvalidArgument);
  CHECK(std::string(u.desc(kInvalidArgument)).find("never CLEANed discards them") != std::string::npos);
  CHECK(u.flush(&m, kClean) == 0);
  CHECK(u.flush(&m, kInvalidate) == 0);
  CHECK(static_cast<char*>(m.virAddr)[7] == 1);
  REQUIRE(u.free(&m) == 0);
}

TEST_CASE("bpu: a CPU read of a block the device owns sees stale bytes") {
  Ucp& u = ucp();
  SysMem m{};
  REQUIRE(u.malloc_cached(&m, 4096, 0) == 0);
  REQUIRE(u.flush(&m, kInvalidate) == 0);
  std::memset(m.virAddr, 0x11, m.memSize);
  REQUIRE(u.flush(&m, kClean) == 0);
  // No INVALIDATE: the access faults inside the simulator, which reports it
  // and serves the poison pattern.
  CHECK(static_cast<volatile unsigned char*>(m.virAddr)[5] == 0xA5);
  REQUIRE(u.flush(&m, kInvalidate) == 0);
  CHECK(static_cast<unsigned char*>(m.virAddr)[5] == 0x11);  // the device kept the data
  REQUIRE(u.free(&m) == 0);
}
