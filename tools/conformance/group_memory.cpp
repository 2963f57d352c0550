// memory: mem_alloc/mem_free, host_alloc, out-of-memory, pointer attributes,
// mem_get_info. Device memory is only read back through memcpy_sync, except
// in host-addressable, which tests exactly that capability.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

void* const kSentinel = reinterpret_cast<void*>(static_cast<uintptr_t>(0x5e5e5e5e));

void alloc_zero(Ctx& c) {
  c.need_devices(1);
  void* p = kSentinel;
  c.ok(c.api->mem_alloc(0, 0, &p), "mem_alloc(0, 0)");
  c.expect(p == nullptr, "mem_alloc of 0 bytes did not set *ptr = NULL");
  if (p != kSentinel) c.ok(c.api->mem_free(0, p), "mem_free");
}

// Allocates `size`, checks alignment and attributes, and round-trips the
// whole block: the plugin must really provide `size` usable bytes.
void alloc_size(Ctx& c, uint64_t size) {
  c.need_devices(1);
  DevBuf b(c, 0, size);
  c.require(b.get() != nullptr, "mem_alloc returned SUCCESS and NULL");
  uint64_t align = c.props[0].alloc_alignment;
  c.expect(align == 0 || reinterpret_cast<uintptr_t>(b.get()) % align == 0,
           strf("%p is not aligned to %llu", b.get(), static_cast<unsigned long long>(align)));
  std::vector<unsigned char> in(size), out(size);
  fill_pattern(in.data(), size, size);
  upload(c, b.get(), in.data(), size);
  download(c, out.data(), b.get(), size);
  std::string diff = compare_bytes(out.data(), in.data(), size);
  c.require(diff.empty(), "round trip: " + diff);
  c.note(strf("aligned to %llu; round trip of %llu bytes", static_cast<unsigned long long>(align),
              static_cast<unsigned long long>(size)));
}

// Many live blocks of assorted sizes: every one aligned, no two overlapping.
void alignment_and_disjoint(Ctx& c) {
  c.need_devices(1);
  std::vector<std::unique_ptr<DevBuf>> blocks;
  for (int d = 0; d < c.device_count; ++d)
    for (uint64_t size : {1, 3, 8, 100, 255, 256, 257, 1000, 4095, 4096, 4097, 65537, 1 << 20})
      blocks.emplace_back(new DevBuf(c, d, size));
  std::sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) {
    return reinterpret_cast<uintptr_t>(a->get()) < reinterpret_cast<uintptr_t>(b->get());
  });
  for (size_t i = 0; i < blocks.size(); ++i) {
    uintptr_t p = reinterpret_cast<uintptr_t>(blocks[i]->get());
    uint64_t align = c.props[blocks[i]->device()].alloc_alignment;
    c.expect(align == 0 || p % align == 0, strf("block of %llu bytes at %p is misaligned",
                                                static_cast<unsigned long long>(blocks[i]->size()),
                                                blocks[i]->get()));
    if (i + 1 < blocks.size() && blocks[i]->device() == blocks[i + 1]->device())
      c.expect(p + blocks[i]->size() <= reinterpret_cast<uintptr_t>(blocks[i + 1]->get()),
               strf("blocks at %p and %p overlap", blocks[i]->get(), blocks[i + 1]->get()));
  }
  c.note(strf("%zu live blocks", blocks.size()));
}

// A request that cannot be met is OUT_OF_MEMORY, writes nothing, and leaves
// the device usable.
void expect_oom(Ctx& c, uint64_t size) {
  void* p = kSentinel;
  flagos_status_t s = c.api->mem_alloc(0, size, &p);
  if (s == FLAGOS_SUCCESS) {
    c.api->mem_free(0, p);
    c.fail(strf("mem_alloc(%llu) succeeded", static_cast<unsigned long long>(size)));
  }
  c.expect_status(s, FLAGOS_ERROR_OUT_OF_MEMORY,
                  strf("mem_alloc(%llu)", static_cast<unsigned long long>(size)));
  c.expect(p == kSentinel, "mem_alloc wrote *ptr although it failed");
  c.expect(!c.last_error().empty(), "no last_error_message after OUT_OF_MEMORY");
}

