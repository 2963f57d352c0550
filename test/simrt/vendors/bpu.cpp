// libhbucp.so and libbpu.so: Horizon Robotics' UCP system-memory calls and
// the BPU core count (both in /usr/hobot/lib), built twice from this file
// with different export lists. Signatures, the hbUCPSysMem struct and the
// values are those of Horizon's hobot/hb_ucp_sys.h (HB_SYS_MEM_CACHE_INVALIDATE
// = 1, HB_SYS_MEM_CACHE_CLEAN = 2), hobot/hb_ucp_status.h (hbUCPStatus,
// hbUCPGetErrorDesc) and hb_bpu.h (int32_t hb_bpu_core_num(void)).
//
// Cached memory as the CPU sees it: every block has a "device" copy (engine
// memory: the DDR the BPU reads and writes) and a "CPU cache" copy, the
// virAddr handed out, synchronised only by hbUCPMemFlush: CLEAN writes cache
// to device, INVALIDATE device to cache. Page protection tracks whose the
// block is: the device's after a CLEAN (the BPU may now write it; no CPU
// access until the next INVALIDATE, so an access without one is caught where
// it happens), else the CPU's, read-only until its first write marks it
// dirty (a CLEAN of a clean block writes nothing back). The rules, from the
// flush flags' documentation in Horizon's DNN API reference
// (hbSysMemFlushFlag / hbUCPSysMemFlushFlag: "INVALIDATE: synchronise memory
// into the cache, used before the CPU reads; CLEAN: synchronise the cache
// into memory, used after the CPU writes"):
//   - an access to a block the device owns, with no INVALIDATE since: the
//     CPU sees stale lines (the block reads as a poison pattern from then on);
//   - an INVALIDATE over CPU writes never CLEANed: it would discard them;
//   - flags other than 1 and 2, and a range beyond its block, are refused.
// Unverified on hardware: the real library's argument checks are unknown.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

#include "exports.h"

namespace {

using simrt::Err;

struct hbUCPSysMem {
  uint64_t phyAddr;
  void* virAddr;
  uint64_t memSize;
};
static_assert(sizeof(hbUCPSysMem) == 24, "hbUCPSysMem is 24 bytes (hb_ucp_sys.h)");

constexpr int32_t HB_SYS_MEM_CACHE_INVALIDATE = 1;
constexpr int32_t HB_SYS_MEM_CACHE_CLEAN = 2;

// hb_ucp_status.h codes for the engine's identities; UCP has no stream,
// event, peer or device-ordinal errors of its own, so those borrow the
// nearest code and have no name here.
const simrt::Vendor kBpu = {
    "bpu", "hbUCP", "BPU", "copy direction",
    {{0, "HB_UCP_SUCCESS"},
     {-100001, "HB_UCP_INVALID_ARGUMENT"},
     {-400001, "HB_UCP_MEM_ALLOC_FAIL"},
     {-100003, "HB_UCP_INIT_FAILED"},
     {-100001, nullptr},  // no copy kinds: the CPU copies
     {-100003, nullptr},  // no device: hb_bpu_core_num() answers 0
     {-100001, nullptr},
     {-400005, "HB_UCP_MEM_IS_INVALID"},
     {-200002, nullptr},  // nothing is ever pending
     {-100002, nullptr},
     {-100002, "HB_UCP_API_USE_ERROR"},
     {-100002, nullptr}},
    /*the engine's copies between the two copies of a block: h2h,h2d,d2h,d2d*/ 0, 1, 2, 3, -1,
    0, 0, 0, 0, 0, 0,
    /*no attribute call*/ {-1, -1, -1, -1, -1, -1},
    0, 0,
    0, 0, 0,
};

constexpr unsigned char kPoison = 0xA5;  // what a stale cache line reads as here

const char* const kStaleRule =
    "the CPU accessed a block the device owns with no INVALIDATE since its last CLEAN: it sees stale cache "
    "lines (HB_SYS_MEM_CACHE_INVALIDATE before the CPU reads or writes part of it)";
const char* const kDirtyRule =
    "INVALIDATE over CPU writes that were never CLEANed discards them (HB_SYS_MEM_CACHE_CLEAN after the "
    "CPU writes)";

// Whose a block is, and the protection of its cache pages.
enum class Owner {
  kDevice,    // PROT_NONE: no CPU access before an INVALIDATE
  kCpuClean,  // PROT_READ: the cache holds the device's bytes
  kCpuDirty,  // PROT_READ | PROT_WRITE: the CPU wrote; a CLEAN must follow
};

struct Block {
  void* device;   // engine memory: the BPU's view
  char* cache;    // virAddr: the CPU's view
  uint64_t size;
  size_t mapped;  // page-rounded
  Owner owner;
};

std::mutex& mu() {
  static auto* m = new std::mutex;
  return *m;
}
std::map<uintptr_t, Block>& blocks() {  // by virAddr
  static auto* m = new std::map<uintptr_t, Block>;
  return *m;
}

// The block holding `p`, under mu(); nullptr when none does.
Block* block_at(const void* p) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  auto it = blocks().upper_bound(at);
  if (it == blocks().begin()) return nullptr;
  --it;
  return at - it->first < it->second.mapped ? &it->second : nullptr;
}

