#include "diag/log.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_set>

namespace flagos::diag {
namespace {

// Created on first use and never destroyed: diagnostics may be emitted from
// static destructors or atexit handlers of other libraries.
struct State {
  std::mutex mutex;
  std::shared_ptr<spdlog::logger> logger;
  std::unordered_set<std::string> seen;
  std::ostringstream* capture_stream = nullptr;
  std::string* capture_sink = nullptr;
};

State& state() {
  static State* s = [] {
    auto* st = new State;
    // Not registered globally: a host application's spdlog setup stays its own.
    st->logger = std::make_shared<spdlog::logger>(
        "flagos", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    st->logger->set_pattern("[flagos] %v");
    st->logger->set_level(spdlog::level::info);
    return st;
  }();
  return *s;
}

void emit(spdlog::level::level_enum level, std::string_view message) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.logger->log(level, "{}", message);
  s.logger->flush();
  if (s.capture_sink) *s.capture_sink = s.capture_stream->str();
}

}  // namespace

void info(std::string_view message) { emit(spdlog::level::info, message); }
void warn(std::string_view message) { emit(spdlog::level::warn, message); }
void error(std::string_view message) { emit(spdlog::level::err, message); }

bool warn_once(std::string_view key, std::string_view message) {
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.seen.emplace(key).second) return false;
  }
  warn(message);
  return true;
}

std::string printable(std::string_view text, size_t max) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  return text.size() > max ? out + "..." : out;
}

std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

void forget_once_for_testing() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.seen.clear();
}

void capture_for_testing(std::string* sink) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  delete s.capture_stream;
  s.capture_stream = nullptr;
  s.capture_sink = sink;
  if (sink) {
    s.capture_stream = new std::ostringstream;
    auto ostream_sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*s.capture_stream);
    s.logger->sinks() = {ostream_sink};
  } else {
    s.logger->sinks() = {std::make_shared<spdlog::sinks::stderr_sink_mt>()};
  }
  s.logger->set_pattern("[flagos] %v");
}

}  // namespace flagos::diag