void usable_after_oom(Ctx& c) {
  unsigned char in[4096], out[4096];
  fill_pattern(in, sizeof in, 42);
  DevBuf b(c, 0, sizeof in);
  upload(c, b.get(), in, sizeof in);
  download(c, out, b.get(), sizeof in);
  c.expect(compare_bytes(out, in, sizeof in).empty(), "round trip after OOM failed");
}

void oom_4x_total(Ctx& c) {
  c.need_devices(1);
  uint64_t total = c.props[0].total_memory;
  uint64_t size = total > 0 && total < UINT64_MAX / 8 ? total * 4 : UINT64_MAX / 2;
  expect_oom(c, size);
  usable_after_oom(c);
  c.note(strf("asked for %llu MiB; a 4 KiB block works afterwards",
              static_cast<unsigned long long>(size >> 20)));
}

// Sizes where rounding up to the alignment overflows a 64-bit size.
void oom_huge(Ctx& c) {
  c.need_devices(1);
  for (uint64_t size : {UINT64_MAX / 2, UINT64_MAX - 4095, UINT64_MAX}) expect_oom(c, size);
  usable_after_oom(c);
}

void host_alloc_sizes(Ctx& c) {
  c.need_cap(FLAGOS_CAP_PINNED_HOST, "FLAGOS_CAP_PINNED_HOST");
  NEED_FN(c, host_alloc);
  NEED_FN(c, host_free);
  void* p = kSentinel;
  c.ok(c.api->host_alloc(0, &p), "host_alloc(0)");
  c.expect(p == nullptr, "host_alloc of 0 bytes did not set *ptr = NULL");
  for (uint64_t size : {uint64_t{1}, uint64_t{4097}, uint64_t{64} << 20}) {
    HostBuf h(c, HostKind::kPinned, size);
    c.require(h.data() != nullptr, "host_alloc returned SUCCESS and NULL");
    std::vector<unsigned char> want(size);
    fill_pattern(want.data(), size, 7);
    std::memcpy(h.data(), want.data(), size);  // the CPU may read and write it
    c.expect(std::memcmp(h.data(), want.data(), size) == 0, "pinned memory did not hold data");
  }
}

// ---- pointer attributes ----------------------------------------------------------

void expect_kind(Ctx& c, const void* p, int32_t want_kind, flagos_device_t want_dev,
                 const char* what) {
  int32_t kind = -7;
  flagos_device_t dev = -7;
  c.ok(c.api->pointer_get_attributes(p, &kind, &dev), std::string("pointer_get_attributes(") + what + ")");
  c.expect(kind == want_kind && dev == want_dev,
           strf("%s: kind %d device %d, expected kind %d device %d", what, kind, dev, want_kind, want_dev));
}

void attrs_device(Ctx& c) {
  c.need_devices(1);
  for (int d = 0; d < c.device_count; ++d) {
    DevBuf b(c, d, 4096);
    expect_kind(c, b.get(), FLAGOS_POINTER_DEVICE, d, "device block base");
  }
}

void attrs_interior(Ctx& c) {
  c.need_devices(1);
  DevBuf b(c, c.device_count - 1, 1 << 20);
  int d = c.device_count - 1;
  expect_kind(c, b.at(1), FLAGOS_POINTER_DEVICE, d, "base+1");
  expect_kind(c, b.at(b.size() / 2), FLAGOS_POINTER_DEVICE, d, "middle");
  expect_kind(c, b.at(b.size() - 1), FLAGOS_POINTER_DEVICE, d, "last byte");
}

void attrs_pinned(Ctx& c) {
  HostBuf h(c, HostKind::kPinned, 1 << 20);
  expect_kind(c, h.data(), FLAGOS_POINTER_PINNED_HOST, -1, "pinned base");
  expect_kind(c, h.data() + 12345, FLAGOS_POINTER_PINNED_HOST, -1, "pinned interior");
  expect_kind(c, h.data() + h.size() - 1, FLAGOS_POINTER_PINNED_HOST, -1, "pinned last byte");
}

