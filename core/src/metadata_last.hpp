// Publishing a new dataset on storage that cannot rename (s3): its chunks
// first, its metadata last (docs/design.md, rule 8).
//
// A file backend builds a new dataset beside its path and renames it in
// (staging.hpp). An object store renames nothing, so there the host puts
// the dataset in place file by file, but holds back the files that make a
// directory a node and name its chunks (the format's metadata_files:
// N5's attributes.json, Zarr's .zarray, zarr.json, ...) until the store
// closes whole: then they are put, deepest node first, the root last. A
// reader never finds metadata naming chunks not yet there; a writer killed
// or interrupted leaves chunks nobody names, never a dataset.
//
// The held files are served to the format's own reads (it reads back what it
// wrote) by a storage layer the registry puts over the backend for every
// location under the path while the store lives.
#pragma once

#include <stowage/stowage.hpp>
#include <stowage/storage.hpp>

#include <memory>
#include <string>
#include <vector>

namespace stowage::detail {

class HeldMetadata;  // the storage layer (metadata_last.cpp)

class MetadataLast {
 public:
  // Layers `path`'s storage; `names` are the format's metadata files, in the
  // order a node's are put.
  MetadataLast(Registry& registry, const std::string& path, std::vector<std::string> names);
  ~MetadataLast();
  MetadataLast(const MetadataLast&) = delete;
  MetadataLast& operator=(const MetadataLast&) = delete;

  // Puts the held metadata files and removes the layer; throws naming the
  // path when one cannot be put.
  void publish();
  // Puts what is held now and goes on holding what is written later.
  void put_held();
  // Drops them: the dataset stays unnamed.
  void discard() noexcept;

 private:
  std::string path_;
  sdk::Storage inner_;  // the path's own backend
  std::unique_ptr<HeldMetadata> layer_;
  std::shared_ptr<void> binding_;  // the layer over `path`'s storage while this lives
};

// Whether a new dataset of format `format` at `path` is published metadata
// last: its storage writes but cannot rename, and the format names its
// metadata files.
bool publishes_metadata_last(Registry& registry, const std::string& path,
                             const std::string& format);

}  // namespace stowage::detail
