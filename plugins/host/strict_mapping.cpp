#include "strict_mapping.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace flagos_host {

namespace {

bool map_views(int fd, size_t length, StrictMapping* out, int* error) {
  void* device = mmap(nullptr, length, PROT_NONE, MAP_SHARED, fd, 0);
  void* alias = MAP_FAILED;
  if (device != MAP_FAILED) alias = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  *error = errno;
  if (alias == MAP_FAILED) {
    if (device != MAP_FAILED) munmap(device, length);
    return false;
  }
  out->device = device;
  out->alias = alias;
  out->length = length;
  return true;
}

}  // namespace

bool strict_map(size_t length, StrictMapping* out, int* error) {
  int fd = memfd_create("flagos-host-device", MFD_CLOEXEC);
  if (fd < 0) {
    *error = errno;
    return false;
  }
  bool ok = ftruncate(fd, static_cast<off_t>(length)) == 0 ? map_views(fd, length, out, error)
                                                          : (*error = errno, false);
  close(fd);  // the mappings keep the memory alive; no fd per allocation
  return ok;
}

bool strict_map_file(int fd, size_t length, StrictMapping* out, int* error) {
  return map_views(fd, length, out, error);
}

void strict_unmap(const StrictMapping& m) {
  munmap(m.device, m.length);
  munmap(m.alias, m.length);
}

}  // namespace flagos_host
