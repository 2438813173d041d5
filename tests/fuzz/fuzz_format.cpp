// libFuzzer target for one format reader (built once per format with
// -DFUZZ_FORMAT=<id>; see scripts/fuzz).
//
// npy is a single file: the input is the file. datg (matrix + two name
// files), n5, datadings, bpcells, daf and zarr are several files: the input is a
// bundle (fuzz_support.hpp) unpacked under the scratch root. The harness opens the dataset
// read-only, walks every node, describes it and reads everything in it (bounded by what a reader
// may justify from the input). The only exception allowed out is stowage::Error.
#include "fuzz_support.hpp"

#include <vector>

#ifndef FUZZ_FORMAT
#error "build with -DFUZZ_FORMAT=<npy|n5|datg|datadings|bpcells|daf|zarr>"
#endif
#define FUZZ_STR2(x) #x
#define FUZZ_STR(x) FUZZ_STR2(x)

namespace {

using stowage::NodeKind;

// Nothing here reads more than this many bytes of values from one node: a
// declared size beyond it is skipped, not read (the readers' own checks of
// declared sizes against the file are what the open/describe calls test).
constexpr uint64_t kMaxValueBytes = uint64_t(64) << 20;

struct Target {
  const char* format;
  const char* dataset;  // path under the scratch root that is opened
  bool bundle;          // input is a bundle (directory formats)
};

Target target() {
  const std::string t = FUZZ_STR(FUZZ_FORMAT);
  if (t == "npy") return {"npy", "a.npy", false};
  // datg needs its two gzip'ed name files before it reads the block index.
  if (t == "datg") return {"datg", "a.datg", true};
  if (t == "n5") return {"n5", "d.n5", true};
  if (t == "datadings") return {"datadings", "d.msgpack", true};
  if (t == "bpcells") return {"bpcells", "m", true};
  if (t == "daf") return {"daf", "d", true};
  // Zarr v2 (.zarray, filters, .zmetadata) and v3 (zarr.json, shard indexes):
  // the seeds are both.
  if (t == "zarr") return {"zarr", "d.zarr", true};
  std::abort();
}

void read_array(const stowage::Store& store, const std::string& node,
                const stowage::NodeInfo& info) {
  uint64_t n = info.element_count();
  // Empty arrays are read too: a zero dimension beside huge ones once
  // overflowed the host's strides (RESULTS.md finding 2, now refused by
  // parse_node_info).
  if (n > kMaxValueBytes / stowage::dtype_size(info.dtype)) return;
  std::vector<uint8_t> out(n * stowage::dtype_size(info.dtype));
  auto array = store.array(node);
  array.read(std::vector<uint64_t>(array.ndim(), 0), array.shape(), out.data());
}

void read_sparse(const stowage::Store& store, const std::string& node,
                 const stowage::NodeInfo& info) {
  if (info.nnz > kMaxValueBytes / 16 || info.shape.size() != 2) return;
  auto sparse = store.sparse(node);
  if (sparse.majors() > kMaxValueBytes / 8) return;
  stowage::SparseSlice slice;
  sparse.read_into(0, sparse.majors(), slice);
  uint64_t rows = info.shape[0], cols = info.shape[1];
  if (rows && cols && rows <= kMaxValueBytes / 8 / cols) {
    std::vector<uint8_t> dense(rows * cols * stowage::dtype_size(info.dtype));
    sparse.read_dense(0, 0, rows, cols, dense.data());
  }
}

void read_records(const stowage::Store& store, const std::string& node) {
  auto records = store.records(node);
  uint64_t n = records.size();
  uint64_t limit = n < 4096 ? n : 4096;
  records.read_range(0, limit, [](std::string_view) {});
  for (uint64_t i = 0; i < limit; ++i) {
    std::string key = records.key(i);
    (void)records.find(key);
    (void)records.contains(key);
  }
  (void)records.contains("no such key");
}

void read_node(const stowage::Store& store, const std::string& node) {
  stowage::NodeInfo info = store.describe(node);
  for (const auto& dim : info.dims)
    if (!dim.labels.empty()) (void)store.read_strings(dim.labels, 0, 1 << 20);
  switch (info.kind) {
    case NodeKind::array:
      read_array(store, node, info);
      break;
    case NodeKind::sparse:
      read_sparse(store, node, info);
      break;
    case NodeKind::strings:
      (void)store.read_strings(node, 0, 1 << 20);
      break;
    case NodeKind::records:
      read_records(store, node);
      break;
    case NodeKind::group:
      break;
  }
}

// Every node, depth first; each node on its own so one bad node does not
// hide the rest. Depth is bounded (a reader may list a cycle via links).
void walk(const stowage::Store& store, const std::string& node, int depth) {
  try {
    read_node(store, node);
  } catch (const stowage::Error&) {
  }
  if (depth > 16) return;
  std::vector<std::string> children;
  try {
    children = store.list(node);
  } catch (const stowage::Error&) {
    return;
  }
  for (const auto& child : children)
    walk(store, node.empty() ? child : node + "/" + child, depth + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Target t = target();
  fuzz::fs::path root = fuzz::fresh_root();
  fuzz::fs::path dataset = root / t.dataset;
  if (t.bundle)
    fuzz::unpack_bundle(data, size, root);
  else
    fuzz::write_bytes(dataset, data, size);
  try {
    auto store = stowage::Store::open(dataset.string(), stowage::Mode::read, t.format,
                                      stowage::json::object(), fuzz::registry());
    walk(store, "", 0);
    store.close();
  } catch (const stowage::Error&) {
  }
  return 0;
}
