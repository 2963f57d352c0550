#include "ordering.h"

#include "config.h"

namespace simrt {

std::shared_ptr<Stream> resolve_stream(Call& c, void* handle, int* err) {
  if (handle == nullptr || handle == reinterpret_cast<void*>(0x1)) {
    int d = c.current_device();
    if (c.bad_device(d, err)) return nullptr;
    c.touch(d);
    return c.rt.legacy_stream(d);
  }
  std::shared_ptr<Stream> s = c.rt.find_stream(handle);
  if (!s) {
    *err = c.rule(Err::InvalidResourceHandle, "stream %p is not a live stream of this runtime", handle);
    return nullptr;
  }
  c.touch(s->device);
  return s;
}

uint64_t enqueue_ordered(Runtime& rt, const std::shared_ptr<Stream>& s, std::function<void()> fn,
                         std::vector<Dep> deps, std::shared_ptr<Point> mark) {
  if (!s->non_blocking) {
    Device& dev = rt.device(s->device);
    std::lock_guard<std::mutex> lock(dev.mu);
    if (s->legacy) {
      for (auto& w : dev.streams) {
        auto other = w.lock();
        if (other && other != s && !other->non_blocking && !other->idle())
          deps.push_back(Dep{other, other->last()});
      }
    } else if (dev.legacy && !dev.legacy->idle()) {
      deps.push_back(Dep{dev.legacy, dev.legacy->last()});
    }
  }
  return s->enqueue(std::move(fn), std::move(deps), std::move(mark));
}

std::string device_name(const Vendor& v) {
  if (!config().name.empty()) return config().name;
  return std::string("Simulated ") + v.display + " Device";
}

}  // namespace simrt
