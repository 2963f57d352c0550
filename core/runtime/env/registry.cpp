#include "env/registry.h"

#include <algorithm>
#include <cctype>
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

const Variable& declared(std::string_view name) {
  const Variable* v = find(name);
  if (!v) throw Error("internal: read of undeclared variable " + std::string(name));
  return *v;
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string v = lower(trim(text));
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  return std::nullopt;
}

void report_bad_value(const Variable& var, const std::string& value, std::string_view expected) {
  std::string def = var.default_value.empty() ? "unset" : std::string(var.default_value);
  diag::warn_once(std::string(var.name) + "=" + value,
                  std::string(var.name) + "='" + value + "' is not " + std::string(expected) +
                      "; using the default (" + def + ")");
}

}  // namespace

const Variable* find(std::string_view name) {
  for (const Variable& v : variables())
    if (v.name == name) return &v;
  return nullptr;
}

std::optional<std::string> raw(std::string_view name) {
  const Variable& var = declared(name);
  const char* value = std::getenv(std::string(var.name).c_str());
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

bool get_bool(std::string_view name) {
  const Variable& var = declared(name);
  const bool fallback = parse_bool(var.default_value).value_or(false);
  auto value = raw(name);
  if (!value) return fallback;
  if (auto parsed = parse_bool(*value)) return *parsed;
  report_bad_value(var, *value, "a boolean (1/true/on/yes or 0/false/off/no)");
  return fallback;
}

std::int64_t get_int(std::string_view name) {
  const Variable& var = declared(name);
  const std::int64_t fallback =
      var.default_value.empty() ? 0 : std::strtoll(std::string(var.default_value).c_str(), nullptr, 10);
  auto value = raw(name);
  if (!value) return fallback;
  const std::string text = trim(*value);
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') {
    report_bad_value(var, *value, "an integer");
    return fallback;
  }
  return parsed;
}

std::string get_string(std::string_view name) {
  const Variable& var = declared(name);
  auto value = raw(name);
  if (!value) return std::string(var.default_value);
  if (var.type != Type::Enum) return *value;
  const std::string v = lower(trim(*value));
  std::string_view choices = var.choices;
  while (!choices.empty()) {
    const size_t comma = choices.find(',');
    if (choices.substr(0, comma) == v) return v;
    choices = comma == std::string_view::npos ? std::string_view{} : choices.substr(comma + 1);
  }
  report_bad_value(var, *value, "one of " + std::string(var.choices));
  return std::string(var.default_value);
}

std::vector<std::string> get_list(std::string_view name) {
  const Variable& var = declared(name);
  auto value = raw(name);
  std::string_view text = value ? std::string_view(*value) : var.default_value;
  std::vector<std::string> items;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string item = trim(text.substr(0, comma));
    if (!item.empty()) items.push_back(std::move(item));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return items;
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

}  // namespace flagos::env
