// Where a copy's output goes until it is whole: the storage's staging
// directory beside the destination (NewDestination), or a hidden node inside
// an existing container (NodeStaging), published in one step.
#pragma once

#include "internal.hpp"

#include "../staging.hpp"

#include <stowage/plugin_util.hpp>  // kStagingPrefix, without_temporaries
#include <stowage/storage.hpp>      // publishing the staged output: one rename, or a journaled set

#include <memory>
#include <string>

namespace stowage::copying {

// 16 random hex digits naming one copy's staged node.
std::string new_staging_token();
// NodeStaging's hidden name for `name` in the copy `token` names:
// ".stowage-convert.<token>.<name>", cut to fit 255 bytes.
std::string staged_name(const std::string& token, const std::string& name);
// Removes what copies killed while writing node `name` left in directory
// `parent`: the hidden nodes whose lock no one holds.
void clean_stale_temporaries(const sdk::Storage& storage, const std::string& parent,
                             const std::string& name);

// The bytes stored under `key`: a file's size, or a directory's files' sum.
uint64_t stored_bytes(const sdk::Storage& storage, const std::string& key);

// A new destination, built in the storage's staging directory beside it
// (staging.hpp's Staging, as Mode "w" builds a store) and published by one
// move, or one journaled set for a file set. Gone with it if never published.
class NewDestination {
 public:
  NewDestination(Registry& registry, const std::string& path, const std::string& format);
  // Where the format writes: an entry with the destination's name in the staging.
  const std::string& location() const { return staging_->location(); }
  // The error with every mention of the staging put back as the destination.
  Error in_user_words(const Error& e) const;
  // Puts what was built in place; returns its bytes. Without `overwrite`, an
  // entry it would replace (a file set's other file) is refused.
  uint64_t publish(bool overwrite);

 private:
  std::string in_user_words(std::string text) const;

  std::string typed_, path_, parent_;  // the path as given, and as staged
  sdk::Storage storage_;
  std::unique_ptr<detail::Staging> staging_;
};

// A node added to (or replacing one in) an existing container, written
// under a hidden sibling name and moved into place whole when complete
// (Store::move): a kill, a full disk or a cancelled copy leaves the old node
// or none, never a part. Used where the format moves nodes (N5).
class NodeStaging {
 public:
  NodeStaging(Registry& registry, Store& dst, const std::string& node);
  const std::string& node() const { return staged_; }
  uint64_t bytes() const { return stored_bytes(storage_, node_dir_); }
  void publish(bool replace);
  // Removes the partial node, quietly: the error that stopped the copy is the one to report.
  void discard() noexcept;
  Error in_user_words(const Error& e) const;

 private:
  Store& dst_;
  std::string final_, leaf_, hidden_leaf_, staged_;
  sdk::Storage storage_;
  std::string node_dir_;  // where a format that moves nodes keeps the hidden one
  sdk::Lock writer_;      // held while this copy writes node_dir_: it is alive
  bool published_ = false;
};

}  // namespace stowage::copying
