// Crash safety with real processes (issue #10): each writer -- N5 chunks,
// datg, BPCells, a Daf node, a whole Daf repository, datadings,
// stowage-convert -- is started as a child process (crash_writer, or the
// real stowage-convert) and killed with SIGKILL
//   * at 50 random moments spread uniformly over the writing window of an
//     uninterrupted run -- from the moment the writer reports it started
//     writing (crash_writer: the file $STOWAGE_CRASH_MARKER, made after its
//     plugins are loaded; stowage-convert: its staging directory) to its exit
//     (fixed seed, printed; STOWAGE_CRASH_SEED and STOWAGE_CRASH_TRIALS
//     override), half of them over old content, half into a new destination;
//     the outcomes are counted, and most kills must land while writing;
//   * on entry to its renames: every commit rename, and a spread of the
//     others (strace's fault injection, `inject=rename:signal=KILL:when=N`;
//     needs Debian's strace).
// After each kill a fresh Registry reopens what is left, which must be the
// old content or the new one as a whole (N5: per chunk; BPCells, datadings:
// every file too), or nothing when there was nothing before; anything else
// on disk must be a documented temporary (".<name>.stowage-tmp.<pid>.<n>",
// ".stowage-convert.<pid>.<name>") of a killed process. Temporaries are left
// in place, so every later trial also shows that a writer does not trip over
// those of earlier ones.
//
// Datasets of several files (datg, datadings, a converted set) are published
// as a journaled file set: a kill between their renames leaves a journal
// (".<first file>.stowage-commit") that the reopen finishes.
#include "test_support.hpp"
#include "../daf/daf_test_util.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <thread>
#include <tuple>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using stowage::json;
using Clock = std::chrono::steady_clock;
using Args = std::vector<std::string>;

// ---- knobs -----------------------------------------------------------------------------------

uint64_t seed() { return std::stoull(test::env_or("STOWAGE_CRASH_SEED", "20250611")); }
int trial_count() { return std::stoi(test::env_or("STOWAGE_CRASH_TRIALS", "50")); }
std::string writer_exe() { return test::env_or("STOWAGE_CRASH_WRITER", "crash_writer"); }
std::string convert_exe() { return test::env_or("STOWAGE_CONVERT", "stowage-convert"); }
std::string strace_exe() { return test::env_or("STOWAGE_STRACE", "/usr/bin/strace"); }
// LeakSanitizer cannot work in a traced process (it stops the world with
// ptrace itself), so in a sanitizer build the writers run under strace skip
// the leak check; the variable does nothing elsewhere.
const char* const no_leak_check = "LSAN_OPTIONS=detect_leaks=0";
constexpr size_t kMaxInjections = 8;  // rename kill points per writer

// ---- child processes -------------------------------------------------------------------------

