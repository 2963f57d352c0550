// ipc: FLAGOS_EXTENSION_IPC (flagos/ext/ipc.h), run only when the plugin
// chains it. What one process can check: which allocations export, that a
// handle is stable and names the whole allocation, argument errors, and,
// where the plugin opens its own handles (the header allows refusing), that
// an opened mapping is the same memory. Passing handles to another process
// is exercised by the torch-level suite (test/torch/test_multiprocessing.py).
#include <unistd.h>

#include <cstring>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

using Ipc = flagos_ipc_ext_t;

const Ipc& need_ipc(Ctx& c) {
  const Ipc* e = &need_extension<Ipc>(c, FLAGOS_EXTENSION_IPC, "ipc", FLAGOS_IPC_EXT_SIZE_1_5);
  c.need_devices(1);
  return *e;
}

bool all_allocations(const Ipc& e) { return (e.flags & FLAGOS_IPC_ALL_ALLOCATIONS) != 0; }

// An exportable allocation of `size` bytes on device 0, freed on scope exit.
struct Shareable {
  Ctx& c;
  void* p = nullptr;
  Shareable(Ctx& ctx, const Ipc& e, uint64_t size) : c(ctx) {
    flagos_status_t st = all_allocations(e) ? c.api->mem_alloc(0, size, &p)
                                            : e.mem_alloc_shareable(0, size, &p);
    c.ok(st, all_allocations(e) ? "mem_alloc" : "mem_alloc_shareable");
    c.require(p != nullptr, "the allocation succeeded without a pointer");
  }
  ~Shareable() { c.api->mem_free(0, p); }
};

// Exports the allocation holding `ptr`, skipping the check when the runtime
// turns out to have no IPC; the pointer's offset goes to *offset if given.
flagos_ipc_handle_t exported(Ctx& c, const Ipc& e, const void* ptr, uint64_t* offset = nullptr) {
  flagos_ipc_handle_t h{};
  uint64_t off = ~0ull;
  flagos_status_t st = e.export_memory(0, ptr, &h, &off);
  if (st == FLAGOS_ERROR_UNSUPPORTED) c.skip("the runtime cannot share memory here: " + c.last_error());
  c.ok(st, "export_memory");
  if (offset != nullptr) *offset = off;
  return h;
}

void extension_table(Ctx& c) {
  const Ipc& e = need_ipc(c);
  c.expect(e.export_memory && e.open_memory && e.close_memory, "ipc: a function is NULL");
  c.expect(all_allocations(e) == (e.mem_alloc_shareable == nullptr),
           "ipc: mem_alloc_shareable must be NULL exactly when FLAGOS_IPC_ALL_ALLOCATIONS is set");
  Shareable a(c, e, 4096);
  uint64_t off = 0;
  c.expect_status(e.export_memory(0, a.p, nullptr, &off), FLAGOS_ERROR_INVALID_ARGUMENT, "export_memory(handle NULL)");
  void* base = nullptr;
  c.expect_status(e.open_memory(0, nullptr, &base), FLAGOS_ERROR_INVALID_ARGUMENT, "open_memory(handle NULL)");
}

bool same(const flagos_ipc_handle_t& a, const flagos_ipc_handle_t& b) {
  return std::memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0 && a.size == b.size && a.fd == b.fd;
}

// A handle names the whole allocation: asking twice, or for a pointer inside
// it, gives the same one, with the pointer's offset.
void export_rules(Ctx& c) {
  const Ipc& e = need_ipc(c);
  const uint64_t n = 3 * 4096 + 100;
  Shareable a(c, e, n);
  uint64_t off1 = 1, off2 = 1, off3 = 0;
  const flagos_ipc_handle_t h1 = exported(c, e, a.p, &off1), h2 = exported(c, e, a.p, &off2);
  c.expect(h1.size >= n, strf("handle size %llu < the %llu bytes allocated", (unsigned long long)h1.size,
                              (unsigned long long)n));
  c.expect(same(h1, h2) && off1 == 0 && off2 == 0,
           "two exports of one allocation gave different handles, or a nonzero offset for its start");
  const flagos_ipc_handle_t h3 = exported(c, e, static_cast<char*>(a.p) + 512, &off3);
  c.expect(same(h1, h3) && off3 == 512,
           strf("a pointer 512 bytes in gave another handle or offset %llu", (unsigned long long)off3));
  flagos_ipc_handle_t h{};
  uint64_t off = 0;
  int local = 0;
  c.expect_status(e.export_memory(0, &local, &h, &off), FLAGOS_ERROR_INVALID_ARGUMENT,
                  "export_memory(host pointer)");
  if (!all_allocations(e)) {
    DevBuf plain(c, 0, 4096);
    c.expect_status(e.export_memory(0, plain.get(), &h, &off), FLAGOS_ERROR_UNSUPPORTED,
                    "export_memory(mem_alloc memory, without FLAGOS_IPC_ALL_ALLOCATIONS)");
  }
}

