// The env registry: the one declaration of every owned FLAGOS_* variable and
// the one place that reads and parses them (spec/environment-variables.txt).
// Every owned read in C++ goes through the getters below; Python reads the
// same table through torch_fl._env.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flagos::env {

enum class Scope { Build, Runtime, BuildAndRuntime, Test, Codegen };
enum class Type { Bool, Enum, Int, Float, Path, List, String };

struct Variable {
  std::string_view name;
  Scope scope;
  Type type;
  // Effective default as a value of `type` ("" means none). A bool is "1"/"0".
  std::string_view default_value;
  // The Default column exactly as the reference doc words it.
  std::string_view default_doc;
  // Enum alternatives, comma separated; empty for other types.
  std::string_view choices;
  std::string_view purpose;
};

// All declared variables, in reference-doc order.
const std::vector<Variable>& variables();

// The declaration of `name`, or nullptr.
const Variable* find(std::string_view name);

// The raw value of an owned variable: nullopt when unset or empty ("empty
// means unset"). Throws flagos::Error when `name` is not declared, so an
// undeclared read cannot sneak past the registry.
std::optional<std::string> raw(std::string_view name);

// Typed effective values. A value that does not parse prints one [flagos]
// line (once per variable and value) and yields the default.
bool get_bool(std::string_view name);
std::int64_t get_int(std::string_view name);
std::string get_string(std::string_view name);  // Path, String, Enum
std::vector<std::string> get_list(std::string_view name);  // comma list, trimmed, no empties

std::string_view scope_name(Scope scope);
std::string_view type_name(Type type);

}  // namespace flagos::env
