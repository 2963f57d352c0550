#include "faults.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "config.h"

namespace simrt {
namespace {

struct Spec {
  std::string symbol;
  long nth = 1;
  int code = -1;
};

struct Faults {
  std::vector<Spec> specs;
  std::mutex mu;
  std::map<std::string, long> calls;  // per symbol named in a spec
};

Faults* parse() {
  auto* f = new Faults;  // leaked: see config.cpp
  const std::string& all = config().fail;
  size_t pos = 0;
  while (pos <= all.size() && !all.empty()) {
    size_t comma = all.find(',', pos);
    std::string item = all.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? all.size() + 1 : comma + 1;
    if (item.empty()) continue;
    Spec s;
    size_t c1 = item.find(':');
    s.symbol = item.substr(0, c1);
    if (c1 != std::string::npos) {
      size_t c2 = item.find(':', c1 + 1);
      s.nth = std::strtol(item.substr(c1 + 1, c2 - c1 - 1).c_str(), nullptr, 10);
      if (s.nth < 1) s.nth = 1;
      if (c2 != std::string::npos) s.code = static_cast<int>(std::strtol(item.c_str() + c2 + 1, nullptr, 0));
    }
    f->specs.push_back(s);
  }
  return f;
}

}  // namespace

bool fault_injected(const char* symbol, int* code) {
  static Faults* f = parse();
  if (f->specs.empty()) return false;  // the common case takes no lock
  bool named = false;
  for (const Spec& s : f->specs) named = named || s.symbol == symbol;
  if (!named) return false;
  std::lock_guard<std::mutex> lock(f->mu);
  long n = ++f->calls[symbol];
  for (const Spec& s : f->specs) {
    if (s.symbol == symbol && s.nth == n) {
      *code = s.code;
      return true;
    }
  }
  return false;
}

}  // namespace simrt
