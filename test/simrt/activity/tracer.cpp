#include "tracer.h"

#include "clock.h"
#include "correlation.h"
#include "records.h"

namespace simrt::activity {
namespace {

uint8_t memory_kind(Span::Kind k) {
  return k == Span::Device ? kMemoryDevice : k == Span::Pinned ? kMemoryPinned : kMemoryPageable;
}

uint8_t copy_kind(const OpDesc& op) {
  bool from_dev = op.src == Span::Device, to_dev = op.dst == Span::Device;
  if (from_dev && to_dev) return op.src_device == op.dst_device ? kCopyDtoD : kCopyPtoP;
  return from_dev ? kCopyDtoH : to_dev ? kCopyHtoD : kCopyHtoH;
}

// The fields every stream activity shares, known at enqueue.
template <class R>
R start_record(const OpDesc& op, uint32_t correlation) {
  R r;
  r.bytes = op.bytes;
  r.device_id = static_cast<uint32_t>(op.stream->device);
  r.context_id = static_cast<uint32_t>(op.stream->device) + 1;  // the device's primary context
  r.stream_id = op.stream->id;
  r.correlation_id = correlation;
  return r;
}

// The op, then its record stamped with the times it ran.
template <class R>
std::function<void()> timed(Buffers& out, R r, std::function<void()> fn) {
  return [&out, r, fn = std::move(fn)]() mutable {
    r.start = now();
    fn();
    r.end = now();
    out.write(&r, sizeof r);
  };
}

}  // namespace

Tracer& Tracer::get() {
  static Tracer* t = new Tracer;
  return *t;
}

void Tracer::enable(const char* key, int kind, bool on) {
  if (on) {
    enabled_.fetch_or(uint64_t{1} << kind);
    std::call_once(observing_, [&] { set_op_observer(key, this); });
  } else {
    enabled_.fetch_and(~(uint64_t{1} << kind));
  }
}

std::function<void()> Tracer::enqueued(const OpDesc& op, std::function<void()> fn) {
  // Kinds as enabled now, at enqueue: a later disable does not drop the record.
  const int kind = op.kind == OpDesc::Copy ? kKindMemcpy : kKindMemset;
  // External correlation records precede an API record (cupti_activity.h,
  // cuptiActivityPushExternalCorrelationId): none unless the runtime's or the
  // driver's API records are on too. The API records themselves are not written.
  const bool activity = enabled(kind),
             external = enabled(kKindExternalCorrelation) && (enabled(kKindRuntime) || enabled(kKindDriver));
  if (!activity && !external) return fn;
  const uint32_t correlation = next_correlation_id();
  // CUPTI writes these ahead of the record they correlate, one per kind
  // whose stack on the calling thread is not empty, with its innermost id.
  for (int k = kExternalKindFirst; external && k < kExternalKindCount; ++k) {
    ExternalCorrelationRecord x;
    if (!innermost_external_id(k, &x.external_id)) continue;
    x.external_kind = static_cast<uint32_t>(k);
    x.correlation_id = correlation;
    buffers_.write(&x, sizeof x);
  }
  if (!activity) return fn;
  if (op.kind == OpDesc::Set) {
    auto r = start_record<MemsetRecord>(op, correlation);
    r.value = static_cast<uint32_t>(op.value);
    r.flags = op.async ? kFlagAsync : 0;
    r.memory_kind = kMemoryDevice;
    return timed(buffers_, r, std::move(fn));
  }
  auto r = start_record<MemcpyRecord>(op, correlation);
  r.copy_kind = copy_kind(op);
  r.src_kind = memory_kind(op.src);
  r.dst_kind = memory_kind(op.dst);
  r.flags = op.async ? kFlagAsync : 0;
  return timed(buffers_, r, std::move(fn));
}

}  // namespace simrt::activity