// Starts argv with its output appended to `log` (outside the directories checked).
pid_t spawn(const Args& argv, const fs::path& log) {
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + test::quote(a);
  test::log_command(command);
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

struct Exit {
  pid_t pid = -1;
  bool killed = false;  // by our SIGKILL (false: it finished first)
  int status = 0;       // exit status when not killed
};

Exit exit_of(pid_t pid, int st) {
  Exit e;
  e.pid = pid;
  e.killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
  e.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return e;
}

Exit wait_for(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return exit_of(pid, st);
}

// Polls every 200 us until `started(pid)` says the child is writing, or the
// child has exited (then *exited is set). Returns whether it started.
bool wait_started(pid_t pid, const std::function<bool(pid_t)>& started,
                  std::optional<Exit>* exited) {
  for (;;) {
    if (started(pid)) return true;
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      *exited = exit_of(pid, st);
      return started(pid);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::string log_tail(const fs::path& log) {
  std::string s = fs::exists(log) ? test::read_file(log) : "";
  return s.size() > 2000 ? s.substr(s.size() - 2000) : s;
}

// Runs to the end; returns the wall time in seconds.
double run_complete(const Args& argv, const fs::path& log) {
  auto t0 = Clock::now();
  Exit e = wait_for(spawn(argv, log));
  if (e.killed || e.status != 0)
    throw std::runtime_error(argv[0] + " " + argv[1] + " failed (status " +
                             std::to_string(e.status) + "): " + log_tail(log));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs to the end; returns the seconds from the moment `started` first held
// (the writer began writing) to its exit: the writing window.
double run_complete_writing(const Args& argv, const fs::path& log,
                            const std::function<bool(pid_t)>& started) {
  pid_t pid = spawn(argv, log);
  std::optional<Exit> exited;
  const bool began = wait_started(pid, started, &exited);
  auto t0 = Clock::now();
  Exit e = exited ? *exited : wait_for(pid);
  if (!began)
    throw std::runtime_error(argv[0] + " never reported that it started writing: " + log_tail(log));
  if (e.killed || e.status != 0)
    throw std::runtime_error(argv[0] + " " + argv[1] + " failed (status " +
                             std::to_string(e.status) + "): " + log_tail(log));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Starts argv and kills it `delay_s` after it started writing. *mid_write:
// the kill landed while it was writing (it had started and not yet exited).
Exit run_killed_while_writing(const Args& argv, double delay_s, const fs::path& log,
                              const std::function<bool(pid_t)>& started, bool* mid_write) {
  pid_t pid = spawn(argv, log);
  std::optional<Exit> exited;
  *mid_write = false;
  if (!wait_started(pid, started, &exited)) return *exited;
  if (exited) return *exited;
  std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
  int st = 0;
  if (waitpid(pid, &st, WNOHANG) == pid) return exit_of(pid, st);  // finished first
  ::kill(pid, SIGKILL);
  Exit e = wait_for(pid);
  *mid_write = e.killed;
  return e;
}

// One rename call of a run: which system call, and its ordinal among calls
// of that system call (strace counts each one separately, per thread).
struct RenameCall {
  std::string syscall;  // rename, renameat or renameat2
  size_t ordinal = 0;   // 1-based
};

// The strace command that kills argv on entry to the given rename call. The
// writer is asked for one worker thread, so its renames come in one order.
Args killed_at_rename(const Args& argv, const RenameCall& call) {
  // (No --seccomp-bpf here: with it, strace 6.1 does not inject.)
  Args a = {strace_exe(),
            "-f",
            "-qq",
            "-E",
            "STOWAGE_CRASH_THREADS=1",
            "-E",
            no_leak_check,
            "-o",
            "/dev/null",
            "-e",
            "trace=rename,renameat,renameat2",
            "-e",
            "inject=" + call.syscall + ":signal=KILL:when=" + std::to_string(call.ordinal),
            "--"};
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

// The renames an uninterrupted run makes, in order (the run also writes the new content).
std::vector<RenameCall> trace_renames(const Args& argv, const fs::path& scratch,
                                      const fs::path& log) {
  fs::path trace = scratch / "renames.trace";
  Args a = {
      strace_exe(), "-f",          "-qq", "--seccomp-bpf", "-E", "STOWAGE_CRASH_THREADS=1",
      "-E",         no_leak_check, "-o",  trace.string(),  "-e", "trace=rename,renameat,renameat2",
      "--"};
  a.insert(a.end(), argv.begin(), argv.end());
  run_complete(a, log);
  static const std::regex call(R"((renameat2|renameat|rename)\()");
  std::istringstream in(test::read_file(trace));
  std::vector<RenameCall> calls;
  std::map<std::string, size_t> seen;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, call)) calls.push_back({m[1], ++seen[m[1]]});
  }
  fs::remove(trace);
  return calls;
}

// Up to kMaxInjections of 1..n: the last ones (the commit) all, the rest spread.
std::vector<size_t> injection_points(size_t n) {
  std::set<size_t> pts;
  for (size_t k = n; k >= 1 && k + kMaxInjections / 2 > n; --k) pts.insert(k);
  for (size_t i = 0; i < kMaxInjections / 2 && n > 0; ++i)
    pts.insert(1 + i * n / (kMaxInjections / 2));
  return {pts.begin(), pts.end()};
}

// ---- what is on disk -------------------------------------------------------------------------

// Every path under root, relative, not descending into temporaries.
bool is_temporary(const std::string& name) {
  static const std::regex plugin_tmp(R"(^\..+\.stowage-tmp\.[0-9]+\.[0-9]+(\.old)?$)");
  static const std::regex convert_tmp(R"(^\.stowage-convert\.[0-9]+\..+$)");
  return std::regex_match(name, plugin_tmp) || std::regex_match(name, convert_tmp);
}

// The pid a temporary's name carries.
long temporary_pid(const std::string& name) {
  static const std::regex plugin_tmp(R"(^\..+\.stowage-tmp\.([0-9]+)\.[0-9]+(\.old)?$)");
  static const std::regex convert_tmp(R"(^\.stowage-convert\.([0-9]+)\..+$)");
  std::smatch m;
  if (std::regex_match(name, m, plugin_tmp) || std::regex_match(name, m, convert_tmp))
    return std::stol(m[1]);
  return -1;
}

struct Listing {
  std::set<std::string> finals;                     // relative paths of ordinary entries
  std::vector<std::pair<std::string, long>> temps;  // relative path, pid in the name
};

Listing list_tree(const fs::path& root) {
  Listing out;
  if (!fs::exists(root)) return out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    const std::string rel = fs::relative(it->path(), root).string();
    // A killed writer's lock file (storage lock_key, ".<name>.stowage-lock"):
    // empty, and taken over by the next writer of that name.
    if (name.size() > 13 && name.compare(name.size() - 13, 13, ".stowage-lock") == 0) continue;
    if (is_temporary(name)) {
      out.temps.emplace_back(rel, temporary_pid(name));
      if (it->is_directory()) it.disable_recursion_pending();
    } else {
      out.finals.insert(rel);
    }
  }
  return out;
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from))
    fs::copy(e.path(), to / e.path().filename(),
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// Removes everything but temporaries (so later trials run next to them).
void remove_finals(const fs::path& dir) {
  if (!fs::exists(dir)) return;
  for (const auto& e : fs::directory_iterator(dir))
    if (!is_temporary(e.path().filename().string())) fs::remove_all(e.path());
}

// ---- reading back ------------------------------------------------------------------------------

// Appends a length-prefixed section, so snapshots compare unambiguously.
void put(std::string& out, const void* data, size_t n) {
  uint64_t len = n;
  out.append(reinterpret_cast<const char*>(&len), 8);
  out.append(static_cast<const char*>(data), n);
}
void put(std::string& out, const std::string& s) { put(out, s.data(), s.size()); }
void put(std::string& out, const std::vector<std::string>& v) {
  put(out, std::to_string(v.size()));
  for (const auto& s : v) put(out, s);
}

// Everything a reader sees of one node, as bytes: shape, values, labels.
std::string node_snapshot(const stowage::Store& s, const std::string& node) {
  std::string out;
  stowage::NodeInfo info = s.describe(node);
  put(out, stowage::dtype_name(info.dtype));
  put(out, info.shape.data(), info.shape.size() * 8);
  const size_t es = stowage::dtype_size(info.dtype);
  if (info.kind == stowage::NodeKind::strings) {
    put(out, s.read_strings(node));
    return out;
  }
  if (info.kind == stowage::NodeKind::records) {
    stowage::Records r = s.records(node);
    r.read_range(0, r.size(), [&](std::string_view rec) { put(out, rec.data(), rec.size()); });
    for (uint64_t i = 0; i < r.size(); ++i) put(out, r.key(i));
    return out;
  }
  if (info.kind == stowage::NodeKind::sparse) {
    stowage::Sparse m = s.sparse(node);
    stowage::SparseSlice sl = m.read(0, m.majors());
    put(out, sl.indptr.data(), sl.indptr.size() * 8);
    put(out, sl.indices.data(), sl.indices.size() * 4);
    put(out, sl.values.data(), sl.values.size());
  } else {
    std::vector<uint8_t> bytes(info.element_count() * es);
    s.array(node).read(std::vector<uint64_t>(info.shape.size(), 0), info.shape, bytes.data());
    put(out, bytes.data(), bytes.size());
  }
  for (const stowage::Dim& d : info.dims)
    if (!d.labels.empty()) put(out, s.read_strings(d.labels));
  for (const char* key : {"dataset_name", "version"})
    if (info.attributes.contains(key)) put(out, info.attributes[key].dump());
  return out;
}

// A dataset as a fresh Registry sees it; nullopt when it is not there.
std::optional<std::string> snapshot(const std::string& path, const std::string& format,
                                    const std::string& node) {
  stowage::Registry registry;
  try {
    stowage::Store s =
        stowage::Store::open(path, stowage::Mode::read, format, json::object(), registry);
    return node_snapshot(s, node);
  } catch (const stowage::Error& e) {
    if (e.code() == stowage::ErrorCode::not_found) return std::nullopt;
    throw;
  }
}

// ---- one writer, many kills ---------------------------------------------------------------------

// What a reader finds after a kill: the old content, the new, nothing, a
// per-chunk mix of old and new chunks (N5 only, which commits per chunk), or
// something else (always a failure, reported by the check itself).
enum class Outcome { old_state, new_state, absent, mixed, other };

// The marker file crash_writer creates when it starts writing
// (STOWAGE_CRASH_MARKER, set for every child of this test).
fs::path marker_file() { return test::env_or("STOWAGE_CRASH_MARKER", ""); }
bool writer_started(pid_t) { return fs::exists(marker_file()); }

// What a writer needs from the harness: how to run it, how to set up the
// state before it, and how to judge what is left after a kill.
struct Subject {
  std::string name;
  fs::path work;  // the directory the writer writes into (kept across trials)
  std::function<Args(bool over_old, bool traced)> command;  // traced: under strace
  std::function<void(bool over_old)> prepare;               // the starting state in `work`
  // Asserts old-or-new and says which; `over_old` tells whether there was old content.
  std::function<Outcome(bool over_old, const std::string& where)> check;
  // Whether the child `pid` has begun writing (crash_writer: its marker file).
  std::function<bool(pid_t)> started = writer_started;
  std::set<std::string> allowed_finals;   // every ordinary path in the old or new state
  bool alternate_new_destination = true;  // odd trials start from nothing
};

// The entries left in `work` are finals of the old or new state, or
// temporaries; with `pid` >= 0, temporaries of that process or of earlier
// killed trials.
void check_leftovers(const Subject& s, const std::string& where, const std::set<long>& dead_pids) {
  Listing l = list_tree(s.work);
  for (const std::string& f : l.finals) {
    CAPTURE(where);
    CHECK_MESSAGE(s.allowed_finals.count(f),
                  s.name << ": unexpected entry " << f << " (neither old, new nor a temporary)");
  }
  for (const auto& [rel, pid] : l.temps) {
    CAPTURE(where);
    CHECK_MESSAGE(dead_pids.count(pid), s.name << ": temporary " << rel << " of process " << pid
                                               << ", which is no killed writer");
  }
}

struct Tally {
  int killed = 0, finished = 0, mid_write = 0, old_state = 0, new_state = 0, absent = 0, mixed = 0,
      other = 0;
  void count(Outcome o) {
    switch (o) {
      case Outcome::old_state:
        ++old_state;
        break;
      case Outcome::new_state:
        ++new_state;
        break;
      case Outcome::absent:
        ++absent;
        break;
      case Outcome::mixed:
        ++mixed;
        break;
      case Outcome::other:
        ++other;
        break;
    }
  }
};

// Kills the writer at `trial_count()` moments drawn uniformly over its
// writing window: from when it reports that it started writing (start-up
// and plugin loading excluded) to its exit in an uninterrupted run.
void random_kills(Subject& s, const fs::path& logs, uint64_t salt) {
  const fs::path log = logs / (s.name + ".log");
  const fs::path marker = marker_file();
  REQUIRE(!marker.empty());
  auto started = [&](pid_t pid) { return s.started(pid); };
  // Uninterrupted runs set the window, over old content and into a new
  // destination separately (writing over old content takes longer): the
  // faster of two each, so the first run's cold caches do not stretch it.
  double windows[2] = {1e9, 1e9};  // [over_old]
  for (bool over_old : {true, false}) {
    if (!over_old && !s.alternate_new_destination) continue;
    for (int run = 0; run < 2; ++run) {
      s.prepare(over_old);
      fs::remove(marker);
      windows[over_old] = std::min(windows[over_old],
                                   run_complete_writing(s.command(over_old, false), log, started));
    }
  }
  std::mt19937_64 rng(seed() ^ salt);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::set<long> dead;
  Tally t;
  for (int trial = 0; trial < trial_count(); ++trial) {
    const bool over_old = !s.alternate_new_destination || trial % 2 == 0;
    const double window = windows[over_old];
    const double delay = uniform(rng) * window;
    s.prepare(over_old);
    fs::remove(marker);
    bool mid_write = false;
    Exit e = run_killed_while_writing(s.command(over_old, false), delay, log, started, &mid_write);
    e.killed ? ++t.killed : ++t.finished;
    t.mid_write += mid_write;
    const std::string where = s.name + " trial " + std::to_string(trial) + " (seed " +
                              std::to_string(seed()) + ", " + std::to_string(int(delay * 1e6)) +
                              " us into writing of " + std::to_string(int(window * 1e6)) + ", " +
                              (over_old ? "over old" : "new destination") + ", pid " +
                              std::to_string(e.pid) + (e.killed ? ", killed" : ", finished") + ")";
    if (!e.killed) REQUIRE_MESSAGE(e.status == 0, where << ": " << log_tail(log));
    dead.insert(e.pid);
    const Outcome o = s.check(over_old, where);
    t.count(o);
    // A writer that finished must have left its whole result.
    if (!e.killed)
      CHECK_MESSAGE(o == Outcome::new_state,
                    where << ": finished, but the new content is not there");
    check_leftovers(s, where, dead);
  }
  std::cout << s.name << ": seed " << seed() << ", " << trial_count() << " trials, writing window "
            << int(windows[true] * 1000) << " ms over old, "
            << (s.alternate_new_destination
                    ? std::to_string(int(windows[false] * 1000)) + " ms new, "
                    : "")
            << t.killed << " killed (" << t.mid_write << " while writing), " << t.finished
            << " finished before the kill; found old " << t.old_state << ", new " << t.new_state
            << ", absent " << t.absent << ", per-chunk mix " << t.mixed << ", other " << t.other
            << "; " << list_tree(s.work).temps.size()
            << " temporaries of killed writers left beside the dataset" << std::endl;
  // Each trial found one writer's whole result (or, where allowed, nothing or
  // N5's per-chunk mix), never anything else.
  CHECK(t.old_state + t.new_state + t.absent + t.mixed == trial_count());
  CHECK(t.other == 0);
  if (s.name != "n5") CHECK(t.mixed == 0);
  // The kills are drawn over the writing window, so most land while writing,
  // and some of those before the commit: old content, nothing, or a mix.
  CHECK_MESSAGE(t.mid_write * 2 >= trial_count(),
                s.name << ": only " << t.mid_write << " of " << trial_count()
                       << " kills landed while the writer was writing");
  CHECK_MESSAGE(t.old_state + t.absent + t.mixed > 0,
                s.name << ": no kill landed before the writer's commit");
}

void rename_kills(Subject& s, const fs::path& logs, const fs::path& scratch) {
  const fs::path log = logs / (s.name + ".strace.log");
  for (bool over_old : {true, false}) {
    if (!over_old && !s.alternate_new_destination) continue;
    s.prepare(over_old);
    const std::vector<RenameCall> calls = trace_renames(s.command(over_old, true), scratch, log);
    const size_t n = calls.size();
    REQUIRE_MESSAGE(n > 0, s.name << ": strace recorded no rename, so no kill would be tested");
    std::set<long> any_pid;
    for (size_t k : injection_points(n)) {
      s.prepare(over_old);
      Exit e = wait_for(spawn(killed_at_rename(s.command(over_old, true), calls[k - 1]), log));
      const std::string where = s.name + ": killed on entry to rename " + std::to_string(k) +
                                " of " + std::to_string(n) +
                                (over_old ? " (over old)" : " (new destination)");
      CAPTURE(where);
      CHECK_MESSAGE(e.status != 0, where << ": the writer was not killed");
      s.check(over_old, where);
      // The traced writer's pid is strace's child: accept any temporary's pid
      // that is no longer running.
      for (const auto& [rel, pid] : list_tree(s.work).temps)
        if (::kill(static_cast<pid_t>(pid), 0) != 0) any_pid.insert(pid);
      check_leftovers(s, where, any_pid);
    }
    std::cout << s.name << (over_old ? " over old" : " new destination") << ": " << n
              << " renames, killed at " << injection_points(n).size() << " of them" << std::endl;
  }
}

// The state `work` starts from: the old reference, or nothing (temporaries
// of earlier trials stay).
void restore(const fs::path& work, const fs::path& old_ref, bool over_old) {
  remove_finals(work);
  fs::create_directories(work);
  if (over_old) copy_tree(old_ref, work);
}

std::set<std::string> finals_of(std::initializer_list<fs::path> dirs) {
  std::set<std::string> all;
  for (const fs::path& d : dirs)
    for (const std::string& f : list_tree(d).finals) all.insert(f);
  return all;
}

// Old-or-new for a dataset read whole.
Outcome check_whole(const std::string& name, const std::optional<std::string>& got,
                    const std::string& old_snap, const std::string& new_snap, bool over_old,
                    const std::string& where) {
  CAPTURE(where);
  if (!got) {
    CHECK_MESSAGE(!over_old, name << ": the old dataset is gone and no new one is there");
    return over_old ? Outcome::other : Outcome::absent;
  }
  const bool is_old = *got == old_snap, is_new = *got == new_snap;
  const std::string what = is_old ? "the old one, but there was none" : "a mix of old and new";
  CHECK_MESSAGE((is_new || (over_old && is_old)), name << ": the dataset is " << what);
  return is_new ? Outcome::new_state : (over_old && is_old) ? Outcome::old_state : Outcome::other;
}

// Reads `path` and judges it, turning an error on reopen into a failed check.
Outcome judge(const std::string& name, const std::function<std::optional<std::string>()>& read,
              const std::string& old_snap, const std::string& new_snap, bool over_old,
              const std::string& where) {
  try {
    return check_whole(name, read(), old_snap, new_snap, over_old, where);
  } catch (const std::exception& e) {
    FAIL_CHECK(where << ": reopening failed: " << std::string(e.what()));
    return Outcome::other;
  }
}

// A whole-dataset writer (datg, BPCells, datadings): references in
// refs/old and refs/new, made by complete runs of `command`.
struct WholeDataset {
  fs::path root;                   // <tmp>/<name>
  std::string name, format, file;  // file: the dataset's path inside each directory
  std::string node;                // the node compared (with its labels)
  std::string old_snap, new_snap;

  bool files_deterministic = false;  // every file's bytes are the same on each run
  std::map<std::string, std::string> old_files, new_files;

  fs::path dir(const std::string& which) const { return root / which; }

  // The dataset's files (not temporaries) under a directory, with their bytes.
  static std::map<std::string, std::string> files_in(const fs::path& d) {
    std::map<std::string, std::string> out;
    for (const std::string& rel : list_tree(d).finals)
      if (fs::is_regular_file(d / rel)) out[rel] = test::read_file(d / rel);
    return out;
  }

  // On disk, too: all files of one version, none from the other.
  bool check_files(bool over_old, const fs::path& work, const std::string& where) const {
    CAPTURE(where);
    const auto files = files_in(work);
    const bool is_new = files == new_files, is_old = over_old && files == old_files,
               none = !over_old && files.empty();
    std::string detail;
    for (const auto& [rel, bytes] : files) {
      const auto o = old_files.find(rel), n = new_files.find(rel);
      detail += " " + rel +
                (n != new_files.end() && n->second == bytes   ? "=new"
                 : o != old_files.end() && o->second == bytes ? "=old"
                                                              : "=other");
    }
    CHECK_MESSAGE((is_new || is_old || none), name << ": files from both versions:" << detail);
    return is_new || is_old || none;
  }

  Subject subject(const fs::path& logs, const std::string& writer_kind) {
    const fs::path log = logs / (name + ".log");
    for (const char* which : {"old", "new"}) {
      fs::create_directories(dir(which));
      run_complete({writer_exe(), writer_kind, (dir(which) / file).string(),
                    which == std::string("old") ? "0" : "1"},
                   log);
    }
    old_snap = *snapshot((dir("old") / file).string(), format, node);
    new_snap = *snapshot((dir("new") / file).string(), format, node);
    REQUIRE(old_snap != new_snap);
    if (files_deterministic) old_files = files_in(dir("old")), new_files = files_in(dir("new"));
    Subject s;
    s.name = name;
    s.work = dir("work");
    const fs::path target = s.work / file;
    s.command = [=](bool, bool) { return Args{writer_exe(), writer_kind, target.string(), "1"}; };
    s.prepare = [=](bool over_old) { restore(s.work, dir("old"), over_old); };
    s.check = [this, target, work = s.work](bool over_old, const std::string& where) {
      Outcome o = judge(
          name, [&] { return snapshot(target.string(), format, node); }, old_snap, new_snap,
          over_old, where);
      if (files_deterministic && !check_files(over_old, work, where)) o = Outcome::other;
      return o;
    };
    s.allowed_finals = finals_of({dir("old"), dir("new")});
    return s;
  }
};

// ---- N5: per chunk ------------------------------------------------------------------------------

// Each chunk file of the dataset is the old chunk's bytes or the new one's
// (or missing when there was no old one), and reads back as those values.
struct N5Chunks {
  fs::path root;
  std::map<std::string, std::string> old_files, new_files;  // relative path -> bytes
  std::string old_attrs, new_attrs;
  std::vector<uint16_t> old_values, new_values;  // C order, square
  uint64_t chunk = 0;                            // chunk side

  // A new dataset's attributes.json before set_attributes adds "version".
  json created_attrs() const {
    json j = json::parse(new_attrs);
    j.erase("version");
    return j;
  }

  static std::map<std::string, std::string> chunk_files(const fs::path& container) {
    std::map<std::string, std::string> out;
    const fs::path vol = container / "vol";
    for (const std::string& rel : list_tree(vol).finals)
      if (fs::is_regular_file(vol / rel) && rel != "attributes.json")
        out[rel] = test::read_file(vol / rel);
    return out;
  }

  Outcome check(const fs::path& container, bool over_old, const std::string& where) {
    CAPTURE(where);
    const fs::path vol = container / "vol";
    if (!over_old && !fs::exists(vol / "attributes.json")) {
      CHECK_MESSAGE(chunk_files(container).empty(),
                    "n5: chunks without the dataset's attributes.json");
      return chunk_files(container).empty() ? Outcome::absent : Outcome::other;
    }
    const std::string attrs = test::read_file(vol / "attributes.json");
    const bool created = !over_old && json::accept(attrs) && json::parse(attrs) == created_attrs();
    CHECK_MESSAGE((attrs == new_attrs || (over_old && attrs == old_attrs) || created),
                  "n5: attributes.json is torn: " << attrs);
    int old_n = 0, new_n = 0, missing = 0, torn = 0;
    const auto files = chunk_files(container);
    for (const auto& [rel, bytes] : new_files) {
      auto it = files.find(rel);
      if (it == files.end()) {
        ++missing;
        CHECK_MESSAGE(!over_old, "n5: chunk " << rel << " vanished");
        continue;
      }
      const bool is_new = it->second == bytes, is_old = over_old && old_files.at(rel) == it->second;
      is_new ? ++new_n : is_old ? ++old_n : ++torn;
      CHECK_MESSAGE((is_new || is_old),
                    "n5: chunk " << rel << " is torn (" << it->second.size() << " bytes)");
    }
    CHECK(files.size() + missing == new_files.size());
    // And through the API: each chunk's values are wholly one version's.
    bool values_ok = false;
    try {
      values_ok = check_values(container, over_old);
    } catch (const std::exception& e) {
      FAIL_CHECK("n5: reopening failed: " << std::string(e.what()));
    }
    const bool attrs_ok = attrs == new_attrs || (over_old && attrs == old_attrs) || created;
    if (torn > 0 || !values_ok || !attrs_ok || files.size() + missing != new_files.size())
      return Outcome::other;
    if (new_n == int(new_files.size()) && attrs == new_attrs) return Outcome::new_state;
    if (over_old && old_n == int(new_files.size()) && attrs == old_attrs) return Outcome::old_state;
    return Outcome::mixed;  // chunk by chunk old or new (or not yet written): allowed for N5
  }

  // The whole array through the API.
  static std::vector<uint16_t> values(const fs::path& container) {
    stowage::Registry registry;
    stowage::Store s = stowage::Store::open(container.string(), stowage::Mode::read, "n5",
                                            json::object(), registry);
    return s.array("vol").read_all<uint16_t>();
  }

  bool check_values(const fs::path& container, bool over_old) {
    bool all_ok = true;
    const std::vector<uint16_t> got = values(container);
    REQUIRE(got.size() == new_values.size());
    const uint64_t side = uint64_t(std::sqrt(double(got.size()))), c = chunk;
    for (uint64_t r = 0; r < side; r += c)
      for (uint64_t q = 0; q < side; q += c) {
        bool is_new = true, is_old = over_old, zero = !over_old;
        for (uint64_t y = r; y < std::min(side, r + c); ++y)
          for (uint64_t x = q; x < std::min(side, q + c); ++x) {
            const uint64_t i = y * side + x;
            is_new &= got[i] == new_values[i];
            is_old &= got[i] == old_values[i];
            zero &= got[i] == 0;
          }
        CHECK_MESSAGE((is_new || is_old || zero),
                      "n5: chunk at " << r << "," << q << " reads as neither version");
        all_ok &= is_new || is_old || zero;
      }
    return all_ok;
  }

  Subject subject(const fs::path& logs) {
    const fs::path log = logs / "n5.log";
    run_complete({writer_exe(), "n5", (root / "old").string(), "0"}, log);
    run_complete({writer_exe(), "n5", (root / "new").string(), "1"}, log);
    old_files = chunk_files(root / "old");
    new_files = chunk_files(root / "new");
    REQUIRE(old_files.size() == new_files.size());
    REQUIRE(old_files.size() > 100);
    old_values = values(root / "old");
    new_values = values(root / "new");
    chunk = json::parse(test::read_file(root / "new" / "vol" / "attributes.json"))["blockSize"][0]
                .get<uint64_t>();
    old_attrs = test::read_file(root / "old" / "vol" / "attributes.json");
    new_attrs = test::read_file(root / "new" / "vol" / "attributes.json");
    Subject s;
    s.name = "n5";
    s.work = root / "work";
    const fs::path container = s.work / "c.n5";
    s.command = [=](bool, bool) { return Args{writer_exe(), "n5", container.string(), "1"}; };
    s.prepare = [=](bool over_old) { restore(s.work, root / "ref", over_old); };
    s.check = [this, container](bool over_old, const std::string& where) {
      return check(container, over_old, where);
    };
    // The old container lives under refs/c.n5 so `work` mirrors it.
    fs::create_directories(root / "ref");
    fs::copy(root / "old", root / "ref" / "c.n5", fs::copy_options::recursive);
    s.allowed_finals = finals_of({root / "ref"});
    return s;
  }
};

// ---- the six writers
// ------------------------------------------------------------------------------

// A temporary directory with a place for the children's output.
struct Scratch {
  test::TempDir tmp;
  fs::path logs = tmp / "logs";
  Scratch() {
    fs::create_directories(logs);
    // crash_writer creates this file once it starts writing (random_kills).
    ::setenv("STOWAGE_CRASH_MARKER", (logs / "writing.marker").c_str(), 1);
  }
};

struct N5Case : Scratch {
  N5Chunks n5{tmp / "n5", {}, {}, {}, {}, {}, {}, 0};
  Subject s = n5.subject(logs);
};

struct WholeCase : Scratch {
  WholeDataset d;
  Subject s;
  WholeCase(const std::string& kind, const std::string& file, bool files_deterministic,
            const std::string& format = {}, const std::string& node = {}) {
    d.root = tmp / kind;
    d.name = kind;
    d.format = format.empty() ? kind : format;
    d.node = node;
    d.file = file;
    d.files_deterministic = files_deterministic;
    s = d.subject(logs, kind);
  }
};

// The node matrices/cell/gene/x of a Daf repository with axes cell and gene:
// refs base (axes only), old (base + node v0), new (base + node v1).
struct DafCase : Scratch {
  fs::path root = tmp / "daf";
  std::string node = "matrices/cell/gene/x";
  std::string old_snap, new_snap;
  Subject s;

  DafCase() {
    const fs::path log = logs / "daf.log";
    for (const char* which : {"base", "old", "new"})
      run_complete({writer_exe(), "daf-axes", (root / which / "r").string()}, log);
    run_complete({writer_exe(), "daf", (root / "old" / "r").string(), "0"}, log);
    run_complete({writer_exe(), "daf", (root / "new" / "r").string(), "1"}, log);
    old_snap = *snapshot((root / "old" / "r").string(), "daf", node);
    new_snap = *snapshot((root / "new" / "r").string(), "daf", node);
    REQUIRE(old_snap != new_snap);
    const std::string axis = *snapshot((root / "base" / "r").string(), "daf", "axes/cell");
    s.name = "daf";
    s.work = root / "work";
    const fs::path repo = s.work / "r";
    s.command = [=](bool, bool) { return Args{writer_exe(), "daf", repo.string(), "1"}; };
    s.prepare = [this](bool over_old) {
      restore(s.work, root / (over_old ? "old" : "base"), true);
    };
    s.check = [this, repo, axis](bool over_old, const std::string& where) {
      Outcome o = judge(
          "daf", [&] { return snapshot(repo.string(), "daf", node); }, old_snap, new_snap, over_old,
          where);
      try {  // the rest of the repository is untouched
        const bool same = snapshot(repo.string(), "daf", "axes/cell") == axis;
        CHECK(same);
        if (!same) o = Outcome::other;
      } catch (const std::exception& e) {
        FAIL_CHECK(where << ": reading axes/cell failed: " << std::string(e.what()));
        o = Outcome::other;
      }
      return o;
    };
    s.allowed_finals = finals_of({root / "old", root / "new", root / "base"});
  }
};

// stowage-convert of an npy file (v1) into out.n5, over a conversion of v0
// (--overwrite) or into a new destination.
struct ConvertCase : Scratch {
  fs::path root = tmp / "convert";
  fs::path src0 = root / "src" / "a0.npy", src1 = root / "src" / "a1.npy";
  std::string old_snap, new_snap;
  Subject s;

  static Args convert_args(const fs::path& from, const fs::path& to, bool overwrite) {
    Args a = {convert_exe(), "--quiet", "--compression", "gzip:level=1", "--chunks", "128,128"};
    if (overwrite) a.push_back("--overwrite");
    a.push_back(from.string());
    a.push_back(to.string());
    return a;
  }
  static std::optional<std::string> read(const fs::path& p) {
    return snapshot(p.string(), "n5", "");
  }

  ConvertCase() {
    const fs::path log = logs / "convert.log";
    fs::create_directories(root / "src");
    run_complete({writer_exe(), "npy", src0.string(), "0"}, log);
    run_complete({writer_exe(), "npy", src1.string(), "1"}, log);
    fs::create_directories(root / "old");
    fs::create_directories(root / "new");
    run_complete(convert_args(src0, root / "old" / "out.n5", false), log);
    run_complete(convert_args(src1, root / "new" / "out.n5", false), log);
    old_snap = *read(root / "old" / "out.n5");
    new_snap = *read(root / "new" / "out.n5");
    REQUIRE(old_snap != new_snap);
    REQUIRE(new_snap == *snapshot(src1.string(), "npy", ""));  // the conversion itself is right
    s.name = "convert";
    s.work = root / "work";
    const fs::path dst = s.work / "out.n5", from = src1;
    s.command = [=](bool over_old, bool traced) {
      Args a = convert_args(from, dst, over_old);
      if (traced) a.insert(a.begin() + 1, {"--threads", "1"});  // strace counts renames per thread
      return a;
    };
    s.prepare = [this](bool over_old) { restore(s.work, root / "old", over_old); };
    s.check = [this, dst](bool over_old, const std::string& where) {
      return judge("convert", [&] { return read(dst); }, old_snap, new_snap, over_old, where);
    };
    // stowage-convert has no marker: it is writing once its staging
    // directory (the storage's ".out.n5.stowage-tmp.<pid>.<n>") exists.
    s.started = [work = s.work](pid_t pid) {
      const std::string prefix = ".out.n5.stowage-tmp." + std::to_string(pid) + ".";
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(work, ec))
        if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
      return false;
    };
    s.allowed_finals = finals_of({root / "old", root / "new"});
  }

  // A complete run removes the staging directories of killed ones.
  void check_cleanup() {
    s.prepare(true);
    run_complete(s.command(true, false), logs / "convert.log");
    for (const auto& [rel, pid] : list_tree(s.work).temps)
      CHECK_MESSAGE(rel.rfind(".out.n5.stowage-tmp.", 0) != 0,
                    "convert: stale staging directory " << rel << " was not removed");
    CHECK(*read(s.work / "out.n5") == new_snap);
  }
};

// Runs argv as a process whose pid is known before it starts: the child
// waits until `before(pid)` has run in the parent, then execs (exec keeps the
// pid). Returns the exit.
Exit run_with_known_pid(const Args& argv, const fs::path& log,
                        const std::function<void(pid_t)>& before) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int go[2];
  REQUIRE(::pipe(go) == 0);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    char c;
    ::close(go[1]);
    while (::read(go[0], &c, 1) < 0 && errno == EINTR) {
    }
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(go[0]);
  ::close(out);
  before(pid);
  ::close(go[1]);  // go
  return wait_for(pid);
}

