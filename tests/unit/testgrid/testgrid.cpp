// stowage_format_testgrid: an in-memory chunked array used only by the core
// tests. Every element's value is a formula of its coordinates, so region I/O
// can be checked exactly for any layout: C or Fortran order inside chunks,
// big- or little-endian bytes, cropped or padded edge chunks, missing chunks.
//
// Open options: {"dtype": "uint16", "shape": [..], "chunks": [..],
//                "order": "C"|"F", "byte_order": "little"|"big",
//                "edge": "cropped"|"padded", "missing_every": 5}
// Chunk c is MISSING when (sum of its indices) % missing_every == 0.
#include <stowage/plugin_util.hpp>

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>

namespace {

using nlohmann::json;
using stowage::sdk::invalid;

// The value of element `coord`: distinct for every coordinate in small arrays.
inline uint64_t formula(const std::vector<uint64_t>& coord) {
  uint64_t v = 0;
  for (uint64_t c : coord) v = v * 1000 + c;
  return v * 7 + 3;
}

class TestGrid : public stowage::sdk::Store {
 public:
  static int32_t identify(const stowage::sdk::Probe& probe) {
    return probe.path() == "testgrid:" ? 100 : 0;
  }
  static std::unique_ptr<stowage::sdk::Store> open(const stowage::sdk::Host&, std::string_view,
                                                   uint32_t, std::string_view options) {
    return std::make_unique<TestGrid>(json::parse(options));
  }

  explicit TestGrid(const json& o) {
    dtype_ = o.value("dtype", "uint16");
    esize_ = dtype_ == "uint8" ? 1 : dtype_ == "uint16" ? 2 : dtype_ == "uint32" ? 4 : 8;
    shape_ = o.at("shape").get<std::vector<uint64_t>>();
    chunks_ = o.at("chunks").get<std::vector<uint64_t>>();
    fortran_ = o.value("order", "C") == "F";
    big_ = o.value("byte_order", "little") == "big";
    padded_ = o.value("edge", "cropped") == "padded";
    missing_every_ = o.value("missing_every", 5);
  }

  std::vector<std::string> list(std::string_view) override { return {}; }
  std::string describe(std::string_view node) override {
    if (!node.empty()) stowage::sdk::fail(STOWAGE_NOT_FOUND, "testgrid has only the root");
    json j = {{"kind", "array"},
              {"dtype", dtype_},
              {"shape", shape_},
              {"chunks", chunks_},
              {"order", fortran_ ? "F" : "C"},
              {"byte_order", big_ ? "big" : "little"},
              {"fill_value", 9},
              {"attributes", json::object()}};
    return j.dump();
  }

  std::unique_ptr<stowage::sdk::Node> open_node(std::string_view node) override;

  bool read_chunk(const uint64_t* idx, void* out, size_t cap, uint64_t* shape) {
    std::vector<uint64_t> index(idx, idx + shape_.size());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = written_.find(index);
      if (it != written_.end()) {
        if (it->second.second.size() > cap) stowage::sdk::corrupt("chunk too big");
        std::memcpy(out, it->second.second.data(), it->second.second.size());
        for (size_t d = 0; d < shape_.size(); ++d) shape[d] = it->second.first[d];
        return true;
      }
    }
    uint64_t sum = 0;
    for (uint64_t i : index) sum += i;
    if (missing_every_ && sum % missing_every_ == 0) return false;
    std::vector<uint64_t> extent(shape_.size());
    for (size_t d = 0; d < shape_.size(); ++d)
      extent[d] = padded_ ? chunks_[d] : std::min(chunks_[d], shape_[d] - index[d] * chunks_[d]);
    generate(index, extent, static_cast<unsigned char*>(out));
    for (size_t d = 0; d < shape_.size(); ++d) shape[d] = extent[d];
    return true;
  }

  void write_chunk(const uint64_t* idx, const void* in, size_t n, const uint64_t* shape) {
    std::vector<uint64_t> index(idx, idx + shape_.size()), extent(shape, shape + shape_.size());
    uint64_t count = 1;
    for (size_t d = 0; d < shape_.size(); ++d) {
      if (extent[d] != std::min(chunks_[d], shape_[d] - index[d] * chunks_[d]))
        invalid("write_chunk: bad extent");
      count *= extent[d];
    }
    if (count * esize_ != n) invalid("write_chunk: size does not match the extent");
    const auto* p = static_cast<const unsigned char*>(in);
    std::lock_guard<std::mutex> lock(mutex_);
    written_[index] = {extent, std::vector<unsigned char>(p, p + n)};
  }

  // Written chunks, and those the formula makes, exist.
  bool chunk_exists(const uint64_t* idx) {
    std::vector<uint64_t> index(idx, idx + shape_.size());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (written_.count(index)) return true;
    }
    uint64_t sum = 0;
    for (uint64_t i : index) sum += i;
    return !(missing_every_ && sum % missing_every_ == 0);
  }

 private:
  // Fills a chunk of `extent` elements (C or F order, stored byte order).
  void generate(const std::vector<uint64_t>& index, const std::vector<uint64_t>& extent,
                unsigned char* out) const {
    size_t nd = shape_.size();
    uint64_t count = 1;
    for (uint64_t e : extent) count *= e;
    std::vector<uint64_t> local(nd, 0), coord(nd);
    for (uint64_t flat = 0; flat < count; ++flat) {
      uint64_t rest = flat;
      if (fortran_) {
        for (size_t d = 0; d < nd; ++d) local[d] = rest % extent[d], rest /= extent[d];
      } else {
        for (size_t d = nd; d-- > 0;) local[d] = rest % extent[d], rest /= extent[d];
      }
      for (size_t d = 0; d < nd; ++d) coord[d] = index[d] * chunks_[d] + local[d];
      uint64_t v = formula(coord);
      unsigned char bytes[8];
      for (size_t b = 0; b < esize_; ++b) {
        unsigned char byte = static_cast<unsigned char>(v >> (8 * b));  // little-endian
        bytes[big_ ? esize_ - 1 - b : b] = byte;
      }
      std::memcpy(out + flat * esize_, bytes, esize_);
    }
  }

  std::string dtype_;
  size_t esize_;
  std::vector<uint64_t> shape_, chunks_;
  bool fortran_, big_, padded_;
  int missing_every_;
  std::mutex mutex_;
  std::map<std::vector<uint64_t>, std::pair<std::vector<uint64_t>, std::vector<unsigned char>>>
      written_;
};

// The one array, served by the store.
class Root final : public stowage::sdk::ArrayNode {
 public:
  explicit Root(TestGrid& grid) : grid_(grid) {}
  bool read_chunk(const uint64_t* idx, void* out, size_t cap, uint64_t* shape) override {
    return grid_.read_chunk(idx, out, cap, shape);
  }
  void write_chunk(const uint64_t* idx, const void* in, size_t n, const uint64_t* shape) override {
    grid_.write_chunk(idx, in, n, shape);
  }
  bool chunk_exists(const uint64_t* idx) override { return grid_.chunk_exists(idx); }

 private:
  TestGrid& grid_;
};

std::unique_ptr<stowage::sdk::Node> TestGrid::open_node(std::string_view node) {
  describe(node);  // NOT_FOUND but for the root
  return std::make_unique<Root>(*this);
}

}  // namespace

STOWAGE_DEFINE_FORMAT_PLUGIN(TestGrid, "testgrid", "1.0.0",
                             "in-memory formula array for core tests", "{}",
                             STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_DENSE, nullptr)
