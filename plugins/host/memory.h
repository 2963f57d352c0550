// Device and pinned-host allocations: capacity accounting per device and an
// ordered map of live blocks, so that any interior pointer can be classified
// and, in strict mode, translated to the plugin's private alias.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "flagos/plugin_api.h"
#include "strict_mapping.h"

namespace flagos_host {

enum class BlockKind { kDevice, kPinnedHost };

// One allocation. Tasks that use it hold a reference, so memory freed while
// work is still pending stays mapped until that work is done.
struct Block {
  BlockKind kind = BlockKind::kDevice;
  int32_t device = -1;     // -1 for pinned host memory
  uint64_t size = 0;       // bytes requested; [addr, addr + size) is the block
  uint64_t reserved = 0;   // bytes charged against the device's capacity
  uint8_t* addr = nullptr;    // what the caller was given
  uint8_t* access = nullptr;  // where the plugin reads and writes (strict alias)
  StrictMapping strict;       // set when strict-mode mapped
  bool page_mapped = false;   // mmap'd (pinned host, shareable, imported): munmap `reserved`
  int fd = -1;                // shareable memory's memfd, kept open for export_memory
  bool imported = false;      // another process's memory (open_memory): not charged, not freed

  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block();  // unmaps/frees and returns `reserved` to the device

  // The plugin-accessible address of the caller's pointer `p` inside the block.
  uint8_t* translate(const void* p) const {
    return access + (static_cast<const uint8_t*>(p) - addr);
  }
};

// Guards the block map; held across fork() (see plugin_entry.cpp).
std::mutex& memory_mutex();

// `shareable`: backed by a memfd that export_memory hands out (flagos/ext/ipc.h).
flagos_status_t alloc_device(const char* fn, int32_t device, uint64_t size, void** out,
                             bool shareable = false);
flagos_status_t free_device(const char* fn, int32_t device, void* ptr);
// Maps `size` bytes of another process's shareable memory file `fd` (the
// caller keeps `fd`) as memory of `device`, and the release of that mapping.
flagos_status_t import_device(const char* fn, int32_t device, int fd, uint64_t size, void** out);
flagos_status_t close_import(const char* fn, int32_t device, void* ptr);
flagos_status_t alloc_pinned(const char* fn, uint64_t size, void** out);
flagos_status_t free_pinned(const char* fn, void* ptr);

// The live block containing `ptr`, or null. Never dereferences `ptr`.
std::shared_ptr<Block> find_block(const void* ptr);

uint64_t used_bytes(int32_t device);

}  // namespace flagos_host
