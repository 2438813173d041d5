// What every stowage command-line tool shares: --help/--version/--plugin-path,
// --threads, and one place that turns errors into exit codes
// (0 success, 1 data or I/O error, 2 usage error).
#pragma once

#include <stowage/stowage.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace stowage::tool {

struct CommonOptions {
  std::vector<std::string> plugin_paths;
  unsigned threads = 0;  // 0: all cores
};

inline void add_common_options(CLI::App& app, CommonOptions& opts, bool with_threads = true) {
  app.set_version_flag("--version", std::string(app.get_name()) + " (stowage " +
                                        stowage::version() + ", plugin ABI " +
                                        std::to_string(STOWAGE_PLUGIN_ABI) + ")");
  app.add_option(
      "--plugin-path", opts.plugin_paths,
      "Directory searched for plugins before STOWAGE_PLUGIN_PATH and the default (repeatable)");
  if (with_threads)
    app.add_option("--threads", opts.threads, "Worker threads (default: all cores)");
}

// A repeatable KEY=VALUE option for the storage options of `whose` backend
// (stowage::parse_key_value reads them; Registry::bind_storage_options checks them).
inline void add_storage_option(CLI::App& app, const char* flag, std::vector<std::string>& into,
                               const char* whose) {
  app.add_option(
      flag, into,
      std::string("KEY=VALUE for ") + whose +
          " storage backend, one it declares (stowage-plugin-list --detail SCHEME "
          "shows them; VALUE as JSON where it parses; repeatable), e.g. timeout_ms=5000");
}

// The registry for a tool run: --plugin-path first, then the environment.
inline Registry& make_registry(const CommonOptions& opts) {
  static std::unique_ptr<Registry> registry;
  Registry::Options o;
  o.paths = opts.plugin_paths;
  registry = std::make_unique<Registry>(o);
  if (opts.threads) registry->set_threads(opts.threads);
  return *registry;
}

// Runs a tool body, mapping failures to exit codes with a message on stderr.
template <class Body>
int run(const CLI::App& app, Body&& body) {
  try {
    return body();
  } catch (const stowage::Error& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\n";
    return e.code() == ErrorCode::invalid_argument ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace stowage::tool

// Parses the command line; usage errors exit with 2 (CLI11's --help exits 0).
#define STOWAGE_TOOL_PARSE(app, argc, argv) \
  try {                                     \
    (app).parse((argc), (argv));            \
  } catch (const CLI::ParseError& e) {      \
    int code = (app).exit(e);               \
    return code == 0 ? 0 : 2;               \
  }
