// Where a copy's output goes until it is whole: a hidden staging directory
// beside the destination (StagingArea), or a hidden node inside an existing
// container (NodeStaging), published in one step.
#pragma once

#include "internal.hpp"

#include <stowage/plugin_util.hpp>  // kStagingPrefix, without_temporaries
#include <stowage/storage.hpp>      // publishing the staged output: one rename, or a journaled set

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

namespace stowage::copying {

namespace fs = std::filesystem;

bool process_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

const std::string kTempPrefix = sdk::kStagingPrefix;

// The hidden name a copy by process `pid` stages `name` under:
// ".stowage-convert.<pid>.<name>", with the name cut so the whole stays
// within the 255 bytes a file name may have (a 245-character destination
// failed with "File name too long" before).
std::string staged_name(long pid, const std::string& name) {
  std::string head = kTempPrefix + std::to_string(pid) + ".";
  return head + name.substr(0, std::min(name.size(), 255 - std::min<size_t>(head.size(), 255)));
}

// Removes temporaries left by killed conversions to the same destination.
void clean_stale_temporaries(const fs::path& parent, const std::string& name) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    std::string f = entry.path().filename().string();
    if (f.rfind(kTempPrefix, 0) != 0) continue;
    long pid = std::atol(f.c_str() + kTempPrefix.size());
    if (f != staged_name(pid, name)) continue;
    if (!process_alive(pid)) fs::remove_all(entry.path(), ec);
  }
}