// Temporaries named as a killed process with this pid would have left them,
// for each entry of `names` (paths relative to dir) and counters 0..n-1.
void plant_temporaries(const fs::path& dir, const std::set<std::string>& names, pid_t pid, int n) {
  for (const std::string& rel : names) {
    const fs::path p = dir / rel;
    for (int i = 0; i < n; ++i) {
      const fs::path tmp = p.parent_path() / ("." + p.filename().string() + ".stowage-tmp." +
                                              std::to_string(pid) + "." + std::to_string(i));
      fs::create_directories(tmp.parent_path());
      test::write_file(tmp, "left by a killed writer");
    }
  }
}

}  // namespace

TEST_CASE("N5: a writer killed at random moments leaves every chunk old or new") {
  N5Case c;
  random_kills(c.s, c.logs, 1);
}
TEST_CASE("N5: a writer killed at a chunk's rename leaves every chunk old or new") {
  N5Case c;
  rename_kills(c.s, c.logs, c.tmp.path());
}

TEST_CASE("datg: a writer killed at random moments leaves the old matrix, the new one, or none") {
  WholeCase c("datg", "m.datg", false);
  random_kills(c.s, c.logs, 2);
}
// datg's four files are one journaled file set (one storage publish): a kill
// between their renames is finished by the next open.
TEST_CASE(
    "datg: a writer killed at each commit rename leaves the old matrix, the new one, or none") {
  WholeCase c("datg", "m.datg", false);
  rename_kills(c.s, c.logs, c.tmp.path());
}

