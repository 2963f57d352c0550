// Shared by the fuzz targets: the one-line rule every diagnostic keeps, and a
// catalog that lets routing::resolve run without torch.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "routing/table.h"

namespace flagos::fuzz {

// Stops the run with the offending text: libFuzzer saves the input.
[[noreturn]] inline void violation(const char* rule, const std::string& text) {
  std::fprintf(stderr, "fuzz rule broken: %s\n---\n%s\n---\n", rule, text.c_str());
  std::abort();
}

// A diagnostic is one printable line: no line break or other control byte a
// terminal would act on (bytes >= 0x80 pass: paths may be UTF-8).
inline bool one_line(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

// What flagos::Error::what() must be: "[flagos] " and one line.
inline void check_error(const std::string& what) {
  if (what.rfind("[flagos] ", 0) != 0) violation("an error starts with \"[flagos] \"", what);
  if (!one_line(what)) violation("an error is one line", what);
}

// Every line of captured diagnostics starts with "[flagos] " and is one line.
inline void check_log(const std::string& log) {
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) violation("a diagnostic ends its line", log.substr(start));
    const std::string line = log.substr(start, end - start);
    if (line.rfind("[flagos] ", 0) != 0) violation("each diagnostic line starts with \"[flagos] \"", log);
    if (!one_line(line)) violation("a diagnostic is one line", line);
    start = end + 1;
  }
}

// Every well-formed name is an operator, except those starting with "x_"
// (so both outcomes are reached); every kind implements every operator, and
// every kind is built except cuda and flaggems_cpp.
class StubCatalog : public routing::Catalog {
 public:
  std::string unroutable_reason(const std::string& op) const override {
    return !routing::valid_op_name(op) || op.rfind("x_", 0) == 0 ? "no such operator in torch 2.13.0" : "";
  }
  bool implements(routing::RouteKind, const std::string&) const override { return true; }
  std::string unavailable_reason(routing::RouteKind kind) const override {
    if (kind == routing::RouteKind::CudaBoxing) return "the plugin's memory is not CUDA-ABI";
    if (kind == routing::RouteKind::FlagGemsCpp) return "this build did not compile it";
    return "";
  }
  std::string torch_version() const override { return "2.13.0+cpu"; }
};

// Resolves `conf` against the stub; errors and notes keep the one-line rule.
inline void check_resolve(const routing::Conf& conf, const routing::Overrides& overrides) {
  StubCatalog catalog;
  try {
    const routing::Resolution res = routing::resolve(conf, overrides, catalog);
    for (const std::string& note : res.notes)
      if (!one_line(note)) violation("a resolution note is one line", note);
    for (const std::string& detail : res.details)
      if (!one_line(detail)) violation("a resolution detail is one line", detail);
    for (const routing::Route& r : res.routes)
      if (!one_line(r.error)) violation("an unrouted op's error is one line", r.error);
  } catch (const Error& e) {
    check_error(e.what());
  }
}

}  // namespace flagos::fuzz
