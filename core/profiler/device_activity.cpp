// torch.profiler's flagos device rows: a kineto child profiler over the
// plugin's profiler extension (flagos/ext/profiler.h). Registered with kineto
// when this library loads; kineto asks it for a session only when a profile
// with ProfilerActivity.PrivateUse1 starts, and only then forwards each
// operator's correlation id here. With no profile active nothing in this file
// runs, so the dispatch path pays nothing (docs/profiler.md).
#include "profiler/device_activity.h"

#include <c10/core/Allocator.h>
#include <dlfcn.h>
#include <time.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

// kineto's headers: GenericTraceActivity formats its metadata with fmt, which
// libtorch does not export, hence FMT_HEADER_ONLY for this file (CMake).
#include <GenericTraceActivity.h>
#include <IActivityProfiler.h>
#include <libkineto.h>

#include "device/runtime.h"
#include "device/streams.h"
#include "diag/log.h"
#include "env/registry.h"

namespace flagos::profiler {

std::atomic<bool> detail::recording{false};

void report_memory(void* ptr, int64_t bytes, size_t allocated, size_t reserved,
                   c10::Device device) {
  if (c10::memoryProfilingEnabled())
    c10::reportMemoryUsageToProfiler(ptr, bytes, allocated, reserved, device);
}

namespace {

using libkineto::ActivityType;

// FLAGOS_TRACE: one [flagos] line per step of each profiling session.
bool trace_on() {
  static const bool on = env::get_bool("FLAGOS_TRACE");
  return on;
}
void trace(const std::string& message) {
  if (trace_on()) diag::info("profiler: " + message);
}

int64_t read_clock(clockid_t id) {
  timespec t{};
  clock_gettime(id, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The active plugin's profiler extension, or null (with the reason) when no
// plugin is active or it has none of the size this core needs.
const flagos_profiler_ext_t* extension(std::string* why) {
  try {
    const auto& plugin = device::active_plugin();
    const auto* ext = reinterpret_cast<const flagos_profiler_ext_t*>(
        plugin.find_extension(FLAGOS_EXTENSION_PROFILER));
    if (ext == nullptr) {
      *why = "plugin '" + plugin.name() + "' has no profiler extension (FLAGOS_EXTENSION_PROFILER)";
      return nullptr;
    }
    if (ext->base.struct_size < FLAGOS_PROFILER_EXT_SIZE_1_4) {
      *why = "plugin '" + plugin.name() + "' has a profiler extension too small for ABI 1.4";
      return nullptr;
    }
    return ext;
  } catch (const std::exception& e) {
    *why = e.what();
    return nullptr;
  }
}

// A CUDA build of torch links kineto with CUPTI, the process's one client of
// the activity API; on a CUDA-ABI plugin its trace already has the device
// rows, and the plugin's CUPTI-based tracer must not be a second client.
bool torch_traces_plugin_kernels() {
  if (dlopen("libtorch_cuda.so", RTLD_NOW | RTLD_NOLOAD) == nullptr) return false;
  try {
    return device::device_count() > 0 && device::has_capability(0, FLAGOS_CAP_CUDA_ABI);
  } catch (const std::exception&) {
    return false;
  }
}

std::string status_text(flagos_status_t st) {
  std::string text = flagos_status_name(st);
  try {
    const auto& plugin = device::active_plugin();
    if (const char* m = plugin.api().last_error_message(); m != nullptr && *m != '\0')
      text += std::string(": ") + m;
  } catch (...) {
  }
  return text;
}

const char* copy_kind_name(int32_t kind) {
  switch (kind) {
    case FLAGOS_MEMCPY_HOST_TO_HOST: return "HtoH";
    case FLAGOS_MEMCPY_HOST_TO_DEVICE: return "HtoD";
    case FLAGOS_MEMCPY_DEVICE_TO_HOST: return "DtoH";
    case FLAGOS_MEMCPY_DEVICE_TO_DEVICE: return "DtoD";
    default: return "unknown";
  }
}

// Plugin clock -> the clock of the profile. The plugin's clock runs at
// CLOCK_MONOTONIC's rate (profiler.h, "Clock"); kineto's timestamps are
// CLOCK_MONOTONIC or CLOCK_REALTIME depending on the torch build, which the
// capture window's start tells apart (they differ by decades).
struct ClockMap {
  int64_t plugin_minus_monotonic = 0;
  int64_t realtime_minus_monotonic = 0;
  bool realtime = false;

  void sample(const flagos_profiler_ext_t& ext) {
    int64_t plugin = 0;
    const int64_t before = read_clock(CLOCK_MONOTONIC);
    const bool ok = ext.clock_now(&plugin) == FLAGOS_SUCCESS;
    const int64_t after = read_clock(CLOCK_MONOTONIC);
    plugin_minus_monotonic = ok ? plugin - (before + (after - before) / 2) : 0;
    realtime_minus_monotonic = read_clock(CLOCK_REALTIME) - read_clock(CLOCK_MONOTONIC);
  }
  void choose(int64_t window_start) {
    const int64_t mono = read_clock(CLOCK_MONOTONIC);
    const int64_t real = read_clock(CLOCK_REALTIME);
    realtime = std::llabs(window_start - real) < std::llabs(window_start - mono);
  }
  int64_t to_profile(int64_t plugin_ns) const {
    return plugin_ns - plugin_minus_monotonic + (realtime ? realtime_minus_monotonic : 0);
  }
};

// A profile's device side. Without a plugin profiler (ext_ null) it only
// marks the profile as running, so that flagos allocations are still reported.
class Session final : public libkineto::IActivityProfilerSession {
 public:
  Session(const flagos_profiler_ext_t* ext, flagos_profiler_t handle)
      : ext_(ext), handle_(handle) {}
  ~Session() override {
    if (started_) detail::recording.store(false, std::memory_order_relaxed);
    if (ext_ == nullptr) return;
    if (started_) ext_->profiler_stop(handle_);
    ext_->profiler_destroy(handle_);
  }

  void start() override {
    if (ext_ == nullptr) {
      started_ = true;
      detail::recording.store(true, std::memory_order_relaxed);
      status_ = libkineto::TraceStatus::RECORDING;
      return;
    }
    clock_.sample(*ext_);
    const flagos_status_t st = ext_->profiler_start(handle_, FLAGOS_PROFILE_STREAM_WORK);
    if (st != FLAGOS_SUCCESS) {
      fail("profiler_start failed: " + status_text(st));
      return;
    }
    started_ = true;
    detail::recording.store(true, std::memory_order_relaxed);
    status_ = libkineto::TraceStatus::RECORDING;
    trace("recording device activity (plugin clock offset " +
          std::to_string(clock_.plugin_minus_monotonic) + " ns from CLOCK_MONOTONIC)");
  }

  void stop() override {
    if (!started_) return;
    started_ = false;
    detail::recording.store(false, std::memory_order_relaxed);
    status_ = libkineto::TraceStatus::PROCESSING;
    if (ext_ == nullptr) return;
    const flagos_status_t st = ext_->profiler_stop(handle_);
    if (st != FLAGOS_SUCCESS) fail("profiler_stop failed: " + status_text(st));
    status_ = libkineto::TraceStatus::PROCESSING;
    trace("stopped; operator correlation ids: " + std::to_string(pushes_) + " pushed, " +
          std::to_string(pops_) + " popped");
  }

  std::vector<std::string> errors() override { return errors_; }

  // Called by kineto around each operator, on the operator's thread.
  void pushCorrelationId(uint64_t id) override {
    ++pushes_;
    if (ext_ != nullptr && id != 0) ext_->push_correlation(id);
  }
  void popCorrelationId() override {
    ++pops_;
    if (ext_ != nullptr) ext_->pop_correlation(nullptr);
  }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, nullptr, 0, 0);
  }

  void processTrace(libkineto::ActivityLogger& logger,
                    libkineto::getLinkedActivityCallback linked_activity, int64_t start_time,
                    int64_t end_time) override {
    buffer_.span = libkineto::TraceSpan(start_time, end_time, "flagos");
    if (ext_ == nullptr) return;
    if (start_time != 0) clock_.choose(start_time);
    const flagos_activity_record_t* records = nullptr;
    size_t count = 0, stride = 0;
    uint64_t dropped = 0;
    const flagos_status_t st =
        ext_->profiler_collect(handle_, &records, &count, &stride, &dropped);
    if (st != FLAGOS_SUCCESS) {
      fail("profiler_collect failed: " + status_text(st));
      return;
    }
    size_t linked = 0;
    for (size_t i = 0; i < count; ++i) {
      const auto* r = reinterpret_cast<const flagos_activity_record_t*>(
          reinterpret_cast<const char*>(records) + i * stride);
      if (r->struct_size < FLAGOS_ACTIVITY_RECORD_SIZE_1_4) continue;
      linked += add(logger, *r, linked_activity) ? 1 : 0;
    }
    trace("collected " + std::to_string(count) + " device records (" + std::to_string(linked) +
          " tied to an operator, " + std::to_string(dropped) + " dropped), " +
          (clock_.realtime ? "CLOCK_REALTIME" : "CLOCK_MONOTONIC") + " profile clock");
    if (dropped != 0)
      errors_.push_back("[flagos] " + std::to_string(dropped) +
                        " device records did not fit the plugin's buffer");
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    if (resources_.empty()) return nullptr;
    const int64_t device = resources_.begin()->first.first;
    const std::string name = "flagos " + std::to_string(device);
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{device, device, name, name});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (const auto& [key, name] : resources_)
      out.push_back(libkineto::ResourceInfo{key.second, key.second, key.first, name});
    return out;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::make_unique<libkineto::CpuTraceBuffer>(std::move(buffer_));
  }