TEST_CASE(
    "BPCells: a writer killed at random moments leaves the old matrix, the new one, or none") {
  WholeCase c("bpcells", "m", true);
  random_kills(c.s, c.logs, 3);
}
TEST_CASE(
    "BPCells: a writer killed at each commit rename leaves the old matrix, the new one, or none") {
  WholeCase c("bpcells", "m", true);
  rename_kills(c.s, c.logs, c.tmp.path());
}

// datadings' six files are one journaled file set (one storage publish): a
// kill between their renames is finished by the next open.
TEST_CASE(
    "datadings: a writer killed at random moments leaves the old dataset, the new one, or none") {
  WholeCase c("datadings", "d.msgpack", true);
  random_kills(c.s, c.logs, 4);
}
TEST_CASE(
    "datadings: a writer killed at each commit rename leaves the old dataset, the new one, or none") {
  WholeCase c("datadings", "d.msgpack", true);
  rename_kills(c.s, c.logs, c.tmp.path());
}

// A whole repository replaced (Daf's "w"), with its axes and a node.
struct DafRepoCase : WholeCase {
  DafRepoCase() : WholeCase("daf-repo", "r", false, "daf", "matrices/cell/gene/x") {}
};

TEST_CASE(
    "Daf: a repository replaced and killed at random moments is the old one, the new one, or none") {
  DafRepoCase c;
  random_kills(c.s, c.logs, 7);
}
TEST_CASE(
    "Daf: a repository replaced and killed at each commit rename is the old one, the new one, or none") {
  DafRepoCase c;
  rename_kills(c.s, c.logs, c.tmp.path());
}

