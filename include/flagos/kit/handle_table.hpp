// flagos/kit/handle_table.hpp — the live handles of one kind (streams,
// events). A handle is the address of its object; every call looks it up
// first, so a NULL, foreign or destroyed handle is INVALID_HANDLE instead of
// a crash (as long as the address was not reused).
//
// Ownership: the table holds a shared_ptr per live handle; find() hands out
// another, so an object outlives a concurrent destroy while a call uses it.
// Threading: every member locks mutex() itself (not recursive: a plugin that
// needs "look up, then add" as one step keeps a lock of its own around both);
// hold it across fork() (ForkGuard).
// Errors: find/take return INVALID_HANDLE with a message naming `fn`.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>

#include "flagos/kit/last_error.hpp"

namespace flagos::kit {

template <class Handle, class Object>
class HandleTable {
 public:
  // `what` names the kind in messages ("stream", "event"); static storage.
  explicit HandleTable(const char* what) : what_(what) {}
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  Handle add(std::shared_ptr<Object> object) {
    Handle h = reinterpret_cast<Handle>(object.get());
    std::lock_guard<std::mutex> lock(mutex_);
    live_[h] = std::move(object);
    return h;
  }

  flagos_status_t find(const char* fn, Handle h, std::shared_ptr<Object>* out) const {
    if (h == nullptr) return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %s is NULL", fn, what_);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(h);
    if (it == live_.end()) return unknown(fn, h);
    *out = it->second;
    return FLAGOS_SUCCESS;
  }

  // Unregisters `h`. `keep(const Object&)` may refuse with a status of its
  // own (e.g. a default stream that must never be destroyed).
  template <class Keep>
  flagos_status_t take(const char* fn, Handle h, std::shared_ptr<Object>* out, Keep&& keep) {
    if (h == nullptr) return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %s is NULL", fn, what_);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(h);
    if (it == live_.end()) return unknown(fn, h);
    flagos_status_t st = keep(static_cast<const Object&>(*it->second));
    if (st != FLAGOS_SUCCESS) return st;
    *out = std::move(it->second);
    live_.erase(it);
    return FLAGOS_SUCCESS;
  }

  flagos_status_t take(const char* fn, Handle h, std::shared_ptr<Object>* out) {
    return take(fn, h, out, [](const Object&) { return FLAGOS_SUCCESS; });
  }

  // Calls f(const std::shared_ptr<Object>&) for every live object, locked.
  template <class F>
  void for_each(F&& f) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& entry : live_) f(entry.second);
  }

  std::mutex& mutex() const { return mutex_; }

 private:
  flagos_status_t unknown(const char* fn, Handle h) const {
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %p is not a live %s of this plugin", fn,
                static_cast<void*>(h), what_);
  }

  const char* what_;
  mutable std::mutex mutex_;
  std::unordered_map<Handle, std::shared_ptr<Object>> live_;
};

}  // namespace flagos::kit
