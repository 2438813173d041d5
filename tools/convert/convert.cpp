// stowage-convert: a command-line layer over stowage::copy (copy.hpp), which
// does the conversion, the staging and the publishing. Here: the options,
// Ctrl-C, the progress bar, and the summary.
#include "tool.hpp"

#include <stowage/copy.hpp>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) { g_interrupted = true; }

struct Options {
  std::string src, dst, compression, chunks, cast, axes, part, shards, cast_overflow = "error";
  std::vector<std::string> open_options, source_storage, destination_storage;
  int zarr_version = 0;  // 0: not given; else shorthand for --open-option zarr_version=N
  bool quiet = false, as_json = false;
  stowage::CopyOptions copy;
};

// A bar on standard error, at most every 200 ms (and at the end).
std::function<void(const stowage::CopyProgress&)> progress_bar() {
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last](const stowage::CopyProgress& p) {
    auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(200) && p.bytes_done < p.bytes_total) return;
    *last = now;
    double rate = p.seconds > 0 ? p.bytes_done / p.seconds : 0;
    double frac = p.bytes_total ? static_cast<double>(p.bytes_done) / p.bytes_total : 1.0;
    int bar = static_cast<int>(std::min(frac, 1.0) * 30);
    double eta =
        rate > 0 && p.bytes_total > p.bytes_done ? (p.bytes_total - p.bytes_done) / rate : 0;
    std::fprintf(stderr, "\r[%s%s] %5.1f%%  %.1f/%.1f MB  %llu chunks  %.1f MB/s  %.0fs left ",
                 std::string(bar, '#').c_str(), std::string(30 - bar, '.').c_str(), 100 * frac,
                 p.bytes_done / 1e6, p.bytes_total / 1e6, static_cast<unsigned long long>(p.chunks),
                 rate / 1e6, eta);
  };
}

int convert(Options& opts, stowage::Registry& registry) {
  stowage::CopyOptions& o = opts.copy;
  o.compression = stowage::parse_compression_spec(opts.compression);
  if (!opts.chunks.empty()) o.chunks = stowage::parse_positive_list(opts.chunks, "--chunks");
  if (!opts.shards.empty()) o.shards = stowage::parse_positive_list(opts.shards, "--shards");
  for (const std::string& option : opts.open_options) stowage::parse_open_option(option, o);
  for (const std::string& option : opts.source_storage)
    stowage::parse_key_value(option, o.source_storage, "--source-storage-option");
  for (const std::string& option : opts.destination_storage)
    stowage::parse_key_value(option, o.destination_storage, "--destination-storage-option");
  if (opts.zarr_version != 0)
    o.open_options["zarr_version"] = opts.zarr_version;  // checked by the format's schema
  stowage::parse_cast_spec(opts.cast, o);
  o.cast_overflow = stowage::parse_cast_overflow(opts.cast_overflow);
  if (!opts.part.empty()) stowage::parse_part_spec(opts.part, o);
  if (!opts.axes.empty()) o.axes = stowage::parse_name_list(opts.axes);
  o.cancel = &g_interrupted;
  const bool bar = !opts.quiet && ::isatty(2);
  if (bar) o.progress = progress_bar();

  stowage::CopyResult r = stowage::copy(opts.src, opts.dst, o, registry);
  if (bar) std::fprintf(stderr, "\n");

  if (!opts.quiet)
    for (const auto& note : r.notes) std::cerr << "stowage-convert: note: " << note << "\n";
  stowage::json summary = stowage::copy_summary_json(r, opts.src, opts.dst);
  if (opts.as_json) {
    if (!opts.part.empty()) summary["part"] = opts.part;
    std::cout << summary.dump(2) << "\n";
  } else if (!opts.quiet) {
    std::fprintf(
        stderr,
        "%s (%s) -> %s (%s): %llu nodes, %.2f MB in, %.2f MB out, ratio %.2f, %.2f s, %.1f MB/s\n",
        opts.src.c_str(), r.from.c_str(), opts.dst.c_str(), r.to.c_str(),
        static_cast<unsigned long long>(r.nodes), r.bytes_in / 1e6, r.bytes_out / 1e6,
        summary["ratio"].get<double>(), r.seconds, summary["mb_per_s"].get<double>());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Convert any supported dataset to any other.\n"
      "SRC and DST may name a node inside a container as PATH::inner/node.",
      "stowage-convert"};
  stowage::tool::CommonOptions common;
  stowage::tool::add_common_options(app, common);
  Options opts;
  stowage::CopyOptions& o = opts.copy;
  app.add_option("SRC", opts.src, "Source dataset (PATH or PATH::inner/node)")->required();
  app.add_option("DST", opts.dst, "Destination (PATH or PATH::inner/node)")->required();
  app.add_option("--from", o.from, "Source format id (default: detect)");
  app.add_option(
      "--to", o.to,
      "Destination format id (default: from the extension: .n5 .zarr .datg .msgpack .npy)");
  app.add_option("--compression", opts.compression,
                 "Codec: N5's JSON object, or a short form such as zstd or gzip:level=9");
  app.add_option("--chunks", opts.chunks, "Chunk shape in C order, e.g. 64,64,64");
  app.add_option(
      "--zarr-version", opts.zarr_version,
      "Shorthand for --open-option zarr_version=N: write Zarr 2 or 3 (default 3 for a new store)");
  app.add_option(
      "--shards", opts.shards,
      "Shard shape in C order, a multiple of the chunks, e.g. 256,256,256, for a format that writes "
      "shards (Zarr v3)");
  app.add_option(
      "--open-option", opts.open_options,
      "KEY=VALUE the destination store is opened with, one its format declares (stowage-plugin-list "
      "--detail ID shows them; VALUE as JSON where it parses; repeatable), e.g. zarr_version=2");
  stowage::tool::add_storage_option(app, "--source-storage-option", opts.source_storage,
                                    "the source's");
  stowage::tool::add_storage_option(app, "--destination-storage-option", opts.destination_storage,
                                    "the destination's");
  app.add_option("--cast", opts.cast,
                 "Convert values: T (every array to T) or FROM=TO[,...] such as bool=uint8");
  app.add_option("--cast-overflow", opts.cast_overflow,
                 "A value the cast type cannot hold: error (default), clip, or wrap (integers)");
  app.add_option("--axes", opts.axes, "Dimension names for sources without them, e.g. gene,cell");
  app.add_flag("--overwrite", o.overwrite, "Replace an existing destination or node");
  app.add_flag("--quiet", opts.quiet, "No progress bar, notes or summary");
  app.add_flag("--json", opts.as_json, "Print a machine-readable summary (schema in README.md)");
  app.add_flag(
      "--drop-metadata", o.drop_metadata,
      "Drop the attributes and labels the destination cannot keep (e.g. into .npy), listing them in the notes");
  app.add_flag("--create-only", o.create_only,
               "Create the destination's structure without data, for later --part runs");
  app.add_option(
      "--part", opts.part,
      "Write only part I of N (I/N, 0-based) of the chunks into an existing destination");
  STOWAGE_TOOL_PARSE(app, argc, argv);

  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);

  return stowage::tool::run(app,
                            [&] { return convert(opts, stowage::tool::make_registry(common)); });
}