int g_static_int = 0;

void attrs_pageable(Ctx& c) {
  int stack_var = 0;
  std::unique_ptr<char[]> heap(new char[4096]);
  expect_kind(c, &stack_var, FLAGOS_POINTER_UNKNOWN, -1, "stack");
  expect_kind(c, heap.get() + 100, FLAGOS_POINTER_UNKNOWN, -1, "heap");
  expect_kind(c, &g_static_int, FLAGOS_POINTER_UNKNOWN, -1, "static");
  expect_kind(c, nullptr, FLAGOS_POINTER_UNKNOWN, -1, "NULL");
}

void mem_get_info(Ctx& c) {
  c.need_devices(1);
  NEED_FN(c, mem_get_info);
  uint64_t free0 = 0, total = 0, free1 = 0, total1 = 0;
  c.ok(c.api->mem_get_info(0, &free0, &total), "mem_get_info");
  c.expect(total > 0, "total is 0");
  c.expect(free0 <= total, "free > total");
  uint64_t size = std::min<uint64_t>(uint64_t{64} << 20, free0 / 2);
  c.require(size > 0, "no free memory to allocate");
  DevBuf b(c, 0, size);
  c.ok(c.api->mem_get_info(0, &free1, &total1), "mem_get_info after alloc");
  c.expect(total1 == total, "total changed after an allocation");
  c.expect(free1 < free0, strf("free did not decrease after allocating %llu bytes (%llu -> %llu)",
                               static_cast<unsigned long long>(size),
                               static_cast<unsigned long long>(free0),
                               static_cast<unsigned long long>(free1)));
  c.note(strf("free %llu -> %llu MiB of %llu MiB (props.total_memory %llu MiB)",
              static_cast<unsigned long long>(free0 >> 20), static_cast<unsigned long long>(free1 >> 20),
              static_cast<unsigned long long>(total >> 20),
              static_cast<unsigned long long>(c.props[0].total_memory >> 20)));
}

// FLAGOS_CAP_HOST_ADDRESSABLE promises the CPU may read and write device
// memory once the stream work producing it completed.
void host_addressable(Ctx& c) {
  c.need_cap(FLAGOS_CAP_HOST_ADDRESSABLE, "FLAGOS_CAP_HOST_ADDRESSABLE");
  const size_t n = 8192;
  DevBuf b(c, 0, n);
  flagos_stream_t s = default_stream(c, 0);
  c.ok(c.api->memset_async(b.get(), 0x3C, n, s), "memset_async");
  c.ok(c.api->stream_synchronize(s), "stream_synchronize");
  auto* p = static_cast<unsigned char*>(b.get());
  c.expect(std::count(p, p + n, 0x3C) == static_cast<long>(n), "CPU read of device memory mismatched");
  std::vector<unsigned char> want(n), got(n);
  fill_pattern(want.data(), n, 99);
  std::memcpy(p, want.data(), n);
  download(c, got.data(), b.get(), n);
  c.expect(compare_bytes(got.data(), want.data(), n).empty(), "CPU write not seen by memcpy_sync");
}

}  // namespace

Group memory_group() {
  Group g("memory", "allocation sizes, alignment, out-of-memory, pinned memory, attributes");
  g.add("alloc-zero-bytes", alloc_zero)
      .add("alloc-1B", [](Ctx& c) { alloc_size(c, 1); })
      .add("alloc-4097B", [](Ctx& c) { alloc_size(c, 4097); })
      .add("alloc-64MiB", [](Ctx& c) { alloc_size(c, uint64_t{64} << 20); })
      .add("alignment-and-disjoint", alignment_and_disjoint)
      .add("oom-4x-total-memory", oom_4x_total)
      .add("oom-huge-sizes", oom_huge)
      .add("host-alloc", host_alloc_sizes)
      .add("attributes.device", attrs_device)
      .add("attributes.interior", attrs_interior)
      .add("attributes.pinned", attrs_pinned)
      .add("attributes.pageable", attrs_pageable)
      .add("mem-get-info", mem_get_info)
      .add("host-addressable", host_addressable);
  return g;
}

}  // namespace conformance
