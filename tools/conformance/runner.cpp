#include "runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "helpers.h"

namespace conformance {
namespace {

CheckResult run_guarded(Ctx& c, const Check& chk) {
  c.begin_check();
  try {
    chk.fn(c);
  } catch (const CheckFail& f) {
    c.expect(false, f.reason);
  } catch (const CheckSkip& s) {
    CheckResult r = c.finish_check(chk.name);
    if (r.result == Result::kFail) return r;  // failures seen before the skip win
    r.result = Result::kSkip;
    r.detail = s.reason;
    return r;
  } catch (const std::exception& e) {
    c.expect(false, std::string("exception: ") + e.what());
  } catch (...) {
    c.expect(false, "unknown exception");
  }
  return c.finish_check(chk.name);
}

// Reports the group's first remaining check as failed and the rest as skipped.
void abort_group(const Group& g, size_t from, const std::string& why, Report* rep) {
  for (size_t i = from; i < g.checks.size(); ++i) {
    CheckResult r;
    r.name = g.checks[i].name;
    r.result = i == from ? Result::kFail : Result::kSkip;
    r.detail = i == from ? why : "not run: " + why;
    rep->add(g.name, r);
  }
}

void run_in_process(const Group& g, PluginHandle& plugin, bool* pristine, Report* rep) {
  Ctx c(plugin);
  c.pristine = *pristine;
  if (g.needs_api) {
    std::string why = c.setup();
    if (!why.empty()) return abort_group(g, 0, "group setup failed: " + why, rep);
    rep->merge_meta(c.meta);
  }
  for (const Check& chk : g.checks) rep->add(g.name, run_guarded(c, chk));
  if (g.uses_device) *pristine = false;
}

// ---- child side: a line protocol on a pipe -----------------------------------
//   S <i>              check i started
//   R <i> <p|f|s> <d>  check i finished with detail d
//   M <key> <value>    report metadata
//   E <why>            setup failed
//   D                  all done
// Text fields escape '\' and newlines.

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\') out += "\\\\";
    else if (ch == '\n') out += "\\n";
    else out += ch;
  }
  return out;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[i + 1] == 'n' ? '\n' : s[i + 1];
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

void send(int fd, const std::string& line) {
  std::string msg = line + "\n";
  for (size_t off = 0; off < msg.size();) {
    ssize_t n = write(fd, msg.data() + off, msg.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);  // the runner went away
    off += static_cast<size_t>(n);
  }
}

[[noreturn]] void child_main(const Group& g, PluginHandle& plugin, size_t first, int fd) {
  Ctx c(plugin);
  if (g.needs_api) {
    std::string why = c.setup();
    if (!why.empty()) {
      send(fd, "E " + escape(why));
      _exit(0);
    }
    for (const auto& kv : c.meta) send(fd, "M " + kv.first + " " + escape(kv.second));
  }
  for (size_t i = first; i < g.checks.size(); ++i) {
    send(fd, strf("S %zu", i));
    CheckResult r = run_guarded(c, g.checks[i]);
    send(fd, strf("R %zu %c ", i, result_name(r.result)[0]) + escape(r.detail));
  }
  send(fd, "D");
  _exit(0);  // no atexit handlers or static destructors of the parent's state
}

// ---- parent side -------------------------------------------------------------

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return strf("crashed: killed by signal %d (%s)", sig, strsignal(sig));
  }
  if (WIFEXITED(status)) return strf("the process exited with status %d", WEXITSTATUS(status));
  return "the process ended abnormally";
}

class Supervisor {
 public:
  Supervisor(const Group& g, size_t first, pid_t pid, int fd, int timeout_s, Report* rep)
      : g_(g), next_(first), first_(first), pid_(pid), fd_(fd), timeout_s_(timeout_s), rep_(rep) {}
  size_t run();  // returns the index of the first check still to run

 private:
  enum class Ev { kLine, kEof, kTimeout };
  Ev read_line(std::string* line);
  bool handle(const std::string& line);  // false once the child is done
  size_t on_child_gone(const std::string& why);
  void record(size_t i, Result res, const std::string& detail);