TEST_CASE("Daf: a node rewritten and killed at random moments is the old node or the new one") {
  DafCase c;
  random_kills(c.s, c.logs, 5);
}
TEST_CASE("Daf: a node rewritten and killed at each commit rename is the old node or the new one") {
  DafCase c;
  rename_kills(c.s, c.logs, c.tmp.path());
}

TEST_CASE(
    "stowage-convert: killed at random moments, it leaves the old destination, the new one, or none") {
  ConvertCase c;
  random_kills(c.s, c.logs, 6);
  c.check_cleanup();
}
// With --overwrite, publish() exchanges the new destination with the old one
// in one step (RENAME_EXCHANGE), or publishes several files as a journaled set.
TEST_CASE(
    "stowage-convert: killed at each rename, it leaves the old destination, the new one, or none") {
  ConvertCase c;
  rename_kills(c.s, c.logs, c.tmp.path());
  c.check_cleanup();
}

// Temporaries are named ".<name>.stowage-tmp.<pid>.<counter>" and created with
// O_EXCL: a writer whose pid equals that of a killed one (a restarted
// container: pids start at 1 again) must take the next free name rather than
// fail. The child's pid is known before it execs, so the stale names are
// planted exactly.
TEST_CASE("a writer with the pid of a killed one is not blocked by its temporaries") {
  for (auto [kind, file] : {std::pair<std::string, std::string>{"datg", "m.datg"},
                            {"bpcells", "m"},
                            {"datadings", "d.msgpack"}}) {
    CAPTURE(kind);
    WholeCase c(kind, file, false);
    c.s.prepare(true);
    const std::set<std::string> names = c.s.allowed_finals;
    Exit e = run_with_known_pid(c.s.command(true, false), c.logs / "pid.log", [&](pid_t pid) {
      plant_temporaries(c.s.work, names, pid, int(names.size()) + 8);
    });
    CHECK_MESSAGE(e.status == 0, kind << ": the writer tripped over a stale temporary: "
                                      << log_tail(c.logs / "pid.log"));
    if (e.status == 0) c.s.check(true, kind + " beside stale temporaries of its own pid");
  }
}

