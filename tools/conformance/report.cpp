#include "report.h"

#include <cstdio>

#include "helpers.h"

namespace conformance {

// ---- table -------------------------------------------------------------------

static std::string one_line(const std::string& s, size_t max) {
  std::string out;
  for (char ch : s) out += (ch == '\n' || ch == '\r' || ch == '\t') ? ' ' : ch;
  if (out.size() > max) out = out.substr(0, max - 3) + "...";
  return out;
}

void print_table_header() {
  std::printf("%-12s %-40s %-6s %s\n", "GROUP", "CHECK", "RESULT", "DETAIL");
}

void Report::add(const std::string& group, const CheckResult& r) {
  if (groups.empty() || groups.back().name != group) groups.push_back({group, {}});
  groups.back().checks.push_back(r);
  if (r.result == Result::kPass) ++passed;
  else if (r.result == Result::kFail) ++failed;
  else ++skipped;
  std::printf("%-12s %-40s %-6s %s\n", group.c_str(), r.name.c_str(), result_name(r.result),
              one_line(r.detail, 240).c_str());
  std::fflush(stdout);
}

void Report::merge_meta(const std::map<std::string, std::string>& m) {
  for (const auto& kv : m) meta.emplace(kv.first, kv.second);  // first writer wins
}

void print_summary(const Report& r) {
  std::printf("conformance: %d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped);
}

// ---- JSON (by hand: the runner has no dependencies) ------------------------------

// Length of the valid UTF-8 sequence at s[i], or 0.
static size_t utf8_len(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return 0;
  return n;
}

static std::string json_str(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_len(s, i);
    if (n == 0) {  // plugin strings are not trusted to be UTF-8
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c < 0x20) out += strf("\\u%04x", c);
    else out.append(s, i, n);
    i += n;
  }
  return out + "\"";
}

static void write_groups(FILE* f, const Report& r) {
  std::fprintf(f, "  \"groups\": [");
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const GroupReport& gr = r.groups[g];
    std::fprintf(f, "%s\n    {\"name\": %s, \"checks\": [", g ? "," : "", json_str(gr.name).c_str());
    for (size_t i = 0; i < gr.checks.size(); ++i) {
      const CheckResult& c = gr.checks[i];
      std::fprintf(f, "%s\n      {\"name\": %s, \"result\": \"%s\", \"detail\": %s}", i ? "," : "",
                   json_str(c.name).c_str(), result_name(c.result), json_str(c.detail).c_str());
    }
    std::fprintf(f, "\n    ]}");
  }
  std::fprintf(f, "\n  ],\n");
}

static std::string meta(const Report& r, const char* key) {
  auto it = r.meta.find(key);
  return it == r.meta.end() ? "" : it->second;
}

// A JSON string, or null when the plugin never told us.
static std::string str_or_null(const Report& r, const char* key) {
  return r.meta.count(key) ? json_str(meta(r, key)) : "null";
}

static void write_header(FILE* f, const Report& r) {
  std::fprintf(f, "{\n  \"runner\": {\"name\": %s, \"version\": %s, \"abi\": \"%d.%d\"},\n",
               json_str(FLAGOS_CONFORMANCE_NAME).c_str(), json_str(FLAGOS_CONFORMANCE_VERSION).c_str(),
               FLAGOS_ABI_MAJOR, FLAGOS_ABI_MINOR);
  std::fprintf(f, "  \"plugin\": {\"name\": %s, \"version\": %s, \"table_size\": %s},\n",
               str_or_null(r, "name").c_str(), str_or_null(r, "version").c_str(),
               meta(r, "table_size").empty() ? "null" : meta(r, "table_size").c_str());
  std::fprintf(f, "  \"path\": %s,\n  \"abi\": %s,\n  \"devices\": %s,\n", json_str(r.path).c_str(),
               str_or_null(r, "abi").c_str(),
               meta(r, "devices").empty() ? "null" : meta(r, "devices").c_str());
  std::fprintf(f, "  \"options\": {");
  for (size_t i = 0; i < r.options.size(); ++i)
    std::fprintf(f, "%s%s: %s", i ? ", " : "", json_str(r.options[i].first).c_str(),
                 json_str(r.options[i].second).c_str());
  std::fprintf(f, "},\n");
}

bool write_json(const Report& r, const std::string& file, std::string* error) {
  FILE* f = std::fopen(file.c_str(), "w");
  if (!f) {
    *error = "cannot write " + file;
    return false;
  }
  write_header(f, r);
  write_groups(f, r);
  std::fprintf(f, "  \"summary\": {\"passed\": %d, \"failed\": %d, \"skipped\": %d, \"total\": %d}\n}\n",
               r.passed, r.failed, r.skipped, r.passed + r.failed + r.skipped);
  bool ok = std::fflush(f) == 0 && !std::ferror(f);
  ok = std::fclose(f) == 0 && ok;
  if (!ok) *error = "error writing " + file;
  return ok;
}

}  // namespace conformance