  const Group& g_;
  size_t next_, first_;
  long started_ = -1;
  pid_t pid_;
  int fd_, timeout_s_;
  Report* rep_;
  std::string buf_;
};

Supervisor::Ev Supervisor::read_line(std::string* line) {
  for (;;) {
    size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      *line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return Ev::kLine;
    }
    struct pollfd p = {fd_, POLLIN, 0};
    int r = poll(&p, 1, timeout_s_ * 1000);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Ev::kTimeout;
    char chunk[4096];
    ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Ev::kEof;
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

void Supervisor::record(size_t i, Result res, const std::string& detail) {
  CheckResult r;
  r.name = g_.checks[i].name;
  r.result = res;
  r.detail = detail;
  rep_->add(g_.name, r);
}

bool Supervisor::handle(const std::string& line) {
  if (line.empty()) return true;
  char kind = line[0];
  std::string rest = line.size() > 2 ? line.substr(2) : "";
  if (kind == 'S') {
    started_ = std::atol(rest.c_str());
  } else if (kind == 'R') {
    size_t i = std::strtoul(rest.c_str(), nullptr, 10);
    size_t sp = rest.find(' ');
    char code = sp + 1 < rest.size() ? rest[sp + 1] : 'f';
    std::string detail = sp + 3 <= rest.size() ? unescape(rest.substr(sp + 3)) : "";
    record(i, code == 'p' ? Result::kPass : code == 's' ? Result::kSkip : Result::kFail, detail);
    next_ = i + 1;
    started_ = -1;
  } else if (kind == 'M') {
    size_t sp = rest.find(' ');
    rep_->merge_meta({{rest.substr(0, sp), unescape(sp == std::string::npos ? "" : rest.substr(sp + 1))}});
  } else if (kind == 'E') {
    abort_group(g_, next_, "group setup failed: " + unescape(rest), rep_);
    next_ = g_.checks.size();
    return false;
  } else if (kind == 'D') {
    return false;
  }
  return true;
}

// The child died or hung: blame the running check and continue after it, or
// give up on the group when it never got past setup.
size_t Supervisor::on_child_gone(const std::string& why) {
  if (started_ >= 0) {
    record(static_cast<size_t>(started_), Result::kFail, why);
    return static_cast<size_t>(started_) + 1;
  }
  if (next_ == first_) {
    abort_group(g_, next_, "group setup: " + why, rep_);
    return g_.checks.size();
  }
  return next_;
}

size_t Supervisor::run() {
  std::string line;
  for (;;) {
    Ev ev = read_line(&line);
    if (ev == Ev::kLine) {
      if (handle(line)) continue;
      int status = 0;
      waitpid(pid_, &status, 0);
      return next_;
    }
    int status = 0;
    std::string why;
    if (ev == Ev::kTimeout) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      why = strf("timed out after %d s (killed)", timeout_s_);
    } else {
      waitpid(pid_, &status, 0);
      why = describe_exit(status);
    }
    return on_child_gone(why);
  }
}

size_t run_child(const Group& g, PluginHandle& plugin, const RunConfig& cfg, size_t first,
                 Report* rep) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    abort_group(g, first, std::string("pipe: ") + strerror(errno), rep);
    return g.checks.size();
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child_main(g, plugin, first, fds[1]);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    abort_group(g, first, std::string("fork: ") + strerror(errno), rep);
    return g.checks.size();
  }
  size_t next = Supervisor(g, first, pid, fds[0], cfg.timeout_s, rep).run();
  close(fds[0]);
  return next;
}

}  // namespace

void run_group(const Group& g, PluginHandle& plugin, const RunConfig& cfg, bool* pristine,
               Report* rep) {
  if (!cfg.fork) return run_in_process(g, plugin, pristine, rep);
  // Each child starts from the runner's pristine state; a crash costs only
  // the check that was running, the next child resumes after it.
  for (size_t next = 0; next < g.checks.size();) next = run_child(g, plugin, cfg, next, rep);
}

}  // namespace conformance