// ---- what killed writers leave is removed
// --------------------------------------------------------

namespace {

// Issue 30: temporaries of killed writers piled up (364 after 25 kills) and
// stayed after a clean rewrite. The writer is SIGKILLed `kills` times at
// random moments over the old content, then runs to the end: the first
// stage into a directory removes the temporaries of writers that are gone,
// so nothing hidden is left beside the new content.
void killed_then_clean(Subject& s, const fs::path& logs, int kills) {
  const fs::path log = logs / (s.name + "-sweep.log");
  auto started = [&](pid_t pid) { return s.started(pid); };
  s.prepare(true);
  fs::remove(marker_file());
  const double window = run_complete_writing(s.command(true, false), log, started);
  std::mt19937_64 rng(seed() ^ 0x5e3e9);
  std::uniform_real_distribution<double> uniform(0.2, 0.9);  // well inside the writing window
  int killed = 0;
  size_t left = 0, most = 0;  // temporaries the killed writers left; most at once
  std::set<std::string> seen;
  // Each over what the last left (prepare would wipe N5's chunk directories).
  // A chunk is staged for microseconds, so where `kills` caught none (a busy
  // machine shifts the moments), more are tried, up to four times as many.
  for (int k = 0; k < kills || (left == 0 && k < 4 * kills); ++k) {
    fs::remove(marker_file());
    bool mid_write = false;
    killed += run_killed_while_writing(s.command(true, false), uniform(rng) * window, log, started,
                                       &mid_write)
                  .killed;
    const Listing now = list_tree(s.work);
    for (const auto& [rel, pid] : now.temps) left += seen.insert(rel).second;
    most = std::max(most, now.temps.size());
  }
  fs::remove(marker_file());
  run_complete(s.command(true, false), log);
  const Listing after = list_tree(s.work);
  std::cout << s.name << ": " << killed << " writers killed left " << left << " temporaries ("
            << most
            << " at most at once: each writer removed those before it); after one clean run: "
            << after.temps.size() << std::endl;
  CHECK_MESSAGE(left > 0,
                s.name << ": no killed writer left a temporary, so the sweep is not tested");
  for (const auto& [rel, pid] : after.temps)
    FAIL_CHECK(s.name << ": temporary " << rel << " of killed writer " << pid << " left");
  CHECK(s.check(true, s.name + " after the clean run") == Outcome::new_state);
}

}  // namespace

