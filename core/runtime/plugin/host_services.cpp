#include "plugin/host_services.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "diag/channels.h"
#include "diag/log.h"

namespace flagos::plugin {
namespace {

std::atomic<const WorkspaceMemory*> g_memory{nullptr};

// One per plugin name: the `context` of its table.
struct Context {
  std::string plugin;
  mutable std::atomic<bool> oom_logged{false};
  // Lines held while the plugin is only probed (hold_log).
  mutable std::mutex held_mutex;
  mutable bool holding = false;
  mutable std::vector<std::pair<int32_t, std::string>> held;
};

const Context& context_of(void* context) { return *static_cast<const Context*>(context); }

// A failed memory service says why in the log: the C return code is all the
// plugin gets. Out of memory only the first time per plugin: a kernel may
// answer it by declining, and a loop would repeat the line every call.
flagos_status_t reported(void* context, const char* fn, flagos_status_t status, const std::string& why) {
  if (status == FLAGOS_SUCCESS) return status;
  const Context& c = context_of(context);
  if (status == FLAGOS_ERROR_OUT_OF_MEMORY && c.oom_logged.exchange(true)) return status;
  diag::warn("plugin " + c.plugin + ": host service " + fn + ": " + why +
             (status == FLAGOS_ERROR_OUT_OF_MEMORY ? " (later out-of-memory failures are not logged)" : ""));
  return status;
}

flagos_status_t unsupported(void* context, const char* fn) {
  return reported(context, fn, FLAGOS_ERROR_UNSUPPORTED, "this host lends no device memory");
}

flagos_status_t workspace_alloc(void* context, flagos_device_t device, flagos_stream_t stream, uint64_t bytes,
                                void** ptr) {
  const WorkspaceMemory* memory = g_memory.load(std::memory_order_acquire);
  if (!memory) return unsupported(context, "workspace_alloc");
  if (!ptr) return reported(context, "workspace_alloc", FLAGOS_ERROR_INVALID_ARGUMENT, "ptr is NULL");
  std::string why;
  return reported(context, "workspace_alloc", memory->allocate(device, stream, bytes, ptr, &why), why);
}

flagos_status_t workspace_free(void* context, void* ptr) {
  const WorkspaceMemory* memory = g_memory.load(std::memory_order_acquire);
  if (!memory) return unsupported(context, "workspace_free");
  if (!ptr) return FLAGOS_SUCCESS;
  std::string why;
  return reported(context, "workspace_free", memory->free(ptr, &why), why);
}

flagos_status_t record_stream(void* context, void* ptr, flagos_stream_t stream) {
  const WorkspaceMemory* memory = g_memory.load(std::memory_order_acquire);
  if (!memory) return unsupported(context, "record_stream");
  std::string why;
  return reported(context, "record_stream", memory->record_stream(ptr, stream, &why), why);
}

void say(int32_t level, const std::string& line) {
  if (level >= FLAGOS_LOG_LEVEL_ERROR) {
    diag::error(line);
  } else if (level == FLAGOS_LOG_LEVEL_WARNING) {
    diag::warn(line);
  } else {
    diag::info(line);
  }
}

void log(void* context, int32_t level, const char* message) {
  if (!message || !*message) return;
  std::string_view text(message);
  text = text.substr(0, text.find('\n'));
  const Context& c = context_of(context);
  std::string line = "plugin " + c.plugin + ": " + diag::one_line(text);
  {
    std::lock_guard<std::mutex> hold(c.held_mutex);
    if (c.holding) {
      c.held.emplace_back(level, std::move(line));
      return;
    }
  }
  say(level, line);
}

const Context& context_named(const std::string& plugin_name) {
  return context_of(host_services(plugin_name)->context);
}

}  // namespace

void hold_log(const std::string& plugin_name) {
  const Context& c = context_named(plugin_name);
  std::lock_guard<std::mutex> hold(c.held_mutex);
  c.holding = true;
}

void release_log(const std::string& plugin_name, bool selected) {
  const Context& c = context_named(plugin_name);
  std::vector<std::pair<int32_t, std::string>> lines;
  {
    std::lock_guard<std::mutex> hold(c.held_mutex);
    c.holding = false;
    lines.swap(c.held);
  }
  for (const auto& [level, line] : lines) {
    if (selected) {
      say(level, line);
    } else if (diag::channel_enabled("plugin")) {
      diag::info(line + " (while probed; not selected)");
    }
  }
}

void lend_workspace_memory(const WorkspaceMemory* memory) {
  g_memory.store(memory, std::memory_order_release);
}

const flagos_host_services_t* host_services(const std::string& plugin_name) {
  static std::mutex lock;
  // Process lifetime: plugins keep the tables.
  static auto* tables = new std::map<std::string, std::unique_ptr<flagos_host_services_t>>;
  std::lock_guard<std::mutex> hold(lock);
  auto& table = (*tables)[plugin_name];
  if (!table) {
    table = std::make_unique<flagos_host_services_t>();
    table->struct_size = sizeof(flagos_host_services_t);
    table->context = new Context{plugin_name};  // lives as long as the table
    // A host that lends no memory (a program on the torch-free runtime
    // alone) offers no memory functions: the plugin keeps its own scratch.
    if (g_memory.load(std::memory_order_acquire)) {
      table->workspace_alloc = &workspace_alloc;
      table->workspace_free = &workspace_free;
      table->record_stream = &record_stream;
    }
    table->log = &log;
  }
  return table.get();
}

}  // namespace flagos::plugin
