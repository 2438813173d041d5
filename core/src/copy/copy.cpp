// stowage::copy (copy.hpp): the conversion of any dataset, or node, into any
// format, through the core API only, so a format plugin added later converts
// without a change here.
//
// The output is built in the storage's hidden staging directory beside the
// destination and moved into place at the end: an error, a cancellation or a
// kill leaves no destination (at most a temporary, which the storage removes
// once its process is gone). Storage that cannot rename (s3) gets it in place,
// the format's metadata files put last (metadata_last.hpp). A node added to an existing container
// (DST::node) is written under a hidden name inside it and moved into place whole where the format
// can move nodes (NodeStaging), else written in place.
#include "internal.hpp"
#include "../log_capture.hpp"
#include "../metadata_last.hpp"
#include "../storage_choice.hpp"
#include "publish.hpp"

#include <iostream>

namespace stowage {
namespace copying {

bool has_node(const Store& store, const std::string& node) {
  try {
    store.describe(node);
    return true;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) throw;
    return false;
  }
}

// Writes a node under a hidden name and moves it into place once whole.
// Returns the bytes it wrote.
uint64_t copy_node_staged(Converter& converter, const Store& src, const std::string& src_node,
                          Store& dst, const std::string& dst_node, Progress& progress, bool replace,
                          Registry& registry) {
  NodeStaging staged(registry, dst, dst_node);
  try {
    converter.copy(src, src_node, dst, staged.node(), progress);
    progress.check_cancel();
    const uint64_t bytes = staged.bytes();
    staged.publish(replace);
    return bytes;
  } catch (const Error& e) {
    staged.discard();
    throw staged.in_user_words(e);
  } catch (...) {
    staged.discard();
    throw;
  }
}

// Where the storage cannot rename, a new dataset is whole to readers only if
// the format names metadata files to put last, or publishes its files
// together at close (a format without STOWAGE_CAP_SHARED_WRITES: npy, datg).
void refuse_half_visible(Registry& registry, const std::string& dst_path,
                         const std::string& format) {
  const std::optional<PluginInfo> info = registry.find("format", format);
  if (!info || !(info->capabilities & STOWAGE_CAP_SHARED_WRITES) ||
      detail::publishes_metadata_last(registry, dst_path, format))
    return;
  throw Error(ErrorCode::unsupported,
              dst_path + ": the " + storage_scheme(dst_path) +
                  " storage cannot rename, and format " + format +
                  " names no metadata files to put last, so a reader could find it half written; "
                  "write it to a local path and upload it whole",
              dst_path);
}

// A new destination where the storage cannot rename (s3): a Store in mode
// "w" at its path, which puts the format's metadata files after everything
// else at close (metadata_last.hpp); a failure or a kill leaves no dataset.
// Returns the bytes it wrote.
uint64_t copy_metadata_last(Converter& converter, const Store& src, const std::string& src_node,
                            const std::string& dst_path, const std::string& dst_node,
                            const CopyOptions& options, const CopyResult& result,
                            Progress& progress, Registry& registry) {
  Store dst = Store::open(dst_path, Mode::truncate, result.to, result.open_options, registry);
  try {
    converter.set_multiscales(destination_facts(dst, options, registry));
    converter.copy(src, src_node, dst, dst_node, progress);
    progress.check_cancel();
  } catch (...) {
    dst.discard();
    throw;
  }
  dst.close();
  return stored_bytes(detail::storage_of(registry, dst_path), dst_path);
}

CopyResult copy_with(const std::string& source, const std::string& destination,
                     const CopyOptions& options, Registry& registry) {
  auto [src_path, src_node] = split_dataset_spec(source);
  auto [dst_path, dst_node] = split_dataset_spec(destination);
  if (dst_path.empty()) throw Error(ErrorCode::invalid_argument, "no destination given");
  // Storage options reach every location under the source's and the
  // destination's paths (the staging beside the destination is bound below).
  const std::shared_ptr<void> src_storage =
      registry.bind_storage_options(src_path, options.source_storage);
  const std::shared_ptr<void> dst_storage =
      registry.bind_storage_options(dst_path, options.destination_storage);
  // The destination is staged beside itself and published by a rename, or
  // where the storage cannot rename, written in place metadata last.
  require_writable_storage(dst_path, registry);
  const bool renames = registry.storage(dst_path).capabilities & STOWAGE_CAP_MOVE;
  require_format(registry, options.from, "source");
  require_format(registry, options.to, "destination");
  const std::string codec_id = require_codec(registry, options.compression);
  require_axes(options.axes);
  if (options.part_count > 0 && (!options.compression.is_null() || !options.chunks.empty()))
    throw Error(
        ErrorCode::invalid_argument,
        "a --part run writes with the codec and chunks the destination was created with; give "
        "--compression and --chunks to the --create-only run instead");
  Store src = Store::open(src_path, Mode::read, options.from, json::object(), registry);

  CopyResult result;
  result.from = src.format();
  result.to = options.to;
  if (result.to.empty()) {
    auto by_ext = registry.format_for_extension(dst_path);
    if (!by_ext)
      throw Error(ErrorCode::invalid_argument,
                  dst_path + ": cannot tell the destination format from its name; give --to ID");
    result.to = *by_ext;
  }

  refuse_overlap(source, destination, place_of(src_path, src_node), place_of(dst_path, dst_node));
  const sdk::Storage storage = detail::storage_of(registry, dst_path);
  const bool exists = detail::storage_call(dst_path, [&] { return storage.exists(dst_path); });
  const bool filling_part = options.part_count > 0;
  // A node added to an existing container is written in place (each plugin
  // writes its files atomically); anything new is staged and renamed.
  const bool in_place = exists && (!dst_node.empty() || filling_part);
  if (!in_place && exists && !options.overwrite)
    throw Error(ErrorCode::invalid_argument, dst_path + " exists; use --overwrite to replace it");
  if (filling_part && !exists)
    throw Error(
        ErrorCode::invalid_argument,
        dst_path + " does not exist; create it first with --create-only, then run the parts");
  if (exists && (options.overwrite || in_place))
    refuse_replacing_other(dst_path, result.to, registry);
  if (!renames && !in_place) refuse_half_visible(registry, dst_path, result.to);
  result.open_options = destination_options(options, result.to, !in_place, registry);
  result.shards = options.shards;

  Converter converter(options, registry, codec_id);
  Progress progress(options, converter.total_bytes(src, src_node));
  if (in_place) {
    // Add (or with a part run, fill) a node of an existing container.
    Store dst = Store::open(dst_path, Mode::update, result.to, result.open_options, registry);
    converter.set_multiscales(destination_facts(dst, options, registry));
    const bool adding_node = !filling_part && !dst_node.empty();
    const bool present = adding_node && has_node(dst, dst_node);
    if (present && !options.overwrite)
      throw Error(ErrorCode::invalid_argument,
                  dst_path + "::" + dst_node + " exists; use --overwrite to replace it");
    if (adding_node && dst.can_move_nodes()) {
      result.bytes_out = copy_node_staged(converter, src, src_node, dst, dst_node, progress,
                                          options.overwrite, registry);
    } else {
      // The format cannot move a node: it is written in place (Daf keeps
      // what it writes pending until close, where each file is renamed in).
      if (present) dst.remove(dst_node);
      const uint64_t before = stored_bytes(storage, dst_path);
      converter.copy(src, src_node, dst, dst_node, progress);
      dst.close();  // before measuring: some formats write at close
      const uint64_t after = stored_bytes(storage, dst_path);
      result.bytes_out = after > before ? after - before : 0;
    }
    dst.close();
  } else if (!renames) {
    result.bytes_out = copy_metadata_last(converter, src, src_node, dst_path, dst_node, options,
                                          result, progress, registry);
  } else {
    NewDestination staging(registry, dst_path, result.to);
    const std::shared_ptr<void> staged_storage =
        registry.bind_storage_options(staging.location(), options.destination_storage);
    try {
      Store dst =
          Store::open(staging.location(), Mode::truncate, result.to, result.open_options, registry);
      try {
        converter.set_multiscales(destination_facts(dst, options, registry));
        converter.copy(src, src_node, dst, dst_node, progress);
      } catch (...) {
        // The staged output goes with the staging area: close it quietly (its
        // destructor would report the half-written store under its hidden name).
        try {
          dst.close();
        } catch (const Error&) {
        }
        throw;
      }
      dst.close();
    } catch (const Error& e) {
      throw staging.in_user_words(e);
    }
    progress.check_cancel();
    result.bytes_out = staging.publish(options.overwrite);
  }
  result.nodes = converter.nodes();
  result.chunks = progress.chunks();
  result.bytes_in = progress.bytes();
  result.seconds = progress.seconds();
  result.notes = converter.notes;
  return result;
}

}  // namespace copying

using copying::copy_with;

// The plugins' warnings during a copy (a datg name it had to change, a codec
// it ignores) belong to its result: they go into the notes, which --json
// prints, instead of standard error; a failed copy still shows them there.
CopyResult copy(const std::string& source, const std::string& destination,
                const CopyOptions& options, Registry& registry) {
  std::vector<std::string> warnings;
  try {
    detail::LogCapture capture(warnings);
    CopyResult result = copy_with(source, destination, options, registry);
    result.notes.insert(result.notes.end(), warnings.begin(), warnings.end());
    return result;
  } catch (...) {
    for (const std::string& w : warnings)  // not those about the discarded staging output
      if (w.find(".stowage-tmp.") == std::string::npos)
        std::cerr << "stowage warning: " << w << "\n";
    throw;
  }
}

}  // namespace stowage