TEST_CASE(
    "N5: temporaries of writers killed at random moments are gone after the next clean write") {
  N5Case c;
  killed_then_clean(c.s, c.logs, 20);  // a chunk is staged briefly: fewer kills catch one
}

TEST_CASE(
    "BPCells and datg: temporaries of killed writers (staged directories, file sets) are gone after a clean write") {
  for (auto [kind, file] :
       {std::pair<std::string, std::string>{"bpcells", "m"}, {"datg", "m.datg"}}) {
    CAPTURE(kind);
    WholeCase c(kind, file, false);
    killed_then_clean(c.s, c.logs, 8);
  }
}

// ---- two writers at once ------------------------------------------------------------------------

namespace {

// Two crash_writer processes writing the same destination at once, one as
// version 0 and one as version 1, `rounds` times (odd rounds over what the
// previous round left, even ones into a new destination). Each must exit 0 or
// with a clear error naming the destination; what is left must be one
// version as a whole -- the same dataset through the API and, when the files
// are deterministic, every file from that one version -- and no temporaries.
// Modes: `free`; `delayed`, both under strace with every rename delayed by
// 30 ms, so their commits overlap instead of being microseconds long;
// `forced`, writer 0's last rename (the end of its commit) held for 2 s while
// writer 1, started with it, writes and commits: a commit that does not wait
// for the other's would leave its files beside writer 0's last one.
enum class Overlap { free, delayed, forced };

void two_writers(WholeCase& c, int rounds, Overlap mode) {
  WholeDataset& d = c.d;
  const fs::path target = c.s.work / d.file;
  const bool traced = mode != Overlap::free;
  const char* mode_name = mode == Overlap::free      ? ""
                          : mode == Overlap::delayed ? " (renames delayed)"
                                                     : " (writer 0's last rename held)";
  RenameCall last;
  if (mode == Overlap::forced) {  // writer 0's renames into a new destination, one thread
    restore(c.s.work, d.dir("old"), false);
    const std::vector<RenameCall> calls =
        trace_renames({writer_exe(), d.name, target.string(), "0"}, c.tmp.path(),
                      c.logs / (d.name + "-count.log"));
    REQUIRE(!calls.empty());
    last = calls.back();
  }
  int wins[2] = {0, 0}, errors = 0;
  for (int round = 0; round < rounds; ++round) {
    const bool over_old = mode != Overlap::forced && round % 2 == 1;
    if (!over_old) restore(c.s.work, d.dir("old"), false);
    const std::string where = d.name + " round " + std::to_string(round) + mode_name +
                              (over_old ? " over the previous result" : " into a new destination");
    CAPTURE(where);
    pid_t pids[2];
    fs::path logs[2];
    for (int v = 0; v < 2; ++v) {
      Args argv = {writer_exe(), d.name, target.string(), std::to_string(v)};
      if (mode == Overlap::delayed || (mode == Overlap::forced && v == 0)) {
        const std::string inject = mode == Overlap::delayed
                                       ? "inject=rename,renameat,renameat2:delay_enter=30000"
                                       : "inject=" + last.syscall + ":delay_enter=2000000:when=" +
                                             std::to_string(last.ordinal);
        Args a = {strace_exe(),  "-f", "-qq",       "-E", "STOWAGE_CRASH_THREADS=1",         "-E",
                  no_leak_check, "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e",
                  inject,        "--"};
        a.insert(a.end(), argv.begin(), argv.end());
        argv = a;
      }
      logs[v] =
          c.logs / (d.name + "-two-" + std::to_string(round) + "-" + std::to_string(v) + ".log");
      pids[v] = spawn(argv, logs[v]);
    }
    Exit e[2] = {wait_for(pids[0]), wait_for(pids[1])};
    for (int v = 0; v < 2; ++v) {
      if (e[v].status == 0) continue;
      ++errors;
      const std::string out = log_tail(logs[v]);
      CHECK_MESSAGE(e[v].status == 1,
                    where << ": writer " << v << " died (status " << e[v].status << "): " << out);
      CHECK_MESSAGE(out.find(target.string()) != std::string::npos,
                    where << ": writer " << v << "'s error does not name the destination: " << out);
    }
    REQUIRE_MESSAGE((e[0].status == 0 || e[1].status == 0),
                    where << ": both writers failed: " << log_tail(logs[0]) << log_tail(logs[1]));
    std::optional<std::string> got;
    try {
      got = snapshot(target.string(), d.format, d.node);
    } catch (const std::exception& ex) {
      FAIL_CHECK(where << ": reading the result failed: " << std::string(ex.what()));
      continue;
    }
    REQUIRE_MESSAGE(got.has_value(), where << ": no dataset after two writers");
    const bool is0 = *got == d.old_snap, is1 = *got == d.new_snap;
    CHECK_MESSAGE((is0 || is1), where << ": the dataset is a mix of both writers");
    if (is0 || is1) ++wins[is1 ? 1 : 0];
    if (d.files_deterministic) {
      const auto files = WholeDataset::files_in(c.s.work);
      std::string detail;
      for (const auto& [rel, bytes] : files) {
        const auto o = d.old_files.find(rel), n = d.new_files.find(rel);
        detail += " " + rel +
                  (n != d.new_files.end() && n->second == bytes   ? "=v1"
                   : o != d.old_files.end() && o->second == bytes ? "=v0"
                                                                  : "=other");
      }
      CHECK_MESSAGE((files == d.old_files || files == d.new_files),
                    where << ": files from both writers:" << detail);
    }
    for (const auto& [rel, pid] : list_tree(c.s.work).temps)
      FAIL_CHECK(where << ": temporary " << rel << " of writer " << pid << " left behind");
  }
  (void)traced;
  std::cout << d.name << mode_name << ": " << rounds << " rounds of two writers: v0 won " << wins[0]
            << ", v1 won " << wins[1] << ", " << errors << " clear errors" << std::endl;
}

}  // namespace

