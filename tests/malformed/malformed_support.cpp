#include "malformed_support.hpp"

#include <algorithm>

namespace malformed {

namespace {

// Appends a length-prefixed piece, so snapshots compare unambiguously.
void put(std::string& out, const void* data, size_t n) {
  uint64_t len = n;
  out.append(reinterpret_cast<const char*>(&len), 8);
  out.append(static_cast<const char*>(data), n);
}
void put(std::string& out, const std::vector<std::string>& v) {
  for (const auto& s : v) put(out, s.data(), s.size());
}

void read_node(const stowage::Store& store, const std::string& node, std::string& out) {
  put(out, node.data(), node.size());
  stowage::NodeInfo info = store.describe(node);
  put(out, info.shape.data(), info.shape.size() * 8);
  for (const auto& dim : info.dims)
    if (!dim.labels.empty()) put(out, store.read_strings(dim.labels));
  switch (info.kind) {
    case stowage::NodeKind::array: {
      std::vector<uint8_t> values(info.element_count() * stowage::dtype_size(info.dtype));
      auto array = store.array(node);
      array.read(std::vector<uint64_t>(array.ndim(), 0), array.shape(), values.data());
      put(out, values.data(), values.size());
      break;
    }
    case stowage::NodeKind::sparse: {
      auto sparse = store.sparse(node);
      stowage::SparseSlice sl = sparse.read(0, sparse.majors());
      put(out, sl.indptr.data(), sl.indptr.size() * 8);
      put(out, sl.indices.data(), sl.indices.size() * 4);
      put(out, sl.values.data(), sl.values.size());
      break;
    }
    case stowage::NodeKind::strings:
      put(out, store.read_strings(node));
      break;
    case stowage::NodeKind::records: {
      auto records = store.records(node);
      records.read_range(0, records.size(),
                         [&](std::string_view r) { put(out, r.data(), r.size()); });
      for (uint64_t i = 0; i < records.size(); ++i) {
        std::string key = records.key(i);
        put(out, key.data(), key.size());
      }
      break;
    }
    case stowage::NodeKind::group:
      break;
  }
}

void walk(const stowage::Store& store, const std::string& node, std::string& out) {
  read_node(store, node, out);
  for (const auto& child : store.list(node))
    walk(store, node.empty() ? child : node + "/" + child, out);
}

}  // namespace

void read_everything(const std::string& path, const std::string& format) {
  snapshot_everything(path, format);
}

std::string snapshot_everything(const std::string& path, const std::string& format) {
  auto store = stowage::Store::open(path, stowage::Mode::read, format);
  std::string out;
  walk(store, "", out);
  store.close();
  return out;
}

Outcome attempt(const std::function<void()>& fn) {
  Outcome o;
  try {
    fn();
  } catch (const stowage::Error& e) {
    o.threw = true;
    o.code = e.code();
    o.message = e.what();
  }
  return o;
}

void expect_error(const std::string& what, const std::function<void()>& fn, ErrorCode code,
                  const std::string& must_name) {
  Outcome o = attempt(fn);
  INFO(what);
  INFO("message: " << o.message);
  CHECK(o.threw);
  CHECK_MESSAGE(o.code == code, "got ", stowage::error_code_name(o.code), ", want ",
                stowage::error_code_name(code));
  CHECK_MESSAGE(o.message.find(must_name) != std::string::npos, "message should name ", must_name);
}

fs::path copy_fixture(const fs::path& fixture, const fs::path& dir, const std::string& name) {
  fs::path target = dir / (name.empty() ? fixture.filename().string() : name);
  fs::copy(fixture, target, fs::copy_options::recursive);
  if (fs::is_directory(target))
    for (auto& entry : fs::recursive_directory_iterator(target))
      fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
  fs::permissions(target, fs::perms::owner_write, fs::perm_options::add);
  return target;
}

std::string slurp(const fs::path& p) { return test::read_file(p); }
void spit(const fs::path& p, const std::string& data) { test::write_file(p, data); }

std::vector<size_t> truncation_points(size_t size, size_t spread) {
  std::vector<size_t> points;
  for (size_t i = 0; i < std::min<size_t>(size, 64); ++i) points.push_back(i);
  for (size_t k = 1; k <= spread && size > 64; ++k) points.push_back(64 + (size - 65) * k / spread);
  points.push_back(size - 1);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  while (!points.empty() && points.back() >= size) points.pop_back();
  return points;
}

}  // namespace malformed
