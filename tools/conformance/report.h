// report.h — result collection, the stdout table and the JSON report.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "framework.h"
#include "plugin_handle.h"

namespace conformance {

struct GroupReport {
  std::string name;
  std::vector<CheckResult> checks;
};

struct Report {
  std::string path;
  Options options;
  std::map<std::string, std::string> meta;  // plugin name, version, abi, devices...
  std::vector<GroupReport> groups;
  int passed = 0, failed = 0, skipped = 0;

  // Records a result and prints its table row at once (progress is visible
  // while a slow group runs).
  void add(const std::string& group, const CheckResult& r);
  void merge_meta(const std::map<std::string, std::string>& m);
};

void print_table_header();
void print_summary(const Report& r);
bool write_json(const Report& r, const std::string& file, std::string* error);

}  // namespace conformance
