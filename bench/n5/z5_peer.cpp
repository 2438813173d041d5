// See z5_peer.hpp. z5's own API, as its README shows it: createFile (N5),
// createDataset with the codec and its options, writeSubarray / readSubarray
// through non-owning strided views, one thread.
#include "z5_peer.hpp"

#include "z5/factory.hxx"
#include "z5/filesystem/handle.hxx"
#include "z5/multiarray/array_access.hxx"

#include <nlohmann/json.hpp>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace z5_peer {

namespace {

namespace fs = std::filesystem;
const z5::types::ShapeType kShape = {256, 512, 512};
const z5::types::ShapeType kChunks = {64, 64, 64};

double now(bool cpu) {
  if (cpu) {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// z5's codec name and options for n5_bench's N5 compression object.
std::pair<std::string, nlohmann::json> z5_codec(const nlohmann::json& n5) {
  std::string type = n5.at("type");
  if (type == "raw") return {"raw", nlohmann::json::object()};
  if (type == "gzip") return {"gzip", {{"level", n5.at("level")}, {"useZlib", false}}};
  if (type == "zstd") return {"zstd", {{"level", n5.at("level")}}};
  if (type == "blosc")
    return {"blosc",
            {{"codec", n5.at("cname")},
             {"level", n5.at("clevel")},
             {"shuffle", n5.at("shuffle")},
             {"blocksize", 0},
             {"nthreads", 1}}};
  return {"", nullptr};
}

uint64_t bytes_under(const fs::path& dir) {
  uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "attributes.json") n += e.file_size();
  return n;
}

}  // namespace

std::map<std::string, Figures> run(const std::string& dir, const std::vector<uint16_t>& volume,
                                   const std::map<std::string, std::string>& codec_json,
                                   const std::vector<std::vector<uint64_t>>& random_chunks,
                                   int runs, bool cpu_clock) {
  std::map<std::string, Figures> out;
  const z5::types::ShapeType origin = {0, 0, 0};
  for (const auto& [name, text] : codec_json) {
    auto [codec, options] = z5_codec(nlohmann::json::parse(text));
    if (codec.empty()) continue;
    Figures f;
    f.write_s = f.read_s = f.random_chunk_us = 1e30;
    fs::path last;
    z5::multiarray::ConstArrayView<uint16_t> in(volume.data(), kShape,
                                                z5::multiarray::cOrderStrides(kShape));
    for (int r = 0; r < runs; ++r) {  // each write into a container that never existed
      last = fs::path(dir) / ("z5-" + name + "-" + std::to_string(r) + ".n5");
      fs::remove_all(last);
      z5::filesystem::handle::File file(last.string());
      z5::createFile(file, false);
      auto ds = z5::createDataset(file, "vol", "uint16", kShape, kChunks, codec, options);
      double t0 = now(cpu_clock);  // as n5_bench's write1: the dataset exists, its chunks are timed
      z5::multiarray::writeSubarray<uint16_t>(*ds, in, origin.begin(), 1);
      f.write_s = std::min(f.write_s, now(cpu_clock) - t0);
    }
    z5::filesystem::handle::File file(last.string());
    auto ds = z5::openDataset(file, "vol");
    std::vector<uint16_t> back(volume.size());
    z5::multiarray::ArrayView<uint16_t> whole(back.data(), kShape,
                                              z5::multiarray::cOrderStrides(kShape));
    for (int r = 0; r < runs; ++r) {
      double t0 = now(cpu_clock);
      z5::multiarray::readSubarray<uint16_t>(*ds, whole, origin.begin(), 1);
      f.read_s = std::min(f.read_s, now(cpu_clock) - t0);
    }
    if (back != volume) throw std::runtime_error("z5 " + name + ": the volume read back differs");
    std::vector<uint16_t> chunk(64 * 64 * 64);
    z5::multiarray::ArrayView<uint16_t> one(chunk.data(), kChunks,
                                            z5::multiarray::cOrderStrides(kChunks));
    for (int r = 0; r < runs; ++r) {
      double t0 = now(cpu_clock);
      for (const auto& c : random_chunks) {
        z5::types::ShapeType offset = {c[0] * 64, c[1] * 64, c[2] * 64};
        z5::multiarray::readSubarray<uint16_t>(*ds, one, offset.begin(), 1);
      }
      f.random_chunk_us =
          std::min(f.random_chunk_us, (now(cpu_clock) - t0) / random_chunks.size() * 1e6);
    }
    f.bytes = bytes_under(last);
    for (int r = 0; r < runs; ++r)
      fs::remove_all(fs::path(dir) / ("z5-" + name + "-" + std::to_string(r) + ".n5"));
    out[name] = f;
  }
  return out;
}

}  // namespace z5_peer
