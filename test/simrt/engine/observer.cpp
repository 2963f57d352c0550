#include "observer.h"

namespace simrt {

void set_op_observer(const char* key, OpObserver* o) { runtime_for_key(key).observer.store(o); }

int stream_id(const char* key, void* handle, uint32_t* id) {
  Runtime& rt = runtime_for_key(key);
  if (rt.poisoned || rt.device_count() == 0) return -2;
  std::shared_ptr<Stream> s;
  if (handle == nullptr || handle == reinterpret_cast<void*>(0x1)) {
    int d = thread_state(rt).device;
    if (d < 0 || d >= rt.device_count()) return -2;
    s = rt.legacy_stream(d);  // created on first use, as by any runtime call
  } else {
    s = rt.find_stream(handle);
  }
  if (!s) return -1;
  *id = s->id;
  return 0;
}

std::function<void()> observed(Runtime& rt, const OpDesc& op, std::function<void()> fn) {
  OpObserver* o = rt.observer.load();
  if (o == nullptr) return fn;
  return o->enqueued(op, std::move(fn));
}

}  // namespace simrt
