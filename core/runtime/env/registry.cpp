#include "env/registry.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "diag/log.h"
#include "error.h"

namespace flagos::env {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string item = trim(text.substr(0, comma));
    if (!item.empty()) items.push_back(std::move(item));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return items;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(sep)) + item;
  return out;
}

const Variable& declared(std::string_view name) {
  const Variable* v = find(name);
  if (!v) throw Error("internal: read of undeclared variable " + std::string(name));
  return *v;
}

const Variable& declared_as(std::string_view name, std::initializer_list<Type> types) {
  const Variable& var = declared(name);
  if (std::find(types.begin(), types.end(), var.type) == types.end())
    throw Error("internal: " + std::string(name) + " is a " + std::string(type_name(var.type)) +
                " variable, read with the wrong getter");
  return var;
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string v = lower(trim(text));
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  return std::nullopt;
}

std::string describe_default(const Variable& var) {
  if (var.default_value.empty()) return "unset";
  if (var.type == Type::Bool) return parse_bool(var.default_value).value_or(false) ? "on" : "off";
  return std::string(var.default_value);
}

void report_bad_value(const Variable& var, const std::string& value, std::string_view expected) {
  diag::warn_once(std::string(var.name) + "=" + value,
                  std::string(var.name) + "='" + diag::printable(value) + "' is not " + std::string(expected) +
                      "; using the default (" + describe_default(var) + ")");
}

template <typename T>
const T* find_in(const std::vector<T>& table, std::string_view name) {
  for (const T& v : table)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

const Variable* find(std::string_view name) { return find_in(variables(), name); }
const Foreign* find_foreign(std::string_view name) { return find_in(foreign(), name); }
const Retired* find_retired(std::string_view name) { return find_in(retired(), name); }

const Family* find_family(std::string_view name) {
  for (const Family& f : families())
    if (name.size() > f.prefix.size() && name.substr(0, f.prefix.size()) == f.prefix) return &f;
  return nullptr;
}

std::optional<std::string> raw(std::string_view name) {
  if (!find(name) && !find_family(name))
    throw Error("internal: read of undeclared variable " + std::string(name));
  const char* value = std::getenv(std::string(name).c_str());
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

bool get_bool(std::string_view name) {
  const Variable& var = declared_as(name, {Type::Bool});
  const bool fallback = parse_bool(var.default_value).value_or(false);
  auto value = raw(name);
  if (!value) return fallback;
  if (auto parsed = parse_bool(*value)) return *parsed;
  report_bad_value(var, *value, "a boolean (1/true/on/yes or 0/false/off/no)");
  return fallback;
}

std::optional<std::int64_t> get_int_opt(std::string_view name) {
  const Variable& var = declared_as(name, {Type::Int});
  std::optional<std::int64_t> fallback;
  if (!var.default_value.empty())
    fallback = std::strtoll(std::string(var.default_value).c_str(), nullptr, 10);
  auto value = raw(name);
  if (!value) return fallback;
  const std::string text = trim(*value);
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    report_bad_value(var, *value, "an integer");
    return fallback;
  }
  return parsed;
}

std::int64_t get_int(std::string_view name) { return get_int_opt(name).value_or(0); }

std::optional<double> get_float_opt(std::string_view name) {
  const Variable& var = declared_as(name, {Type::Float});
  std::optional<double> fallback;
  if (!var.default_value.empty()) fallback = std::strtod(std::string(var.default_value).c_str(), nullptr);
  auto value = raw(name);
  if (!value) return fallback;
  const std::string text = trim(*value);
  char* end = nullptr;
  errno = 0;
  const double parsed = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(parsed)) {
    report_bad_value(var, *value, "a number");
    return fallback;
  }
  return parsed;
}

double get_float(std::string_view name) { return get_float_opt(name).value_or(0.0); }

std::string get_string(std::string_view name) {
  const Variable& var = declared_as(name, {Type::String, Type::Path, Type::Enum});
  auto value = raw(name);
  if (!value) return std::string(var.default_value);
  if (var.type != Type::Enum) return *value;
  const std::string v = lower(trim(*value));
  const std::vector<std::string> choices = split_commas(var.choices);
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  report_bad_value(var, *value, "one of " + join(choices, ", "));
  return std::string(var.default_value);
}

std::vector<std::string> get_list(std::string_view name) {
  const Variable& var = declared_as(name, {Type::List});
  auto value = raw(name);
  std::vector<std::string> items = split_commas(value ? std::string_view(*value) : var.default_value);
  if (var.choices.empty()) return items;
  const std::vector<std::string> choices = split_commas(var.choices);
  std::vector<std::string> known;
  for (std::string& item : items) {
    const std::string v = lower(item);
    if (std::find(choices.begin(), choices.end(), v) != choices.end()) {
      if (std::find(known.begin(), known.end(), v) == known.end()) known.push_back(v);
    } else {
      diag::warn_once(std::string(var.name) + " entry " + item,
                      std::string(var.name) + " entry '" + diag::printable(item) + "' names none of " +
                          join(choices, ", ") + "; ignoring it");
    }
  }
  return known;
}

void validate_runtime_environment() {
  for (const Variable& var : variables()) {
    if (var.scope != Scope::Runtime && var.scope != Scope::BuildAndRuntime) continue;
    if (!raw(var.name)) continue;
    switch (var.type) {
      case Type::Bool: get_bool(var.name); break;
      case Type::Int: get_int(var.name); break;
      case Type::Float: get_float(var.name); break;
      case Type::List: get_list(var.name); break;
      case Type::Enum: get_string(var.name); break;
      case Type::Path:
      case Type::String: break;
    }
  }
}

std::string_view scope_name(Scope scope) {
  switch (scope) {
    case Scope::Build: return "Build";
    case Scope::Runtime: return "Runtime";
    case Scope::BuildAndRuntime: return "Build & Runtime";
    case Scope::Test: return "Test";
    case Scope::Codegen: return "Build (codegen)";
  }
  return "?";
}

std::string_view type_name(Type type) {
  switch (type) {
    case Type::Bool: return "bool";
    case Type::Enum: return "enum";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::Path: return "path";
    case Type::List: return "list";
    case Type::String: return "string";
  }
  return "?";
}

std::string_view direction_name(Direction direction) {
  switch (direction) {
    case Direction::SetIfUnset: return "set-if-unset";
    case Direction::Read: return "read";
  }
  return "?";
}

}  // namespace flagos::env
