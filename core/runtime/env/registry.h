// The env registry: the one declaration of every owned FLAGOS_* variable and
// the one place that reads and parses them (docs/environment-variables.md).
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
  // The reference doc's section (one table per group).
  std::string_view group;
  // Coverage ledger: "" when the behaviour behind the variable is implemented,
  // else the subject it waits for (routing, distributed, a vendor plugin, ...).
  std::string_view waits_for;
  // Where an implemented behaviour has run, when not everywhere it applies:
  // "simulated runtime only" for a vendor's that no hardware has run yet.
  // The doc's Status column then reads "implemented (<this>)".
  std::string_view implemented_on = {};
};

// A dynamic family of owned names: FLAGOS_OP_<name>.
struct Family {
  std::string_view prefix;       // "FLAGOS_OP_"
  std::string_view placeholder;  // "<name>"; the doc spells the row prefix+placeholder
  Scope scope;
  std::string_view default_doc;
  std::string_view purpose;
  std::string_view group;
  std::string_view waits_for;
};

// Names owned by another project that torch_fl reads or fills in.
enum class Direction { SetIfUnset, Read };
struct Foreign {
  std::string_view name;
  std::string_view fallback;  // a second name read when `name` is unset ("" if none)
  std::string_view owner;
  Direction direction;
  std::string_view direction_doc;  // the Direction column as the doc words it
  std::string_view purpose;
};

// Names read by earlier revisions: inert and silent (no alias, no warning).
struct Retired {
  std::string_view name;
  std::string_view successor;    // the declared name that replaced it, or ""
  std::string_view replaced_by;  // the "Replaced by" column as the doc words it
};

// All declared variables, in reference-doc order.
const std::vector<Variable>& variables();

const std::vector<Family>& families();
const std::vector<Foreign>& foreign();
const std::vector<Retired>& retired();

// The declaration of `name`, or nullptr.
const Variable* find(std::string_view name);
// The family `name` belongs to (a non-empty suffix after the prefix), or nullptr.
const Family* find_family(std::string_view name);
const Foreign* find_foreign(std::string_view name);
const Retired* find_retired(std::string_view name);

// The raw value of an owned variable: nullopt when unset or empty ("empty
// means unset"). Throws flagos::Error when `name` is not declared, so an
// undeclared read cannot sneak past the registry. Family members
// (FLAGOS_OP_add__Tensor) are declared through their family.
std::optional<std::string> raw(std::string_view name);

// Typed effective values. A value that does not parse prints one [flagos]
// line (once per variable and value) and yields the default.
bool get_bool(std::string_view name);
std::int64_t get_int(std::string_view name);      // 0 when there is no value and no default
double get_float(std::string_view name);          // 0.0 likewise
// As above, but nullopt when the variable has no default and no valid value
// (FLAGOS_BUILD_JOBS: "System CPU count" is computed by the reader).
std::optional<std::int64_t> get_int_opt(std::string_view name);
std::optional<double> get_float_opt(std::string_view name);
std::string get_string(std::string_view name);  // Path, String, Enum
// Comma list, trimmed, no empties. For a list with choices (FLAGOS_LOG), an
// entry outside them is reported once per process and dropped.
std::vector<std::string> get_list(std::string_view name);

// Parses every set Runtime / Build & Runtime variable once, so that a bad
// value is reported at import even before the feature that reads it runs
// (the same once-per-value key as the getters: never a second line).
void validate_runtime_environment();

std::string_view scope_name(Scope scope);
std::string_view type_name(Type type);
std::string_view direction_name(Direction direction);

}  // namespace flagos::env