void protect(Block& b, Owner owner) {
  const int prot = owner == Owner::kDevice     ? PROT_NONE
                   : owner == Owner::kCpuClean ? PROT_READ
                                               : PROT_READ | PROT_WRITE;
  mprotect(b.cache, b.mapped, prot);
  b.owner = owner;
}

// ---- CPU accesses: seen through the faults they cause -------------------------

struct sigaction g_previous;

// A fault in a block's cache: the first write to a clean block marks it
// dirty; any access to a block the device owns is reported, and the block
// then reads stale (poison) bytes, so that the access completes and its
// wrong data shows in the caller's results. The faulting thread is in the
// caller's code, never inside this library, so mu() is free to take.
bool cpu_access(void* addr) {
  std::lock_guard<std::mutex> lock(mu());
  Block* b = block_at(addr);
  if (b == nullptr || b->owner == Owner::kCpuDirty) return false;
  if (b->owner == Owner::kDevice) {
    protect(*b, Owner::kCpuDirty);
    std::memset(b->cache, kPoison, b->mapped);
    protect(*b, Owner::kCpuClean);  // a write faults again, and marks it dirty
    simrt::rule_violation(kBpu, "hbUCPMemFlush", Err::InvalidValue, kStaleRule);
    return true;
  }
  protect(*b, Owner::kCpuDirty);
  return true;
}

void on_fault(int, siginfo_t* info, void*) {
  if (cpu_access(info->si_addr)) return;     // the access runs again, now allowed
  sigaction(SIGSEGV, &g_previous, nullptr);  // not ours: the fault repeats under the previous handler
}

// At every allocation, in case someone installed a handler over this one
// since (a test framework's per-test handler, a fault reporter enabled late):
// this one goes first again, and passes faults that are not its own on.
void install_fault_handler() {
  static std::mutex installing;
  std::lock_guard<std::mutex> lock(installing);
  struct sigaction current {};
  sigaction(SIGSEGV, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == on_fault) return;
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_previous);
}

// ---- the two copies of a block ----------------------------------------------

// Dirtiness is the block's, not the range's: a CLEAN of part of a dirty
// block leaves it dirty, since the rest may hold writes too.
int invalidate(Block& b, uint64_t offset, uint64_t n) {
  if (b.owner == Owner::kCpuDirty)
    return simrt::rule_violation(kBpu, "hbUCPMemFlush", Err::InvalidValue, kDirtyRule);
  const bool stale_elsewhere = b.owner == Owner::kDevice && n < b.size;
  protect(b, Owner::kCpuDirty);  // writable for the copy below
  if (stale_elsewhere) std::memset(b.cache, kPoison, b.mapped);  // lines outside the range stay stale
  int err = simrt::memcpy_sync(kBpu, "hbUCPMemFlush(INVALIDATE)", b.cache + offset,
                               static_cast<char*>(b.device) + offset, n, kBpu.kind_d2h);
  protect(b, Owner::kCpuClean);
  return err;
}

int clean(Block& b, uint64_t offset, uint64_t n) {
  if (b.owner == Owner::kCpuDirty) {
    int err = simrt::memcpy_sync(kBpu, "hbUCPMemFlush(CLEAN)", static_cast<char*>(b.device) + offset,
                                 b.cache + offset, n, kBpu.kind_h2d);
    if (err != 0 || n < b.size) return err;
  }
  if (n == b.size) protect(b, Owner::kDevice);  // the CPU is done with it: the BPU's now
  return 0;
}

size_t page_rounded(uint64_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
  return static_cast<size_t>((n + page - 1) / page * page);
}

}  // namespace

// hb_bpu.h: the BPU cores the driver reports, 0 without one. SIMRT_DEVICES
// sets it (0: no BPU); however many cores, the plugin sees one device.
SIMRT_EXPORT int32_t hb_bpu_core_num(void) {
  int n = 0;
  return simrt::get_device_count(kBpu, "hb_bpu_core_num", &n) == 0 ? n : 0;
}

