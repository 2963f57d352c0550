// struct-size: the size-prefix rule of abi.h applied to both directions —
// device properties (plugin writes) and host info (plugin reads).
#include <cstring>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

constexpr unsigned char kCanary = 0xA5;
constexpr size_t kSlack = 256;  // canary bytes past the largest size tried

using Props = flagos_device_properties_t;

// Calls get_device_properties(0) on a canary-filled buffer whose struct_size
// says `declared`; returns the status and the buffer.
flagos_status_t query(Ctx& c, size_t declared, std::vector<unsigned char>* buf) {
  buf->assign(sizeof(Props) + kSlack, kCanary);
  std::memcpy(buf->data(), &declared, sizeof declared);
  return c.api->get_device_properties(0, reinterpret_cast<Props*>(buf->data()));
}

// The first byte at or after `from` that is not the canary, or -1.
long first_dirty(const std::vector<unsigned char>& buf, size_t from) {
  for (size_t i = from; i < buf.size(); ++i)
    if (buf[i] != kCanary) return static_cast<long>(i);
  return -1;
}

// Members that fit in `upto` must equal the reference call's. Strings compare
// up to their NUL: bytes after it are unspecified.
void expect_same_prefix(Ctx& c, const std::vector<unsigned char>& buf, size_t upto) {
  Props got;
  std::memcpy(&got, buf.data(), sizeof got);
  const Props& ref = c.props[0];
  std::string diff;
#define FIELD(m)                                                                      \
  if (FLAGOS_STRUCT_SIZE(Props, m) <= upto && std::memcmp(&got.m, &ref.m, sizeof got.m)) \
    diff += " " #m;
#define STRING(m)                                                                     \
  if (FLAGOS_STRUCT_SIZE(Props, m) <= upto && std::strncmp(got.m, ref.m, sizeof got.m)) \
    diff += " " #m;
  STRING(name) STRING(arch) FIELD(uuid) FIELD(pci_domain) FIELD(pci_bus) FIELD(pci_device)
  FIELD(capability_major) FIELD(capability_minor) FIELD(multiprocessor_count)
  FIELD(total_memory) FIELD(alloc_alignment) FIELD(stream_priority_lowest)
  FIELD(stream_priority_highest) FIELD(capabilities) FIELD(interop_device_index)
  FIELD(reserved0)
#undef FIELD
#undef STRING
  c.expect(diff.empty(), "members differ from a full-size call:" + diff);
}

// A plugin newer than the runner knows members past sizeof(Props) and may
// legitimately write them when struct_size allows.
size_t plugin_known_size(Ctx& c) {
  return c.api->abi_minor > FLAGOS_ABI_MINOR ? sizeof(Props) + kSlack : sizeof(Props);
}

void props_exact(Ctx& c) {
  c.need_devices(1);
  std::vector<unsigned char> buf;
  c.ok(query(c, sizeof(Props), &buf), "get_device_properties(sizeof)");
  long dirty = first_dirty(buf, sizeof(Props));
  c.expect(dirty < 0, strf("wrote byte %ld, past struct_size %zu", dirty, sizeof(Props)));
  c.note(strf("struct_size %zu", sizeof(Props)));
}

void props_frozen_1_0(Ctx& c) {
  c.need_devices(1);
  const size_t size = FLAGOS_DEVICE_PROPERTIES_SIZE_1_0;
  std::vector<unsigned char> buf;
  c.ok(query(c, size, &buf), "get_device_properties(1.0 size)");
  long dirty = first_dirty(buf, size);
  c.expect(dirty < 0, strf("wrote byte %ld, past struct_size %zu", dirty, size));
  expect_same_prefix(c, buf, size);
  c.note(strf("struct_size %zu", size));
}

// A newer host: the plugin fills what it knows and leaves the tail alone.
void props_larger(Ctx& c) {
  c.need_devices(1);
  const size_t size = sizeof(Props) + kSlack / 2;
  std::vector<unsigned char> buf;
  c.ok(query(c, size, &buf), "get_device_properties(larger size)");
  long dirty = first_dirty(buf, plugin_known_size(c));
  c.expect(dirty < 0, strf("wrote byte %ld of the unknown tail (knows %zu bytes)", dirty,
                           sizeof(Props)));
  expect_same_prefix(c, buf, sizeof(Props));
  c.note(strf("struct_size %zu, tail intact", size));
}

// Smaller than any released layout: an error or a no-op, never a write past
// struct_size and never a crash.
void props_too_small(Ctx& c) {
  c.need_devices(1);
  std::string seen;
  for (size_t size : {sizeof(size_t), size_t{0}}) {
    std::vector<unsigned char> buf;
    flagos_status_t s = query(c, size, &buf);
    long dirty = first_dirty(buf, sizeof(size_t));
    c.expect(dirty < 0, strf("struct_size %zu: wrote byte %ld", size, dirty));
    seen += strf("%sstruct_size %zu -> %s", seen.empty() ? "" : ", ", size, flagos_status_name(s));
  }
  c.note(seen);
}

// Cut inside the struct, right after total_memory: members that fit are
// written, the rest is untouched.
void props_partial(Ctx& c) {
  c.need_devices(1);
  const size_t size = FLAGOS_STRUCT_SIZE(Props, total_memory);
  std::vector<unsigned char> buf;
  flagos_status_t s = query(c, size, &buf);
  long dirty = first_dirty(buf, size);
  c.expect(dirty < 0, strf("wrote byte %ld, past struct_size %zu", dirty, size));
  if (s == FLAGOS_SUCCESS) expect_same_prefix(c, buf, size);
  c.note(strf("struct_size %zu -> %s", size, flagos_status_name(s)));
}

// A newer core passes a bigger host_info; the tail is garbage to this plugin.
void host_info_larger(Ctx& c) {
  HostInfo big(c.plugin.options(), FLAGOS_ABI_MAJOR, 128, 0xDB);
  const flagos_plugin_api_t* api = nullptr;
  c.ok(c.plugin.entry()(big.get(), &api), "flagos_plugin_get_api(larger host_info)");
  c.expect(api == c.api, "a larger host_info returned a different table");
  c.note(strf("host_info struct_size %zu", big.get()->struct_size));
}

}  // namespace

Group struct_size_group() {
  Group g("struct-size", "size-prefixed structs at exact, frozen, larger and too-small sizes");
  g.uses_device = false;
  g.add("props-exact-size", props_exact)
      .add("props-frozen-1.0-size", props_frozen_1_0)
      .add("props-larger-size-canary", props_larger)
      .add("props-too-small-size", props_too_small)
      .add("props-partial-size", props_partial)
      .add("host-info-larger-size", host_info_larger);
  return g;
}

}  // namespace conformance
