// The caching allocator's bookkeeping unit: one contiguous piece of a device
// segment. Blocks of a segment form a doubly linked list in address order, so
// that a freed block can merge with free neighbours. Never dereferences `ptr`.
// Not thread-safe: owned and guarded by CachingAllocator's mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "flagos/flagos.h"
#include "memory/stats.h"

namespace flagos::memory {

struct PrivatePool;  // caching_allocator.h

struct Block {
  enum class State {
    Live,     // handed out by allocate(), not yet freed
    Pending,  // freed, waiting for events on streams that used it (or being released)
    Cached,   // free and in its pool, reusable on `stream`
  };

  void* ptr = nullptr;
  size_t size = 0;                  // multiple of 512 bytes
  size_t requested = 0;             // the caller's size while Live
  flagos_stream_t stream = nullptr; // the allocation stream; reuse is safe on it
  Pool pool = Pool::Small;
  PrivatePool* owner = nullptr;     // a graph's private pool, or null: the shared pools
  State state = State::Cached;
  int pending_events = 0;           // recorded events not yet completed
  Block* prev = nullptr;            // neighbours in the same segment
  Block* next = nullptr;
  std::vector<flagos_stream_t> stream_uses;  // other streams (record_stream)

  bool is_split() const { return prev != nullptr || next != nullptr; }
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(ptr); }
  bool contains(uintptr_t p) const { return p >= address() && p - address() < size; }
};

// Pools are ordered by (stream, size, address): lower_bound finds the smallest
// block of the right stream that fits, and ties go to the lowest address.
struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const {
    return std::make_tuple(reinterpret_cast<uintptr_t>(a->stream), a->size, a->address()) <
           std::make_tuple(reinterpret_cast<uintptr_t>(b->stream), b->size, b->address());
  }
};

using BlockPool = std::set<Block*, BlockOrder>;

}  // namespace flagos::memory