 private:
  void fail(const std::string& what) {
    errors_.push_back("[flagos] " + what);
    status_ = libkineto::TraceStatus::ERROR;
    trace(what);
  }

  // The row of a record's stream: torch_fl's stream id, or for a stream the
  // core did not create, an id past the core's own.
  int64_t resource_of(const flagos_activity_record_t& r) {
    const c10::StreamId id = device::stream_id_of(r.device, r.stream);
    if (id >= 0) return id;
    auto [it, added] = foreign_.emplace(r.stream, 1000 + static_cast<int64_t>(foreign_.size()));
    return it->second;
  }

  // Appends one record to the trace; whether it is tied to an operator.
  bool add(libkineto::ActivityLogger& logger, const flagos_activity_record_t& r,
           const libkineto::getLinkedActivityCallback& linked_activity) {
    ActivityType type;
    switch (r.kind) {
      case FLAGOS_ACTIVITY_KERNEL: type = ActivityType::CONCURRENT_KERNEL; break;
      case FLAGOS_ACTIVITY_MEMCPY: type = ActivityType::GPU_MEMCPY; break;
      case FLAGOS_ACTIVITY_MEMSET: type = ActivityType::GPU_MEMSET; break;
      default: return false;  // memory and kinds newer than this core
    }
    const int64_t resource = resource_of(r);
    resources_.emplace(std::make_pair(int64_t{r.device}, resource),
                       "stream " + std::to_string(resource));
    buffer_.emplace_activity(buffer_.span, type, r.name != nullptr ? r.name : "(unnamed)");
    libkineto::GenericTraceActivity& a = *buffer_.activities.back();
    a.startTime = clock_.to_profile(r.begin_ns);
    a.endTime = clock_.to_profile(r.end_ns);
    a.id = static_cast<int32_t>(r.correlation_id);
    a.device = r.device;
    a.resource = resource;
    a.addMetadata("device", r.device);
    a.addMetadata("stream", resource);
    a.addMetadata("correlation", r.correlation_id);
    if (type != ActivityType::CONCURRENT_KERNEL) a.addMetadata("bytes", r.bytes);
    if (type == ActivityType::GPU_MEMCPY) a.addMetadataQuoted("kind", copy_kind_name(r.copy_kind));
    // The operator that launched it: its External id in the trace, its
    // kernels and device time in torch's events. No flow arrow: that would
    // need a launch event on the CPU side to start from.
    if (r.correlation_id != 0 && linked_activity)
      a.linked = linked_activity(static_cast<int32_t>(r.correlation_id));
    a.log(logger);
    return a.linked != nullptr;
  }

