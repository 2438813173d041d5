// Mode "w" as a transaction: the dataset a Store opened with Mode::truncate
// (or Mode::create where nothing exists yet) writes is built in a hidden
// staging directory beside the user's path and put in its place only by a
// close() that completes (docs/internals.md, "Mode w is a transaction").
#ifndef STOWAGE_CORE_STAGING_HPP
#define STOWAGE_CORE_STAGING_HPP

#include "store_state.hpp"

#include <stowage/stowage.hpp>
#include <stowage/storage.hpp>

#include <string>
#include <vector>

namespace stowage::detail {

// A path without trailing '/' ("out.n5/" names the same dataset as "out.n5").
std::string trimmed_location(const std::string& path);

// The storage of a location as sdk::Storage, its failures as stowage::Error.
sdk::Storage storage_of(Registry& registry, const std::string& location);

// `text` with each backend temporary (".<name>.stowage-tmp.<pid>.<n>", a
// staged file or directory) named as what it will become ("<name>").
std::string without_temporary_names(std::string text);

// Runs f; an sdk::Error (from sdk::Storage) becomes stowage::Error naming `path`.
template <class F>
decltype(auto) storage_call(const std::string& path, F&& f) {
  try {
    return f();
  } catch (const sdk::Error& e) {
    throw Error(static_cast<ErrorCode>(e.code()), without_temporary_names(e.what()), path);
  }
}

// One staging directory: `location()` is where the format plugin writes (the
// directory holding an entry with the user's name), publish() moves every
// entry the format made over the user's path (one rename or exchange for one
// entry; one journaled set for a file set such as datg's four files),
// discard() removes it all.
class Staging {
 public:
  // `first_names`: the entry whose journal a set publish is named after,
  // besides the path's own name (the format's extensions appended to it:
  // "x.datg" for a datg dataset named by its base "x").
  Staging(Registry& registry, const std::string& path, const std::vector<std::string>& extensions);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  const std::string& location() const { return location_; }
  const std::string& directory() const { return directory_; }
  // Every mention of the staging directory in `text` in the user's words.
  std::string in_user_words(std::string text) const;
  // Puts what was built in place; throws (naming the user's path) when it cannot.
  void publish();
  // Removes the staging directory and all in it; quiet (a leftover hidden
  // directory is harmless, and the error that led here is the one to report).
  void discard() noexcept;

 private:
  sdk::Storage storage_;
  std::string path_, parent_, name_, directory_, location_;
  std::vector<std::string> extensions_;
  bool done_ = false;
};

// Whether a Store opened at `path` for writing stages: the storage can build
// beside it and move (STOWAGE_CAP_MOVE), and the path is not already inside a
// staging directory (stowage::copy's own staging, whose publish is the copy's).
bool can_stage(Registry& registry, const std::string& path);

// What is at `path` now, for the rules of Store::open.
struct Existing {
  bool entry = false;      // something (file or directory) has the path's name
  bool empty = false;      // ... an empty file or an empty directory
  bool of_format = false;  // the format's identify() claims the path
};
Existing what_exists(Registry& registry, const std::string& path, const std::string& format);

// Mode "w" replaces only a dataset of the requested format (or an empty file
// or directory): never a text file, a directory of notes, another format's data.
void refuse_replacing_other(const std::string& path, const std::string& format,
                            const Existing& existing);

// The lock a writer of a format without STOWAGE_CAP_SHARED_WRITES holds on
// the dataset's path from open to close (the storage's lock_key).
struct WriterLock {
  sdk::Lock lock;
};

// `text` with the staging directory `directory` (and the location `location`
// inside it) put back as the user's `path`.
std::string user_words(std::string text, const std::string& directory, const std::string& location,
                       const std::string& path);

// Store::open for writing, before the plugin opens: takes the writer lock of
// a format without STOWAGE_CAP_SHARED_WRITES; for Mode::truncate (and
// Mode::create where nothing is yet) refuses to replace what is not a
// dataset of the format and makes the staging the plugin opens instead of
// the path (state.location).
void prepare_writing(Store::State& state, Mode mode, const stowage_plugin& plugin);

}  // namespace stowage::detail

#endif  // STOWAGE_CORE_STAGING_HPP
