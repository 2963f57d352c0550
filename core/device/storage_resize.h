// Growing a flagos storage without touching its bytes from the host: new
// block from the flagos allocator, old contents moved by a plugin copy on the
// current stream. Used by resize_, set_ and untyped_storage().resize_().
#pragma once

#include <c10/core/Storage.h>

#include <cstddef>

namespace flagos::device {

void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes);

}  // namespace flagos::device
