// stowage::copy: any supported dataset, or one node of it, into any other
// format, as one library call (stowage-convert is a command-line layer over
// it, as gdal_translate is over GDALTranslate()).
//
//   stowage::CopyOptions o;
//   o.compression = stowage::parse_compression_spec("zstd:level=5");
//   stowage::CopyResult r = stowage::copy("volume.n5", "volume-zstd.n5", o);
//
// Source and destination are "PATH" or "PATH::inner/node". A new destination
// is built in a hidden directory beside it and renamed into place whole; an
// error, a cancellation or a kill leaves no destination.
#ifndef STOWAGE_COPY_HPP
#define STOWAGE_COPY_HPP

#include <stowage/stowage.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stowage {

struct CopyProgress {
  uint64_t bytes_done = 0, bytes_total = 0;  // decoded bytes of the source
  uint64_t chunks = 0;                       // chunks (or slabs) written so far
  double seconds = 0;                        // since the copy started
};

// What a cast does with a value the new type cannot hold (uint32 4294967295
// as int8, float 1e20 as int32, NaN as an integer): fail naming the value and
// its index, clip it to the nearest value the type holds (NaN -> 0), or wrap
// it modulo 2^bits (integer to integer only; other values still fail).
enum class CastOverflow { error, clip, wrap };

struct CopyOptions {
  std::string from;  // source format id; "" detects it
  std::string to;    // destination format id; "" takes it from the destination's extension
  // The codec of every array written (N5's compression object). Null: within one
  // format each array keeps its codec, across formats the destination's default.
  json compression;
  std::vector<uint64_t> chunks;  // chunk shape (C order); empty: the source's
  // What the destination store is opened with, by name: the open options its
  // format declares (its params_schema, `stowage-plugin-list --detail ID`),
  // checked against that declaration before anything is written.
  json open_options = json::object();
  // The storage options of the source's and the destination's backends
  // (Registry::bind_storage_options: timeouts, retries, headers...), bound
  // to their paths for the copy. Never in the summary: they may hold secrets.
  json source_storage = json::object(), destination_storage = json::object();
  // Shard shape (C order) of every array written, passed in each array's
  // create description as "shards", a multiple of the chunks. Empty: no
  // shards. Only a format that declares STOWAGE_CAP_SHARDS takes it.
  std::vector<uint64_t> shards;
  std::optional<DType> cast_all;  // every array to this dtype
  std::map<DType, DType> casts;   // named conversions (bool -> uint8, ...)
  CastOverflow cast_overflow = CastOverflow::error;
  std::vector<std::string> axes;  // dimension names for sources without them
  bool overwrite = false;         // replace an existing destination or node
  bool drop_metadata = false;     // drop what the destination cannot keep (else an error), noted
  bool create_only = false;       // the structure without data, for part runs
  // part_count > 0: write only part part_index of part_count disjoint sets of
  // chunks into an existing destination made by a create_only run.
  uint64_t part_index = 0, part_count = 0;
  // Called after each chunk or slab, one call at a time (from worker threads).
  std::function<void(const CopyProgress&)> progress;
  // When set and true, the copy stops at the next chunk with an io error
  // "interrupted; no destination was written".
  const std::atomic<bool>* cancel = nullptr;
};

struct CopyResult {
  std::string from, to;  // the format ids used
  uint64_t nodes = 0, chunks = 0;
  uint64_t bytes_in = 0;   // decoded bytes read from the source
  uint64_t bytes_out = 0;  // bytes of the destination on disk
  double seconds = 0;
  std::vector<std::string> notes;  // what was adapted (labels invented, densified, ...)
  // What the destination was opened with; for a new store, with the defaults
  // of the options that set what it is made as (a new Zarr store's version).
  json open_options = json::object();
  std::vector<uint64_t> shards;  // the shard shape asked for, empty for none
};

CopyResult copy(const std::string& source, const std::string& destination,
                const CopyOptions& options = {}, Registry& registry = Registry::global());

// The summary `stowage-convert --json` prints: {"source", "destination",
// "from", "to", "nodes", "chunks", "bytes_in", "bytes_out", "ratio",
// "seconds", "mb_per_s", "notes", "open_options", "shards"}, source and
// destination as given.
json copy_summary_json(const CopyResult& result, const std::string& source,
                       const std::string& destination);

// The short forms the tools take, parsed once for every front end:
// "zstd", "gzip:level=9,useZlib=true" or a JSON object -> N5 compression JSON.
json parse_compression_spec(const std::string& spec);
// "64,64,64" -> {64, 64, 64}; `what` names the option in the error.
std::vector<uint64_t> parse_positive_list(const std::string& text, const char* what);
// --open-option KEY=VALUE: VALUE as JSON where it parses ("3", "true",
// "[1,2]"), else as a string, into options.open_options[KEY].
void parse_open_option(const std::string& spec, CopyOptions& options);
// "gene,cell" -> {"gene", "cell"} (for options.axes; checked by copy()).
std::vector<std::string> parse_name_list(const std::string& text);
// "T" (every array) or "FROM=TO[,FROM=TO...]" into options.cast_all / options.casts.
void parse_cast_spec(const std::string& spec, CopyOptions& options);
// "error", "clip" or "wrap" (invalid_argument otherwise).
CastOverflow parse_cast_overflow(const std::string& name);
// Part I of N of the chunks (0 <= I < N; invalid_argument otherwise), as
// numbers or as the text "I/N".
void set_part(CopyOptions& options, uint64_t index, uint64_t count);
void parse_part_spec(const std::string& spec, CopyOptions& options);

}  // namespace stowage

#endif  // STOWAGE_COPY_HPP
