// libFuzzer target: the env registry's parsers (core/runtime/env) and the
// routing overrides read from the environment (FLAGOS_OP_<op>,
// FLAGOS_FORCE_BACKEND).
//
// Input: records separated by NUL bytes (no environment value holds one).
// A record's first byte picks a declared variable (or, one value past them,
// a FLAGOS_OP_ name: the record up to its first '=' is the name's suffix);
// the rest is the value. Each input sets its records, reads every declared
// variable through its typed getter, validates the runtime environment and
// resolves the overrides, then unsets them again. Rules: every rejection is
// one "[flagos] " line; typed values keep their contracts (finite floats,
// trimmed non-empty list items); nothing throws.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "diag/log.h"
#include "env/registry.h"
#include "error.h"
#include "fuzz_support.h"
#include "routing/table.h"

namespace env = flagos::env;
using flagos::fuzz::violation;

namespace {

void read_all() {
  for (const env::Variable& var : env::variables()) {
    const std::string name(var.name);
    switch (var.type) {
      case env::Type::Bool: env::get_bool(name); break;
      case env::Type::Int: env::get_int_opt(name); break;
      case env::Type::Float:
        if (auto v = env::get_float_opt(name); v && !std::isfinite(*v)) violation("a float is finite", name);
        break;
      case env::Type::List:
        for (const std::string& item : env::get_list(name))
          if (item.empty() || item.find(',') != std::string::npos || std::isspace(static_cast<unsigned char>(item.front())) ||
              std::isspace(static_cast<unsigned char>(item.back())))
            violation("a list item is trimmed, non-empty and comma-free", name + ": '" + item + "'");
        break;
      case env::Type::Enum: {
        const std::string v = env::get_string(name);
        const std::string choices = "," + std::string(var.choices) + ",";
        if (!v.empty() && choices.find("," + v + ",") == std::string::npos)
          violation("an enum is one of its choices or its default", name + "=" + v);
        break;
      }
      case env::Type::Path:
      case env::Type::String: env::get_string(name); break;
    }
  }
  env::validate_runtime_environment();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<env::Variable>& vars = env::variables();
  std::vector<std::string> names;
  const std::string input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\0', start);
    if (end == std::string::npos) end = input.size();
    const std::string record = input.substr(start, end - start);
    start = end + 1;
    if (record.empty()) continue;
    const size_t pick = static_cast<unsigned char>(record[0]) % (vars.size() + 1);
    std::string name, value;
    if (pick < vars.size()) {
      name = std::string(vars[pick].name);
      value = record.substr(1);
    } else {
      const size_t eq = record.find('=', 1);
      name = "FLAGOS_OP_" + record.substr(1, eq == std::string::npos ? std::string::npos : eq - 1);
      value = eq == std::string::npos ? "" : record.substr(eq + 1);
    }
    if (::setenv(name.c_str(), value.c_str(), 1) == 0) names.push_back(name);
  }

  std::string log;
  flagos::diag::capture_for_testing(&log);
  flagos::diag::forget_once_for_testing();
  // A declared variable's read never throws, whatever its value; a bad
  // override is reported and ignored: any exception here is a finding.
  read_all();
  flagos::routing::Conf conf;
  conf.path = "/fuzz/env.toml";
  conf.default_kind = flagos::routing::RouteKind::CpuFallback;
  flagos::fuzz::check_resolve(conf, flagos::routing::overrides_from_env());
  flagos::diag::capture_for_testing(nullptr);
  flagos::fuzz::check_log(log);
  for (const std::string& name : names) ::unsetenv(name.c_str());
  return 0;
}