uint64_t disk_bytes(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return fs::file_size(p, ec);
  uint64_t sum = 0;
  for (auto it = fs::recursive_directory_iterator(p, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) sum += it->file_size(ec);
  return sum;
}

// A hidden directory beside the destination that holds everything the
// conversion writes until publish() renames it into place.
class StagingArea {
 public:
  StagingArea(const std::string& destination, Registry& registry) : typed_(destination) {
    try {
      make(fs::path(destination), registry);
    } catch (const fs::filesystem_error& e) {
      throw Error(ErrorCode::io, destination + ": cannot write there: " + e.code().message(), destination);
    } catch (const sdk::Error& e) {  // finishing what a killed conversion left
      throw Error(static_cast<ErrorCode>(e.code()), in_user_words(e.what()), destination);
    }
  }
  ~StagingArea() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path target() const { return dir_ / name_; }

  // The error with every mention of the hidden staging path (".stowage-convert.<pid>.x/x",
  // a temporary in it) replaced by the destination as the user named it.
  Error in_user_words(const Error& e) const {
    return Error(e.code(), in_user_words(e.what()), in_user_words(e.path()), e.plugin());
  }
  std::string in_user_words(std::string text) const {
    text = sdk::without_temporaries(std::move(text));
    if (dir_.empty()) return text;  // (not made yet)
    const size_t slash = typed_.rfind('/');
    const std::string typed_parent = slash == std::string::npos ? "" : typed_.substr(0, slash + 1);
    const std::pair<std::string, std::string> renames[] = {
        {target().string(), typed_}, {dir_.string() + "/", typed_parent}, {dir_.string(), typed_}};
    for (const auto& [hidden, shown] : renames)
      for (size_t at; (at = text.find(hidden)) != std::string::npos;) text.replace(at, hidden.size(), shown);
    const std::string twice = typed_ + ": " + typed_ + ": ";  // the store's path and its staged file's
    for (size_t at; (at = text.find(twice)) != std::string::npos;) text.erase(at, typed_.size() + 2);
    return text;
  }

  // publish_staged, its errors in the user's words.
  uint64_t publish(bool overwrite) {
    try {
      return publish_staged(overwrite);
    } catch (const Error& e) {
      throw in_user_words(e);
    } catch (const sdk::Error& e) {
      throw Error(static_cast<ErrorCode>(e.code()), in_user_words(e.what()), typed_);
    } catch (const fs::filesystem_error& e) {
      throw Error(ErrorCode::io, typed_ + ": cannot publish it: " + e.code().message(), typed_);
    }
  }

 private:
  void make(const fs::path& destination, Registry& registry) {
    parent_ = destination.has_parent_path() ? destination.parent_path() : fs::path(".");
    fs::create_directories(parent_);
    name_ = destination.filename().string();
    // "x.datg" becomes "./x.datg": a file set's journal and files are then
    // named from the same directory.
    destination_ = parent_ / name_;
    Registry::StorageBackend b = registry.storage(destination_.string());
    storage_ = sdk::Storage(b.vtable, b.handle, b.capabilities);
    // A conversion killed while publishing several files left a journal
    // whose temporaries are in its staging directory: finish it first.
    storage_.recover(destination_.string());
    clean_stale_temporaries(parent_, name_);
    dir_ = parent_ / staged_name(::getpid(), name_);
    fs::create_directories(dir_);
  }

  // Puts what the format wrote in place of the destination, so that a kill
  // at any moment leaves the old destination or the new one. A single entry
  // (a container directory, an .npy file) takes the destination's name in
  // one rename, or one exchange with an existing destination, which then
  // goes with the staging area. Several files (datg's matrix and name files,
  // datadings' six) go as one journaled file set, which the format's next
  // open -- or the next conversion to this destination -- finishes.
  uint64_t publish_staged(bool overwrite) {
    std::vector<fs::path> produced;
    for (const auto& e : fs::directory_iterator(dir_)) produced.push_back(e.path());
    uint64_t bytes = 0;
    for (const auto& p : produced) {
      std::error_code ec;
      if (!overwrite && fs::exists(parent_ / p.filename(), ec))
        throw Error(ErrorCode::invalid_argument, (parent_ / p.filename()).string() + " exists; use --overwrite");
      bytes += disk_bytes(p);
    }
    // The destination's own file goes first: it names the set's journal.
    std::stable_partition(produced.begin(), produced.end(),
                          [&](const fs::path& p) { return p.filename() == destination_.filename(); });
    std::vector<std::pair<std::string, std::string>> renames;
    for (const auto& p : produced) renames.emplace_back(p.string(), (parent_ / p.filename()).string());
    storage_.move(renames, STOWAGE_PUBLISH_REPLACE);
    return bytes;
  }

  sdk::Storage storage_;
  fs::path destination_, parent_, dir_;
  std::string name_, typed_;
};

// A node added to (or replacing one in) an existing container, written
// under a hidden sibling name and moved into place whole when complete
// (Store::move): a kill, a full disk or a cancelled copy leaves the old node
// or none, never a part. Used where the format moves nodes (N5).
class NodeStaging {
 public:
  NodeStaging(Store& dst, const std::string& node) : dst_(dst), final_(node) {
    size_t slash = node.rfind('/');
    std::string parent = slash == std::string::npos ? "" : node.substr(0, slash);
    leaf_ = slash == std::string::npos ? node : node.substr(slash + 1);
    hidden_leaf_ = staged_name(::getpid(), leaf_);
    staged_ = join(parent, hidden_leaf_);
    // A format that moves nodes keeps node a/b in the directory <root>/a/b:
    // what killed copies left there goes first (and our own last attempt).
    const fs::path parent_dir = fs::path(dst.path()) / parent;
    clean_stale_temporaries(parent_dir, leaf_);
    std::error_code ec;
    fs::remove_all(parent_dir / hidden_leaf_, ec);
    node_dir_ = parent_dir / hidden_leaf_;
  }
  const std::string& node() const { return staged_; }
  uint64_t bytes() const { return disk_bytes(node_dir_); }

  void publish(bool replace) {
    dst_.move(staged_, final_, replace);
    published_ = true;
  }
  // Removes the partial node, quietly: the error that stopped the copy is the one to report.
  void discard() noexcept {
    if (published_) return;
    try {
      dst_.remove(staged_);
    } catch (...) {
    }
    std::error_code ec;
    fs::remove_all(node_dir_, ec);
  }
  Error in_user_words(const Error& e) const {
    auto rewrite = [&](std::string text) {
      text = sdk::without_temporaries(std::move(text));
      for (size_t at; (at = text.find(hidden_leaf_)) != std::string::npos;) text.replace(at, hidden_leaf_.size(), leaf_);
      return text;
    };
    return Error(e.code(), rewrite(e.what()), rewrite(e.path()), e.plugin());
  }

 private:
  Store& dst_;
  std::string final_, leaf_, hidden_leaf_, staged_;
  fs::path node_dir_;
  bool published_ = false;
};

}  // namespace stowage::copying
