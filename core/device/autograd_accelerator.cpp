// The getAccelerator redirect (autograd_accelerator.h says why). torch's
// libraries call at::accelerator::getAccelerator through their PLT, so one
// pointer per importing library decides what the autograd engine sees; the
// core rewrites those pointers, the same technique as a PLT hook, and keeps
// torch's function as the answer outside a window.
#include "device/autograd_accelerator.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace flagos::device {
namespace {

using GetAccelerator = std::optional<c10::DeviceType> (*)(bool);

// torch's mangled name for `std::optional<DeviceType> getAccelerator(bool)`.
constexpr const char* kSymbol = "_ZN2at11accelerator14getAcceleratorEb";

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#endif

GetAccelerator g_torch = nullptr;  // torch's own getAccelerator
std::atomic<int> g_override{-1};   // a DeviceType, or -1: torch's answer
std::mutex g_mutex;                // install/rescan
int g_slots = 0;
unsigned long long g_seen_adds = 0;  // dlpi_adds at the last scan

std::optional<c10::DeviceType> redirected(bool checked) {
  const int type = g_override.load(std::memory_order_acquire);
  if (type >= 0) return static_cast<c10::DeviceType>(type);
  return g_torch(checked);
}

#if defined(__x86_64__) || defined(__aarch64__)
struct Scan {
  uintptr_t own_base = 0;  // the core itself is never rewritten
  int slots = 0;
  std::string error;
};

// Writes our function into one import slot; a slot inside the object's
// RELRO range is made writable for the write and read-only again.
bool write_slot(void** slot, uintptr_t relro_begin, uintptr_t relro_end, std::string& error) {
  if (*slot == reinterpret_cast<void*>(&redirected)) return true;
  const auto address = reinterpret_cast<uintptr_t>(slot);
  const bool relro = address >= relro_begin && address < relro_end;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* start = reinterpret_cast<void*>(address & ~(page - 1));
  if (relro && mprotect(start, page, PROT_READ | PROT_WRITE) != 0) {
    error = std::string("mprotect: ") + std::strerror(errno);
    return false;
  }
  __atomic_store_n(slot, reinterpret_cast<void*>(&redirected), __ATOMIC_RELEASE);
  if (relro) mprotect(start, page, PROT_READ);
  return true;
}

// The dynamic section's addresses are absolute once the loader relocated it,
// relative in a copy it did not: accept both.
uintptr_t absolute(uintptr_t base, ElfW(Addr) value) {
  return value < base ? base + value : value;
}

int scan_object(dl_phdr_info* info, size_t, void* data) {
  auto* scan = static_cast<Scan*>(data);
  const uintptr_t base = info->dlpi_addr;
  if (base == scan->own_base || !scan->error.empty()) return 0;
  const ElfW(Dyn)* dynamic = nullptr;
  uintptr_t relro_begin = 0, relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) {
      relro_begin = base + ph.p_vaddr;
      relro_end = relro_begin + ph.p_memsz;
    }
  }
  if (dynamic == nullptr) return 0;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)* tables[2] = {nullptr, nullptr};
  size_t sizes[2] = {0, 0};
  bool plt_is_rela = true;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = reinterpret_cast<const ElfW(Sym)*>(absolute(base, d->d_un.d_ptr)); break;
      case DT_STRTAB: strtab = reinterpret_cast<const char*>(absolute(base, d->d_un.d_ptr)); break;
      case DT_JMPREL: tables[0] = reinterpret_cast<const ElfW(Rela)*>(absolute(base, d->d_un.d_ptr)); break;
      case DT_PLTRELSZ: sizes[0] = d->d_un.d_val; break;
      case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
      case DT_RELA: tables[1] = reinterpret_cast<const ElfW(Rela)*>(absolute(base, d->d_un.d_ptr)); break;
      case DT_RELASZ: sizes[1] = d->d_un.d_val; break;
      default: break;
    }
  }
  if (symtab == nullptr || strtab == nullptr || !plt_is_rela) return 0;
  for (int t = 0; t < 2; ++t) {
    for (size_t i = 0; tables[t] != nullptr && i < sizes[t] / sizeof(ElfW(Rela)); ++i) {
      const ElfW(Rela)& rela = tables[t][i];
      const uint32_t type = ELF64_R_TYPE(rela.r_info);
      if (type != kJumpSlot && type != kGlobDat) continue;
      const uint32_t index = ELF64_R_SYM(rela.r_info);
      if (index == 0 || std::strcmp(strtab + symtab[index].st_name, kSymbol) != 0) continue;
      if (!write_slot(reinterpret_cast<void**>(base + rela.r_offset), relro_begin, relro_end,
                      scan->error)) {
        return 1;
      }
      ++scan->slots;
    }
  }
  return 0;
}

int loaded_object_adds(dl_phdr_info* info, size_t, void* data) {
  *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  return 1;
}
#endif

}  // namespace

std::string install_accelerator_redirect() {
#if defined(__x86_64__) || defined(__aarch64__)
  std::lock_guard<std::mutex> lock(g_mutex);
  unsigned long long adds = 0;
  dl_iterate_phdr(&loaded_object_adds, &adds);
  if (g_torch != nullptr && adds == g_seen_adds) return "";  // nothing new loaded
  if (g_torch == nullptr) {
    g_torch = reinterpret_cast<GetAccelerator>(dlsym(RTLD_DEFAULT, kSymbol));
    if (g_torch == nullptr) return std::string("torch exports no ") + kSymbol;
  }
  Scan scan;
  Dl_info own{};
  if (dladdr(reinterpret_cast<void*>(&redirected), &own) != 0) {
    scan.own_base = reinterpret_cast<uintptr_t>(own.dli_fbase);
  }
  dl_iterate_phdr(&scan_object, &scan);
  if (!scan.error.empty()) return scan.error;
  if (scan.slots == 0) return std::string("no loaded library imports ") + kSymbol;
  g_slots = scan.slots;
  g_seen_adds = adds;
  return "";
#else
  return "the import-table redirect supports x86_64 and aarch64 only";
#endif
}

int accelerator_redirect_slots() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_slots;
}

void set_autograd_accelerator(std::optional<c10::DeviceType> type) {
  g_override.store(type ? static_cast<int>(*type) : -1, std::memory_order_release);
}

std::optional<c10::DeviceType> autograd_accelerator() {
  const int type = g_override.load(std::memory_order_acquire);
  if (type < 0) return std::nullopt;
  return static_cast<c10::DeviceType>(type);
}

}  // namespace flagos::device
