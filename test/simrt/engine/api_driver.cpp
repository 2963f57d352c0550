// The driver library's calls (libcuda, libmusa). Before cuInit or the first
// runtime call they answer NOT_INITIALIZED, so a plugin can ask "did someone
// initialise the runtime here?" without initialising it.
#include "api.h"
#include "call.h"

namespace simrt {

int driver_init(const Vendor& v, const char* sym, unsigned flags) {
  Call c(v, sym, Api::DriverInit);
  if (c.blocked()) return c.result();
  if (flags != 0) return c.fail(Err::InvalidValue);  // cuInit: flags must be 0
  c.rt.initialised = true;
  return c.ok();
}

int driver_device_get_count(const Vendor& v, const char* sym, int* count) {
  Call c(v, sym, Api::Driver);
  if (c.blocked()) return c.result();
  if (count == nullptr) return c.fail(Err::InvalidValue);
  *count = c.rt.device_count();  // 0 devices is success for the driver
  return c.ok();
}

int driver_device_get(const Vendor& v, const char* sym, int* device, int ordinal) {
  Call c(v, sym, Api::Driver);
  if (c.blocked()) return c.result();
  if (device == nullptr) return c.fail(Err::InvalidValue);
  int err;
  if (c.bad_device(ordinal, &err)) return err;
  *device = ordinal;  // CUdevice is the ordinal
  return c.ok();
}

int driver_primary_ctx_get_state(const Vendor& v, const char* sym, int device, unsigned* flags, int* active) {
  Call c(v, sym, Api::Driver);
  if (c.blocked()) return c.result();
  if (flags == nullptr || active == nullptr) return c.fail(Err::InvalidValue);
  int err;
  if (c.bad_device(device, &err)) return err;
  *flags = 0;
  *active = c.rt.device(device).ctx_active ? 1 : 0;
  return c.ok();
}

int driver_get_error_name(const Vendor& v, int code, const char** name) {
  int invalid = v.errors[static_cast<int>(Err::InvalidValue)].code;
  if (name == nullptr) return invalid;
  Err e = err_of(v, code);
  *name = e == Err::Count ? nullptr : v.errors[static_cast<int>(e)].name;
  return *name == nullptr ? invalid : 0;
}

}  // namespace simrt
