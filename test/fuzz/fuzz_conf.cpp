// libFuzzer target: routing::load_conf on arbitrary bytes, in both formats.
//
// Input: the first byte picks the format (odd: main.toml, even: main.conf in
// the line format); the rest is the file. A line "%%" splits off a second
// part, written as both inc.toml and inc.conf beside it, so includes reach a
// file of the fuzzer's making. Rules: load_conf returns or throws
// flagos::Error whose what() is one "[flagos] " line; nothing else escapes,
// crashes or hangs; a loaded conf holds only well-formed operator names and
// resolves (routing::resolve) under the same rules.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "error.h"
#include "fuzz_support.h"
#include "routing/conf.h"

namespace {

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/flagos_fuzz_conf_XXXXXX";
    if (!::mkdtemp(tmpl.data())) std::abort();
    return tmpl;
  }();
  return dir;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool toml = data[0] & 1;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string included;
  if (size_t cut = text.find("\n%%\n"); cut != std::string::npos) {
    included = text.substr(cut + 4);
    text.resize(cut + 1);
  }
  const std::string& dir = scratch_dir();
  const std::string main_path = dir + (toml ? "/main.toml" : "/main.conf");
  write_file(main_path, text);
  write_file(dir + "/inc.toml", included);
  write_file(dir + "/inc.conf", included);

  flagos::routing::Conf conf;
  try {
    conf = flagos::routing::load_conf(main_path);
  } catch (const flagos::Error& e) {
    flagos::fuzz::check_error(e.what());
    return 0;
  }
  for (const auto& entry : conf.entries) {
    if (!flagos::routing::valid_op_name(entry.op)) flagos::fuzz::violation("an entry is an operator", entry.op);
    if (entry.line < 1 || entry.file.empty()) flagos::fuzz::violation("an entry has file:line", entry.where());
  }
  flagos::fuzz::check_resolve(conf, {});
  return 0;
}
