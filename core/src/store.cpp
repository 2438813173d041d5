// Store: the C++ face of a format plugin's vtable: open, nodes, structure, close.
// Sparse and Records views are in sparse.cpp and records.cpp.
#include "plugin_call.hpp"
#include "storage_choice.hpp"
#include "store_state.hpp"
#include "metadata_last.hpp"
#include "staging.hpp"

#include <stowage/array_limits.hpp>

#include <algorithm>
#include <iostream>
#include <mutex>
#include <optional>

namespace stowage {

using detail::string_sink;

Store::State::~State() {
  if (handle && !closed) {
    if (staging || metadata_last) {  // a "w" store never closed publishes nothing
      discard_plugin();
      return;
    }
    detail::CallError err;
    if (vt->close(handle, &err) != STOWAGE_OK)
      std::cerr << "stowage: closing " << path << " failed: " << err.message << "\n";
  }
}

void Store::State::discard_plugin() noexcept {
  if (!handle) return;
  if (vt->struct_size >= offsetof(stowage_format_vtable, discard) + sizeof(void*) && vt->discard) {
    vt->discard(handle);
  } else {
    detail::CallError err;
    vt->close(handle, &err);  // a plugin without discard: its close is all it has
  }
  handle = nullptr;
}

// ---- node handles ----------------------------------------------------------------

namespace {
const char* node_kind_word(uint32_t kind) {
  switch (kind) {
    case STOWAGE_NODE_GROUP:
      return "group";
    case STOWAGE_NODE_ARRAY:
      return "array";
    case STOWAGE_NODE_SPARSE:
      return "sparse";
    case STOWAGE_NODE_STRINGS:
      return "strings";
    case STOWAGE_NODE_RECORDS:
      return "records";
    default:
      return "unknown kind";
  }
}

// The least table size of each kind's first version.
size_t least_table_size(uint32_t kind) {
  switch (kind) {
    case STOWAGE_NODE_ARRAY:
      return STOWAGE_ARRAY_VTABLE_V1_SIZE;
    case STOWAGE_NODE_SPARSE:
      return STOWAGE_SPARSE_VTABLE_V1_SIZE;
    case STOWAGE_NODE_STRINGS:
      return STOWAGE_STRINGS_VTABLE_V1_SIZE;
    case STOWAGE_NODE_RECORDS:
      return STOWAGE_RECORDS_VTABLE_V1_SIZE;
    default:
      return 0;
  }
}

// The state of a store of format plugin `d` whose user path is `path` and
// whose plugin opens `location` (the path, or its staging).
std::shared_ptr<Store::State> new_state(Registry& registry, const stowage_plugin& d,
                                        const std::string& path, const std::string& location,
                                        const std::string& format) {
  auto state = std::make_shared<Store::State>();
  state->registry = &registry;
  state->vt = static_cast<const stowage_format_vtable*>(d.vtable);
  state->capabilities = d.capabilities;
  state->path = path;
  state->location = location;
  state->format = format;
  return state;
}
// The storage options of an open (its options' "storage" object) bound to
// `location` (Registry::bind_storage_options); null for none.
std::shared_ptr<void> bind_storage(Registry& registry, const std::string& location,
                                   const json& options) {
  if (!options.is_object() || !options.contains("storage")) return nullptr;
  return registry.bind_storage_options(location, options["storage"]);
}
}  // namespace

Store::Node::~Node() {
  std::lock_guard<std::mutex> lock(store->nodes_mutex);
  if (!closed && !store->closed && store->handle) store->vt->close_node(store->handle, node.handle);
}

void Store::Node::require(bool present, const char* operation) const {
  if (!present)
    throw Error(ErrorCode::unsupported,
                store->path + "::" + path + ": format " + store->format + " cannot " + operation,
                store->path, store->plugin_name());
}

void Store::Node::require_open() const {
  if (store->closed || closed)
    throw Error(ErrorCode::invalid_argument,
                store->path + "::" + path + ": use of a node of a closed stowage::Store",
                store->path);
}

std::shared_ptr<Store::Node> Store::State::open_node(const std::shared_ptr<State>& self,
                                                     std::string_view node,
                                                     stowage_node_kind kind) {
  State& st = *self;
  auto n = std::make_shared<Node>();
  n->store = self;
  n->path = node;
  n->node.struct_size = sizeof(stowage_node);
  detail::CallError err;
  st.check(st.vt->open_node(st.handle, node.data(), node.size(), &n->node, &err), err);
  auto refuse = [&](const std::string& why) {
    st.vt->close_node(st.handle, n->node.handle);
    n->closed = true;
    throw Error(ErrorCode::internal,
                st.path + "::" + std::string(node) + ": format " + st.format + " " + why, st.path,
                st.plugin_name());
  };
  if (n->node.kind != static_cast<uint32_t>(kind))
    refuse(std::string("opened a ") + node_kind_word(n->node.kind) + " where it described a " +
           node_kind_word(kind));
  if (kind != STOWAGE_NODE_GROUP &&
      (!n->node.table || *static_cast<const uint32_t*>(n->node.table) < least_table_size(kind)))
    refuse(std::string("returned no or a too small ") + node_kind_word(kind) + " table");
  std::lock_guard<std::mutex> lock(st.nodes_mutex);
  auto dead = [](const std::weak_ptr<Node>& w) { return w.expired(); };
  st.nodes.erase(std::remove_if(st.nodes.begin(), st.nodes.end(), dead), st.nodes.end());
  st.nodes.push_back(n);
  return n;
}

void Store::State::close_nodes() {
  std::lock_guard<std::mutex> lock(nodes_mutex);
  for (const std::weak_ptr<Node>& w : nodes)
    if (std::shared_ptr<Node> n = w.lock(); n && !n->closed) {
      vt->close_node(handle, n->node.handle);
      n->closed = true;
    }
  nodes.clear();
  closed = true;  // under nodes_mutex: a handle dying now sees it and leaves the plugin alone
}

void require_writable_storage(const std::string& location, Registry& registry) {
  uint64_t capabilities = 0;
  try {
    capabilities = registry.storage(location).capabilities;
  } catch (const Error&) {
    return;
  }
  if (!(capabilities & STOWAGE_CAP_WRITE))
    throw Error(ErrorCode::unsupported,
                location + ": cannot write there: the " + storage_scheme(location) +
                    " storage is read only",
                location);
}

Store Store::open(const std::string& path, Mode mode, std::string format, const json& options,
                  Registry& registry) {
  std::shared_ptr<void> bound = bind_storage(registry, path, options);  // detection uses them too
  if (mode != Mode::read) require_writable_storage(path, registry);
  if (format.empty()) {
    if (mode == Mode::read || mode == Mode::update) {
      format = registry.detect_format(path);
    } else {
      auto by_ext = registry.format_for_extension(path);
      if (!by_ext)
        throw Error(ErrorCode::invalid_argument,
                    path + ": cannot tell which format to create from the name; name one", path);
      format = *by_ext;
    }
  }
  const stowage_plugin* d = registry.load("format", format, path);
  auto state = new_state(registry, *d, path, path, format);
  state->storage_bindings.push_back(std::move(bound));
  if (mode != Mode::read) detail::prepare_writing(*state, mode, *d);
  return open_state(std::move(state), mode, options);
}

Store Store::open_state(std::shared_ptr<State> state, Mode mode, const json& options) {
  json plugin_options = options.is_null() ? json::object() : options;
  if (plugin_options.is_object() &&
      plugin_options.contains("storage")) {  // the host's, not the format's
    if (!state->staged_directory.empty())
      state->storage_bindings.push_back(
          bind_storage(*state->registry, state->staged_directory, plugin_options));
    plugin_options.erase("storage");
  }
  if (plugin_options.is_object() && plugin_options.contains("shared_writers")) {  // the host's too
    state->shared_writers = plugin_options["shared_writers"].is_boolean() &&
                            plugin_options["shared_writers"].get<bool>();
    plugin_options.erase("shared_writers");
    const sdk::Storage storage = detail::storage_of(*state->registry, state->path);
    state->storage_guards_updates = storage.can_lock_keys() || storage.can_put_if();
  }
  std::string opts = plugin_options.dump();
  const std::string& location = state->location;
  detail::CallError err;
  int rc =
      state->vt->open(state->registry->host(), location.data(), location.size(),
                      static_cast<uint32_t>(mode), opts.data(), opts.size(), &state->handle, &err);
  if (rc != STOWAGE_OK) {
    state->handle = nullptr;
    state->fail(rc, err);
  }
  Store store;
  store.state_ = std::move(state);
  return store;
}

using detail::live;

const std::string& Store::path() const { return live(state_).path; }
const std::string& Store::format() const { return live(state_).format; }
Registry& Store::registry() const { return *live(state_).registry; }

std::vector<std::string> Store::list(std::string_view node) const {
  State& st = live(state_);
  std::vector<std::string> names;
  detail::ItemSink items{[&](std::string_view s) { names.emplace_back(s); }, {}};
  stowage_sink sink = items.sink();
  detail::CallError err;
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  st.check(st.vt->list(st.handle, node.data(), node.size(), &sink, &err), err);
  return names;
}

json Store::describe_json(std::string_view node) const {
  State& st = live(state_);
  std::string text;
  stowage_sink sink = string_sink(&text);
  detail::CallError err;
  {
    std::shared_lock<std::shared_mutex> lock(st.mutex);
    st.check(st.vt->describe(st.handle, node.data(), node.size(), &sink, &err), err);
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(ErrorCode::internal,
                st.path + ": format " + st.format + " described node '" + std::string(node) +
                    "' with invalid JSON",
                st.path, st.plugin_name());
  return j;
}

NodeInfo Store::describe(std::string_view node) const {
  try {
    return parse_node_info(describe_json(node));
  } catch (const Error& e) {
    if (e.path().empty())
      throw Error(e.code(), path() + "::" + std::string(node) + ": " + e.what(), path());
    throw;
  }
}

namespace {

// The non-negative integers under `key`, or nullopt for anything else (the
// format's create says what is wrong with it).
std::optional<std::vector<uint64_t>> extents_of(const json& d, const char* key) {
  if (!d.contains(key) || !d[key].is_array()) return std::nullopt;
  std::vector<uint64_t> out;
  for (const json& v : d[key]) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      return std::nullopt;
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

// Bytes of an element of the description's dtype; 0 when it names none the
// core knows (the format refuses it).
size_t element_size_of(const json& d) {
  if (!d.contains("dtype") || !d["dtype"].is_string()) return 0;
  try {
    return dtype_size(parse_dtype(d["dtype"].get<std::string>()));
  } catch (const Error&) {
    return 0;
  }
}

// Why an array description cannot be created, or "" when it can: what open
// would refuse (whatever create accepts, open must accept), checked before
// the format writes a byte.
std::string unopenable_array(const json& d) {
  const size_t size = element_size_of(d);
  const std::optional<std::vector<uint64_t>> shape = extents_of(d, "shape");
  if (!shape || size == 0) return "";
  std::optional<std::vector<uint64_t>> chunks = extents_of(d, "chunks");
  if (!d.contains("chunks")) {  // the format chooses: whole-array chunks at most
    chunks = shape;
    for (uint64_t& c : *chunks) c = std::max<uint64_t>(c, 1);
  }
  if (!chunks) return "";
  return sdk::array_size_problem(*shape, *chunks, size, d["dtype"].get<std::string>());
}

}  // namespace

void Store::create(std::string_view node, const json& description) {
  State& st = live(state_);
  if (description.is_object() && description.value("kind", json("group")) == "array") {
    const std::string why = unopenable_array(description);
    if (!why.empty())
      throw Error(
          ErrorCode::invalid_argument,
          st.path + (node.empty() ? "" : "::" + std::string(node)) + ": cannot create it: " + why,
          st.path);
  }
  std::string text = description.dump();
  detail::CallError err;
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  st.check(st.vt->create(st.handle, node.data(), node.size(), text.data(), text.size(), &err), err);
}

void Store::set_attributes(std::string_view node, const json& attributes) {
  State& st = live(state_);
  std::string text = attributes.dump();
  detail::CallError err;
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  st.check(
      st.vt->set_attributes(st.handle, node.data(), node.size(), text.data(), text.size(), &err),
      err);
}

void Store::remove(std::string_view node) {
  State& st = live(state_);
  detail::CallError err;
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  st.check(st.vt->remove(st.handle, node.data(), node.size(), &err), err);
}

bool Store::can_move_nodes() const {
  const State& st = live(state_);
  return (st.capabilities & STOWAGE_CAP_MOVE_NODES) &&
         st.vt->struct_size >= offsetof(stowage_format_vtable, move_node) + sizeof(void*) &&
         st.vt->move_node;
}

void Store::move(std::string_view from, std::string_view to, bool replace) {
  if (!can_move_nodes())
    throw Error(ErrorCode::unsupported, path() + ": format " + format() + " cannot move a node",
                path());
  State& st = live(state_);
  detail::CallError err;
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  st.check(st.vt->move_node(st.handle, from.data(), from.size(), to.data(), to.size(),
                            replace ? 1 : 0, &err),
           err);
}

template <class View>
View Store::bind(std::string_view node, NodeKind kind) const {
  View v;
  v.store_ = state_;
  v.node_ = node;
  v.info_ = describe(node);
  if (v.info_.kind != kind) {
    std::string where = path() + "::" + std::string(node);
    throw Error(ErrorCode::invalid_argument,
                where + " is a " + node_kind_name(v.info_.kind) + ", not a " + node_kind_name(kind),
                where);
  }
  std::shared_lock<std::shared_mutex> lock(state_->mutex);
  static_assert(int(NodeKind::records) == STOWAGE_NODE_RECORDS &&
                int(NodeKind::array) == STOWAGE_NODE_ARRAY);
  v.handle_ = State::open_node(state_, node, static_cast<stowage_node_kind>(kind));
  return v;
}

Array Store::array(std::string_view node) const { return bind<Array>(node, NodeKind::array); }
Sparse Store::sparse(std::string_view node) const { return bind<Sparse>(node, NodeKind::sparse); }
Records Store::records(std::string_view node) const {
  return bind<Records>(node, NodeKind::records);
}

std::vector<std::string> Store::read_strings(std::string_view node, uint64_t begin,
                                             uint64_t end) const {
  State& st = live(state_);
  if (end == UINT64_MAX) {
    NodeInfo info = describe(node);
    end = info.shape.empty() ? 0 : info.element_count();
  }
  std::vector<std::string> out;
  detail::ItemSink items{[&](std::string_view s) { out.emplace_back(s); }, {}};
  stowage_sink sink = items.sink();
  detail::CallError err;
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  std::shared_ptr<Node> n = State::open_node(state_, node, STOWAGE_NODE_STRINGS);
  st.check(n->strings().read(n->node.handle, begin, end, &sink, &err), err);
  return out;
}

void Store::write_strings(std::string_view node, const std::vector<std::string>& values) {
  State& st = live(state_);
  std::vector<const char*> data;
  std::vector<uint64_t> sizes;
  for (const std::string& v : values) {
    data.push_back(v.data());
    sizes.push_back(v.size());
  }
  if (!st.vt->write_strings)
    throw Error(ErrorCode::unsupported, st.path + ": format " + st.format + " cannot write strings",
                st.path);
  detail::CallError err;
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  st.check(st.vt->write_strings(st.handle, node.data(), node.size(), values.size(), data.data(),
                                sizes.data(), &err),
           err);
}

json Store::command(std::string_view node, std::string_view name, const json& args) {
  State& st = live(state_);
  std::string a = args.dump(), out;
  stowage_sink sink = string_sink(&out);
  detail::CallError err;
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  st.check(st.vt->command(st.handle, node.data(), node.size(), name.data(), name.size(), a.data(),
                          a.size(), &sink, &err),
           err);
  if (out.empty()) return json();
  json j = json::parse(out, nullptr, false);
  if (j.is_discarded()) return json(out);
  return j;
}

void Store::close() {
  if (!state_ || state_->closed || !state_->handle) return;
  State& st = *state_;
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  st.close_nodes();  // marks the store closed too: the plugin frees it even when close fails
  detail::CallError err;
  int rc = st.vt->close(st.handle, &err);
  st.handle = nullptr;
  // A "w" store publishes only after a close that completed: a failed one
  // leaves the old dataset as it was, and the staging goes.
  std::unique_ptr<detail::Staging> staging = std::move(st.staging);
  std::unique_ptr<detail::MetadataLast> metadata_last = std::move(st.metadata_last);
  std::unique_ptr<detail::WriterLock> writer = std::move(st.writer_lock);
  if (rc != STOWAGE_OK) {
    if (staging) staging->discard();
    if (metadata_last) metadata_last->discard();
    st.check(rc, err);
  }
  if (staging)
    staging->publish();  // throws naming the user's path; removes the staging if it cannot
  if (metadata_last) metadata_last->publish();
}

void Store::discard() noexcept {
  if (!state_ || state_->closed || !state_->handle) return;
  State& st = *state_;
  try {
    std::unique_lock<std::shared_mutex> lock(st.mutex);
    st.close_nodes();
    st.discard_plugin();
  } catch (...) {
  }
  if (st.staging) st.staging->discard();
  st.staging.reset();
  if (st.metadata_last) st.metadata_last->discard();
  st.metadata_last.reset();
  st.writer_lock.reset();
}

void Store::publish_held_metadata() {
  if (closed() || !state_->metadata_last) return;
  std::unique_lock<std::shared_mutex> lock(state_->mutex);
  state_->metadata_last->put_held();
}

bool Store::closed() const { return !state_ || state_->closed || !state_->handle; }

std::string Store::staging_location() const {
  if (closed() || !state_->staging) return {};
  return state_->location;
}

bool Store::shared_writes() const { return live(state_).capabilities & STOWAGE_CAP_SHARED_WRITES; }

Store Store::open_staged(const std::string& path, const std::string& staging_location,
                         std::string format, const json& options, Registry& registry) {
  // Only a location Store::open made for this path: the path's own name
  // inside a hidden staging directory beside it.
  const std::string p = detail::trimmed_location(path);
  const size_t slash = p.rfind('/'), at = staging_location.rfind('/');
  const std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
  if (at == std::string::npos || staging_location.substr(at + 1) != name ||
      staging_location.find(".stowage-tmp.") == std::string::npos)
    throw Error(ErrorCode::invalid_argument,
                path + ": '" + staging_location + "' is not a staging location of this path", path);
  std::shared_ptr<void> bound = bind_storage(registry, path, options);
  if (format.empty()) format = registry.detect_format(staging_location);
  const stowage_plugin* d = registry.load("format", format, path);
  auto state = new_state(registry, *d, path, staging_location, format);
  state->storage_bindings.push_back(std::move(bound));
  state->staged_directory = staging_location.substr(0, at);
  if (!(d->capabilities & STOWAGE_CAP_SHARED_WRITES))
    throw Error(ErrorCode::invalid_argument,
                path + ": format " + format +
                    " takes one writer at a time; it cannot be written from another "
                    "handle while it is being created",
                path);
  return open_state(std::move(state), Mode::update, options);
}

}  // namespace stowage