  const flagos_profiler_ext_t* ext_;
  flagos_profiler_t handle_;
  bool started_ = false;
  uint64_t pushes_ = 0;  // counted for FLAGOS_TRACE; kineto calls both from many threads,
  uint64_t pops_ = 0;    // so the counts are approximate there
  ClockMap clock_;
  libkineto::CpuTraceBuffer buffer_;
  std::map<std::pair<int64_t, int64_t>, std::string> resources_;  // (device, stream) -> name
  std::map<flagos_stream_t, int64_t> foreign_;
  std::vector<std::string> errors_;
};

class DeviceProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return activities_; }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<ActivityType>& activity_types, const libkineto::Config& config) override {
    bool wanted = false;
    for (ActivityType t : activity_types) wanted = wanted || activities_.count(t) != 0;
    if (!wanted) return nullptr;  // a CPU-only profile
    std::string why;
    const flagos_profiler_ext_t* ext = extension(&why);
    if (ext == nullptr) {
      trace("no device activity (flagos allocations only): " + why);
      return std::make_unique<Session>(nullptr, nullptr);
    }
    if (torch_traces_plugin_kernels()) {
      trace("device activity from torch's own CUDA tracer: a CUDA build of torch owns CUPTI, and this "
            "CUDA-ABI plugin's kernels run on CUDA streams it sees; the plugin's tracer stays off");
      return std::make_unique<Session>(nullptr, nullptr);
    }
    flagos_profiler_t handle = nullptr;
    const flagos_status_t st = ext->profiler_create(nullptr, &handle);
    if (st != FLAGOS_SUCCESS) {
      // The plugin's tracer is missing: the profile shows the CPU side and
      // flagos memory only.
      diag::warn_once("profiler_create", "device activity is not profiled: profiler_create failed: " +
                                             status_text(st));
      return std::make_unique<Session>(nullptr, nullptr);
    }
    trace("session configured");
    return std::make_unique<Session>(ext, handle);
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t /*ts_ms*/, int64_t /*duration_ms*/, const std::set<ActivityType>& activity_types,
      const libkineto::Config& config) override {
    return configure(activity_types, config);
  }

 private:
  const std::string name_ = "flagos";
  const std::set<ActivityType> activities_ = {
      ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY, ActivityType::GPU_MEMSET};
};

}  // namespace

void register_with_kineto() {
  libkineto::api().registerProfilerFactory(
      [] { return std::unique_ptr<libkineto::IActivityProfiler>(new DeviceProfiler()); });
}

namespace {
// At load: kineto keeps the factory until its first profile and then asks it
// for a profiler once; no thread, no device and no plugin is touched here.
const bool registered = (register_with_kineto(), true);
}  // namespace

}  // namespace flagos::profiler
