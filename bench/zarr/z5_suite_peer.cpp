// z5 on the zarrs suite (z5_suite_peer.hpp). z5 is header-only and C++20;
// this file alone is built with it (bench/zarr/meson.build).
#include "z5_suite_peer.hpp"

#include "z5/factory.hxx"
#include "z5/filesystem/handle.hxx"
#include "z5/multiarray/array_access.hxx"

#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <numeric>
#include <thread>
#include <vector>

namespace z5_suite {

namespace {

std::unique_ptr<z5::Dataset> open(const std::string& path) {
  std::filesystem::path p(path);
  z5::filesystem::handle::File file(p.parent_path().string());
  return z5::openDataset(file, p.filename().string());
}

z5::multiarray::ArrayView<uint16_t> whole(uint16_t* data, const z5::types::ShapeType& shape) {
  return z5::multiarray::ArrayView<uint16_t>(data, shape, z5::multiarray::cOrderStrides(shape));
}

}  // namespace

void read_all(const std::string& path, uint16_t* out, int threads) {
  auto ds = open(path);
  const z5::types::ShapeType origin(ds->dimension(), 0);
  z5::multiarray::readSubarray<uint16_t>(*ds, whole(out, ds->shape()), origin.begin(), threads);
}

void round_trip(const std::string& path, const std::string& to, const zarrs_suite::Layout& layout,
                uint16_t* buffer, int threads) {
  auto in = open(path);
  const z5::types::ShapeType shape = in->shape(), origin(in->dimension(), 0);
  z5::multiarray::readSubarray<uint16_t>(*in, whole(buffer, shape), origin.begin(), threads);
  std::filesystem::path p(to);
  z5::filesystem::handle::File file(p.parent_path().string());
  if (!file.exists()) z5::createFile(file, true, 3);
  const uint64_t c = layout.chunk();
  const z5::types::ShapeType chunks = {c, c, c};
  const z5::types::ShapeType shards =
      layout.sharded ? z5::types::ShapeType{256, 256, 256} : z5::types::ShapeType();
  const nlohmann::json options =
      layout.zstd ? nlohmann::json{{"level", 3}} : nlohmann::json::object();
  auto out = z5::createDataset(file, p.filename().string(), "uint16", shape, chunks,
                               layout.zstd ? "zstd" : "raw", options, 0, ".", 3, "default", shards);
  z5::multiarray::writeSubarray<uint16_t>(*out, whole(buffer, shape), origin.begin(), threads);
}

uint64_t read_chunks(const std::string& path, uint64_t edge, int concurrency, bool sum) {
  auto ds = open(path);
  const z5::types::ShapeType shape = ds->shape();
  const uint64_t per = shape[0] / edge, count = per * per * per;
  std::atomic<uint64_t> next{0}, total{0};
  auto work = [&] {
    std::vector<uint16_t> buf(edge * edge * edge);
    const z5::types::ShapeType box = {edge, edge, edge};
    uint64_t mine = 0;
    for (uint64_t i; (i = next.fetch_add(1)) < count;) {
      const z5::types::ShapeType at = {i / (per * per) * edge, i / per % per * edge,
                                       i % per * edge};
      z5::multiarray::readSubarray<uint16_t>(*ds, whole(buf.data(), box), at.begin(), 1);
      if (sum) mine = std::accumulate(buf.begin(), buf.end(), mine);
    }
    total += mine;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < concurrency; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return total;
}

}  // namespace z5_suite
