// Device queries, the current device, peers and device-wide sync.
#include <cstdio>

#include "api.h"
#include "call.h"
#include "ordering.h"

namespace simrt {

int get_device_count(const Vendor& v, const char* sym, int* count) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (count == nullptr) return c.rule(Err::InvalidValue, "count is NULL");
  *count = c.rt.device_count();
  return *count == 0 ? c.fail(Err::NoDevice) : c.ok();
}

int set_device(const Vendor& v, const char* sym, int device) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  int err;
  if (c.bad_device(device, &err)) return err;
  c.ts.device = device;
  c.touch(device);  // CUDA 12: cudaSetDevice initialises the primary context
  return c.ok();
}

int get_device(const Vendor& v, const char* sym, int* device) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (device == nullptr) return c.rule(Err::InvalidValue, "device is NULL");
  if (c.rt.device_count() == 0) return c.fail(Err::NoDevice);
  *device = c.current_device();
  return c.ok();
}

int device_get_attribute(const Vendor& v, const char* sym, int* value, int attr, int device) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (value == nullptr) return c.rule(Err::InvalidValue, "value is NULL");
  int err;
  if (c.bad_device(device, &err)) return err;
  const AttributeIds& a = v.attr;
  if (attr == a.cc_major) *value = v.cc_major;
  else if (attr == a.cc_minor) *value = v.cc_minor;
  else if (attr == a.multiprocessor_count) *value = v.multiprocessor_count;
  else if (attr == a.pci_bus_id) *value = 0x10 + device;  // distinct, stable per ordinal
  else if (attr == a.pci_device_id) *value = 0;
  else if (attr == a.pci_domain_id) *value = 0;
  else return c.rule(Err::InvalidValue, "attribute %d is not one the simulator answers", attr);
  return c.ok();
}

int device_get_stream_priority_range(const Vendor& v, const char* sym, int* least, int* greatest) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (least != nullptr) *least = v.priority_least;  // either may be NULL (CUDA)
  if (greatest != nullptr) *greatest = v.priority_greatest;
  return c.ok();
}

int device_can_access_peer(const Vendor& v, const char* sym, int* can, int device, int peer) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (can == nullptr) return c.rule(Err::InvalidValue, "canAccessPeer is NULL");
  int err;
  if (c.bad_device(device, &err) || c.bad_device(peer, &err)) return err;
  *can = device != peer;  // CUDA answers 0 for a device and itself
  return c.ok();
}

int device_enable_peer_access(const Vendor& v, const char* sym, int peer, unsigned flags) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (flags != 0) return c.rule(Err::InvalidValue, "flags must be 0, got %u", flags);
  int err, d = c.current_device();
  if (c.bad_device(d, &err) || c.bad_device(peer, &err)) return err;
  if (peer == d) return c.rule(Err::InvalidDevice, "device %d cannot enable peer access to itself", d);
  c.touch(d);
  uint64_t bit = uint64_t{1} << peer;
  if (c.rt.device(d).peers.fetch_or(bit) & bit) return c.fail(Err::PeerAccessAlreadyEnabled);
  return c.ok();
}

int device_synchronize(const Vendor& v, const char* sym) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  int err, d = c.current_device();
  if (c.bad_device(d, &err)) return err;
  c.touch(d);
  c.rt.sync_device(d);
  return c.ok();
}

int mem_get_info(const Vendor& v, const char* sym, size_t* free_bytes, size_t* total_bytes) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (free_bytes == nullptr || total_bytes == nullptr) return c.rule(Err::InvalidValue, "free or total is NULL");
  int err, d = c.current_device();
  if (c.bad_device(d, &err)) return err;
  c.touch(d);
  *total_bytes = c.rt.memory().cap();
  *free_bytes = *total_bytes - c.rt.memory().used(d);
  return c.ok();
}

int device_get_name(const Vendor& v, const char* sym, bool driver, char* name, int len, int device) {
  Call c(v, sym, driver ? Api::Driver : Api::Runtime);
  if (c.blocked()) return c.result();
  if (name == nullptr || len <= 0) return c.rule(Err::InvalidValue, "name is NULL or len <= 0");
  int err;
  if (c.bad_device(device, &err)) return err;
  std::snprintf(name, static_cast<size_t>(len), "%s", device_name(v).c_str());  // truncates, as CUDA does
  return c.ok();
}

int device_total_mem(const Vendor& v, const char* sym, bool driver, size_t* bytes, int device) {
  Call c(v, sym, driver ? Api::Driver : Api::Runtime);
  if (c.blocked()) return c.result();
  if (bytes == nullptr) return c.rule(Err::InvalidValue, "bytes is NULL");
  int err;
  if (c.bad_device(device, &err)) return err;
  *bytes = c.rt.memory().cap();
  return c.ok();
}

}  // namespace simrt