// Issue 21: two processes writing one destination at once (npy, datg,
// BPCells, datadings). Whatever the interleaving, the result is one writer's
// whole dataset, never a mix; the loser may fail, but with an error naming
// the destination. Runs free, with every rename delayed so that the two
// commits overlap, and with writer 0's commit held open at its last rename.
TEST_CASE("two writers of one destination at once: one writer's whole result or a clear error") {
  for (auto [kind, file, deterministic] :
       {std::tuple<std::string, std::string, bool>{"npy", "a.npy", true},
        {"datg", "m.datg", false},
        {"bpcells", "m", true},
        {"datadings", "d.msgpack", true}}) {
    CAPTURE(kind);
    WholeCase c(kind, file, deterministic);
    two_writers(c, 6, Overlap::free);
    two_writers(c, 4, Overlap::delayed);
    two_writers(c, 2, Overlap::forced);
  }
}

// Issue 21: two processes adding different properties (vectors/cell/p0 and
// vectors/cell/p1, `crash_writer daf-vector`, mode r+) to one [1,1]
// repository at once. Nothing in plugins/formats/daf/README.md allows the
// loser to fail or lose its property, so both must be there afterwards, with
// their values, and metadata.json must list both (the independent reader
// tests/daf/daf_peer.py reports any descriptor metadata.json disagrees with).
// Runs free, then forced: writer 0's rename of metadata.json (its last
// rename) is delayed by strace until writer 1 has finished, so writer 0
// publishes a metadata.json built before writer 1's property existed unless
// the two closes are serialised.
TEST_CASE(
    "Daf [1,1]: two processes adding different properties at once both land, metadata.json lists both") {
  Scratch sc;
  const fs::path root = sc.tmp / "daf-two", log = sc.logs / "daf-two.log";
  const uint64_t cells = 1500;
  auto fresh = [&](const fs::path& repo) {
    fs::remove_all(repo);
    fs::create_directories(repo.parent_path());
    run_complete({writer_exe(), "daf-axes", repo.string(), "1.1"}, log);
  };
  auto check = [&](const fs::path& repo, const std::string& where) {
    CAPTURE(where);
    stowage::Registry registry;
    stowage::Store s =
        stowage::Store::open(repo.string(), stowage::Mode::read, "daf", json::object(), registry);
    for (const char* name : {"p0", "p1"}) {
      std::vector<double> got = s.array(std::string("vectors/cell/") + name).read_all<double>();
      REQUIRE(got.size() == cells);
      size_t wrong = 0;
      for (uint64_t i = 0; i < cells; ++i)
        wrong += got[i] != double(i) * 0.5 + double(uint8_t(name[1]));
      CHECK_MESSAGE(wrong == 0, name << ": " << wrong << " wrong values");
    }
    json peer = daf_test::peer_read(repo);
    CHECK(peer["version"] == json::array({1, 1}));
    CHECK(peer["has_metadata"] == true);
    CHECK_MESSAGE(peer["problems"].empty(), peer["problems"].dump());
    CHECK(peer["vectors"]["cell"].contains("p0"));
    CHECK(peer["vectors"]["cell"].contains("p1"));
    const json metadata = test::read_json(repo / "metadata.json");
    CHECK_MESSAGE(metadata.contains("vectors/cell/p0"), metadata.dump());
    CHECK_MESSAGE(metadata.contains("vectors/cell/p1"), metadata.dump());
  };
  const fs::path repo = root / "r";
  for (int round = 0; round < 4; ++round) {
    fresh(repo);
    pid_t a = spawn({writer_exe(), "daf-vector", repo.string(), "p0"}, log);
    pid_t b = spawn({writer_exe(), "daf-vector", repo.string(), "p1"}, log);
    Exit ea = wait_for(a), eb = wait_for(b);
    REQUIRE_MESSAGE((ea.status == 0 && eb.status == 0), log_tail(log));
    check(repo, "free round " + std::to_string(round));
  }
  // Forced: count writer 0's renames on a scratch copy, then delay its last one.
  const fs::path probe = root / "probe" / "r";
  fresh(probe);
  const std::vector<RenameCall> calls =
      trace_renames({writer_exe(), "daf-vector", probe.string(), "p0"}, sc.tmp.path(), log);
  REQUIRE(!calls.empty());
  fresh(repo);
  const RenameCall& last = calls.back();
  pid_t a =
      spawn({strace_exe(), "-f", "-qq", "-E", "STOWAGE_CRASH_THREADS=1", "-E", no_leak_check, "-o",
             "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e",
             "inject=" + last.syscall + ":delay_enter=2000000:when=" + std::to_string(last.ordinal),
             "--", writer_exe(), "daf-vector", repo.string(), "p0"},
            log);
  // Writer 0 has built its metadata.json once its temporary appears.
  auto metadata_temp = [&] {
    for (const auto& e : fs::directory_iterator(repo))
      if (e.path().filename().string().rfind(".metadata.json.stowage-tmp.", 0) == 0) return true;
    return false;
  };
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!metadata_temp() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const bool forced = metadata_temp();
  Exit eb = wait_for(spawn({writer_exe(), "daf-vector", repo.string(), "p1"}, log));
  Exit ea = wait_for(a);
  REQUIRE_MESSAGE((ea.status == 0 && eb.status == 0), log_tail(log));
  std::cout
      << "daf [1,1] two writers: writer 1 started while writer 0's metadata.json rename was held: "
      << (forced ? "yes" : "no") << std::endl;
  check(repo, "forced interleaving");
}