// Where the plugin opens its own handle: the mapping is the same memory,
// classifies as device memory, and goes with close_memory.
void open_same_memory(Ctx& c) {
  const Ipc& e = need_ipc(c);
  const uint64_t n = 1 << 16;
  Shareable a(c, e, n);
  flagos_ipc_handle_t h = exported(c, e, a.p);
  std::vector<unsigned char> want(n), got(n, 0);
  fill_pattern(want.data(), n, 11);
  c.ok(c.api->memcpy_sync(a.p, want.data(), n, FLAGOS_MEMCPY_HOST_TO_DEVICE), "memcpy_sync H2D");
  const int fd = h.fd >= 0 ? dup(h.fd) : -1;  // what an importer holds: its own copy
  h.fd = fd;
  void* mapped = nullptr;
  flagos_status_t st = e.open_memory(0, &h, &mapped);
  if (fd >= 0) close(fd);
  if (st != FLAGOS_SUCCESS)
    c.skip("the plugin does not open its own handles in the exporting process (allowed): " + c.last_error());
  c.require(mapped != nullptr, "open_memory succeeded without a pointer");
  int32_t kind = -1, device = -1;
  c.ok(c.api->pointer_get_attributes(mapped, &kind, &device), "pointer_get_attributes");
  c.expect(kind == FLAGOS_POINTER_DEVICE && device == 0, "an opened mapping is not device memory of device 0");
  c.ok(c.api->memcpy_sync(got.data(), mapped, n, FLAGOS_MEMCPY_DEVICE_TO_HOST), "memcpy_sync D2H (mapping)");
  c.expect(compare_bytes(got.data(), want.data(), n).empty(), "the mapping does not hold the exporter's bytes");
  c.ok(c.api->memcpy_sync(mapped, want.data() + 1, n - 1, FLAGOS_MEMCPY_HOST_TO_DEVICE), "memcpy_sync H2D (mapping)");
  c.ok(c.api->memcpy_sync(got.data(), a.p, n - 1, FLAGOS_MEMCPY_DEVICE_TO_HOST), "memcpy_sync D2H");
  c.expect(compare_bytes(got.data(), want.data() + 1, n - 1).empty(), "a write through the mapping is not seen by the exporter");
  c.expect_status(c.api->mem_free(0, mapped), FLAGOS_ERROR_INVALID_ARGUMENT, "mem_free(opened mapping)");
  c.ok(e.close_memory(0, mapped), "close_memory");
  c.expect_status(e.close_memory(0, mapped), FLAGOS_ERROR_INVALID_ARGUMENT, "close_memory twice");
}

void bad_handles(Ctx& c) {
  const Ipc& e = need_ipc(c);
  Shareable a(c, e, 4096);
  (void)exported(c, e, a.p);  // skips where the runtime has no IPC
  c.expect_status(e.close_memory(0, a.p), FLAGOS_ERROR_INVALID_ARGUMENT, "close_memory(exporter's own pointer)");
  if (!all_allocations(e)) {  // a CUDA runtime's answer to made-up bytes is its own
    flagos_ipc_handle_t junk{};
    std::memset(junk.bytes, 0x5a, sizeof junk.bytes);
    junk.size = 4096;
    junk.fd = -1;
    void* base = nullptr;
    c.expect_status(e.open_memory(0, &junk, &base), FLAGOS_ERROR_INVALID_ARGUMENT, "open_memory(bytes no export made)");
  }
}

}  // namespace

Group ipc_group() {
  Group g("ipc", "FLAGOS_EXTENSION_IPC: exportable allocations, stable handles, mappings, argument errors");
  g.add("extension-table", extension_table)
      .add("export-rules", export_rules)
      .add("open-same-memory", open_same_memory)
      .add("bad-handles", bad_handles);
  return g;
}

}  // namespace conformance
