// How long finding and loading every plugin takes: in process (scan the
// plugin path, dlopen each file, check its descriptor) and as a whole
// `stowage-plugin-list` process, which is what a user waits for.
//
// usage: plugin_load_bench PATH/TO/stowage-plugin-list [runs]
// (STOWAGE_PLUGIN_PATH must name the plugin directories, as meson's
//  `meson devenv` or the tests set it.)
#include <stowage/stowage.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs a program with its output discarded; returns milliseconds.
double time_process(const std::vector<std::string>& argv) {
  std::fflush(stdout);  // or the child repeats what we printed
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return ms_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH/TO/stowage-plugin-list [runs]\n", argv[0]);
    return 2;
  }
  int runs = argc > 2 ? std::atoi(argv[2]) : 30;

  auto t0 = Clock::now();
  stowage::Registry registry;
  auto found = registry.plugins(false);
  double scan_ms = ms_since(t0);
  t0 = Clock::now();
  auto loaded = registry.plugins(true);
  double load_ms = ms_since(t0);
  size_t ok = std::count_if(loaded.begin(), loaded.end(), [](const stowage::PluginInfo& p) {
    return p.state == stowage::PluginState::loaded;
  });
  std::printf(
      "in process: scan %.3f ms (%zu plugin files), load and check all %.3f ms (%zu loaded, %.3f ms each)\n",
      scan_ms, found.size(), load_ms, ok, ok ? load_ms / ok : 0.0);

  std::vector<double> list_ms, empty_ms;
  for (int i = 0; i < runs; ++i) {
    list_ms.push_back(time_process({argv[1]}));
    empty_ms.push_back(time_process({argv[1], "--version"}));
  }
  std::printf(
      "whole process, median of %d: stowage-plugin-list (loads every plugin) %.2f ms; "
      "stowage-plugin-list --version (loads none) %.2f ms\n",
      runs, median(list_ms), median(empty_ms));
  return 0;
}
