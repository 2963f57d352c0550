// How the caching allocator sizes blocks and segments (the policy of
// PyTorch's CUDA caching allocator): small requests share 2 MiB segments,
// medium ones 20 MiB segments, big ones get a segment of their own, so that
// few plugin calls serve many tensors while big buffers do not pin down
// unrelated memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/stats.h"

namespace flagos::memory::size_policy {

constexpr size_t kMinBlockSize = 512;         // every block is a multiple of this
constexpr size_t kSmallSize = 1 << 20;        // requests up to 1 MiB use the small pool
constexpr size_t kSmallBuffer = 2 << 20;      // small-pool segment size
constexpr size_t kMinLargeAlloc = 10 << 20;   // large requests below this share a segment
constexpr size_t kLargeBuffer = 20 << 20;     // shared large-pool segment size
constexpr size_t kRoundLarge = 2 << 20;       // bigger requests are rounded to this

// `n` rounded up to a multiple of `step`; saturates instead of wrapping, so an
// absurd size reaches the plugin as an absurd size and fails there as OOM.
constexpr size_t round_up(size_t n, size_t step) {
  return n > SIZE_MAX - (step - 1) ? SIZE_MAX : (n + step - 1) / step * step;
}

// The block size for a request of `size` bytes.
constexpr size_t block_size(size_t size) {
  return size < kMinBlockSize ? kMinBlockSize : round_up(size, kMinBlockSize);
}

constexpr Pool pool_for(size_t block_bytes) {
  return block_bytes <= kSmallSize ? Pool::Small : Pool::Large;
}

// The mem_alloc size of a new segment that must hold a block of `block_bytes`.
constexpr size_t segment_size(size_t block_bytes) {
  if (block_bytes <= kSmallSize) return kSmallBuffer;
  if (block_bytes < kMinLargeAlloc) return kLargeBuffer;
  return round_up(block_bytes, kRoundLarge);
}

// Whether a free block of `available` bytes serving `wanted` bytes is cut in
// two. Large-pool remainders under 1 MiB are not worth a separate block.
constexpr bool should_split(Pool pool, size_t available, size_t wanted) {
  const size_t rest = available - wanted;
  return pool == Pool::Small ? rest >= kMinBlockSize : rest > kSmallSize;
}

}  // namespace flagos::memory::size_policy