// hb_ucp_sys.h: deviceId is a reserved parameter.
SIMRT_EXPORT int32_t hbUCPMallocCached(hbUCPSysMem* mem, uint64_t size, int32_t /*deviceId*/) {
  int code = 0;
  if (simrt::call_blocked(kBpu, "hbUCPMallocCached", &code)) return code;
  if (mem == nullptr) return simrt::rule_violation(kBpu, "hbUCPMallocCached", Err::InvalidValue, "mem is NULL");
  if (size == 0) return simrt::rule_violation(kBpu, "hbUCPMallocCached", Err::InvalidValue, "size is 0");
  void* device = nullptr;
  int err = simrt::malloc_device(kBpu, "hbUCPMallocCached(memory)", &device, size);
  if (err != 0) return err;
  const size_t mapped = page_rounded(size);
  void* cache = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (cache == MAP_FAILED) {
    simrt::free_device(kBpu, "hbUCPMallocCached(memory)", device);
    return kBpu.errors[static_cast<int>(Err::MemoryAllocation)].code;
  }
  install_fault_handler();
  {
    std::lock_guard<std::mutex> lock(mu());
    // A fresh block is the device's: its cache lines hold nothing the CPU may use.
    blocks()[reinterpret_cast<uintptr_t>(cache)] = Block{device, static_cast<char*>(cache), size, mapped, Owner::kDevice};
  }
  mem->phyAddr = reinterpret_cast<uint64_t>(device);
  mem->virAddr = cache;
  mem->memSize = size;
  return 0;
}

SIMRT_EXPORT int32_t hbUCPMemFlush(const hbUCPSysMem* mem, int32_t flag) {
  int code = 0;
  if (simrt::call_blocked(kBpu, "hbUCPMemFlush", &code)) return code;
  if (mem == nullptr) return simrt::rule_violation(kBpu, "hbUCPMemFlush", Err::InvalidValue, "mem is NULL");
  if (flag != HB_SYS_MEM_CACHE_INVALIDATE && flag != HB_SYS_MEM_CACHE_CLEAN)
    return simrt::rule_violation(kBpu, "hbUCPMemFlush", Err::InvalidValue,
                                 "flag is neither HB_SYS_MEM_CACHE_INVALIDATE (1) nor HB_SYS_MEM_CACHE_CLEAN (2)");
  std::lock_guard<std::mutex> lock(mu());
  Block* b = block_at(mem->virAddr);
  if (b == nullptr)
    return simrt::rule_violation(kBpu, "hbUCPMemFlush", Err::InvalidValue,
                                 "mem->virAddr is not in a block hbUCPMallocCached returned");
  const uint64_t offset = reinterpret_cast<uintptr_t>(mem->virAddr) - reinterpret_cast<uintptr_t>(b->cache);
  if (offset >= b->size || mem->memSize > b->size - offset)
    return simrt::rule_violation(kBpu, "hbUCPMemFlush", Err::InvalidValue,
                                 "mem->memSize runs beyond the block hbUCPMallocCached returned");
  if (mem->phyAddr != reinterpret_cast<uint64_t>(b->device) + offset)
    return simrt::rule_violation(kBpu, "hbUCPMemFlush", Err::InvalidValue,
                                 "mem->phyAddr does not match mem->virAddr (pass what hbUCPMallocCached filled)");
  if (mem->memSize == 0) return 0;
  return flag == HB_SYS_MEM_CACHE_INVALIDATE ? invalidate(*b, offset, mem->memSize)
                                             : clean(*b, offset, mem->memSize);
}

SIMRT_EXPORT int32_t hbUCPFree(hbUCPSysMem* mem) {
  int code = 0;
  if (simrt::call_blocked(kBpu, "hbUCPFree", &code)) return code;
  if (mem == nullptr) return simrt::rule_violation(kBpu, "hbUCPFree", Err::InvalidValue, "mem is NULL");
  Block b{};
  {
    std::lock_guard<std::mutex> lock(mu());
    auto it = blocks().find(reinterpret_cast<uintptr_t>(mem->virAddr));
    if (it == blocks().end())
      return simrt::rule_violation(kBpu, "hbUCPFree", Err::InvalidResourceHandle,
                                   "mem->virAddr is not the start of a live block hbUCPMallocCached returned");
    b = it->second;
    blocks().erase(it);
  }
  munmap(b.cache, b.mapped);
  return simrt::free_device(kBpu, "hbUCPFree", b.device);
}

SIMRT_EXPORT const char* hbUCPGetErrorDesc(int32_t code) { return simrt::get_error_string(kBpu, code); }
