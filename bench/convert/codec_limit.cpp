// The codec limit of bench/convert, timed through this tree's own codec
// plugins (the implementations and parameters stowage-convert uses: gzip via
// libdeflate where the plugin has it, blosc with the element size as
// typesize), on one thread.
//
//   codec_limit RUNS DATASET_DIR DECODER_JSON ENCODER_JSON
//
// Reads every chunk file of an N5 dataset (untimed), keeps the payloads
// after the header, then times, best of RUNS: decode each payload with
// DECODER_JSON ({"type": "raw"} for uncompressed chunks: no decode) and
// encode the result with ENCODER_JSON, in memory. Prints the best wall time
// and the best CPU time (this process), in seconds, on stdout.
#include <stowage/stowage.hpp>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: codec_limit RUNS DATASET_DIR DECODER_JSON ENCODER_JSON\n");
    return 2;
  }
  try {
    int runs = std::max(1, std::atoi(argv[1]));
    stowage::json dec_config = stowage::json::parse(argv[3]),
                  enc_config = stowage::json::parse(argv[4]);
    bool raw_in = dec_config["type"] == "raw";
    stowage::Registry::global().set_threads(1);
    stowage::Codec decoder =
        raw_in ? stowage::Codec() : stowage::Registry::global().codec(dec_config);
    stowage::Codec encoder = stowage::Registry::global().codec(enc_config);

    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(argv[2]))
      if (e.is_regular_file() && e.path().filename() != "attributes.json")
        files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<std::string> payloads;
    std::vector<size_t> sizes;  // decoded sizes, from each chunk header
    for (const fs::path& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto u8 = [&](size_t i) { return static_cast<uint64_t>(static_cast<unsigned char>(b[i])); };
      size_t ndim = u8(2) << 8 | u8(3), n = 2;  // uint16 elements
      for (size_t d = 0; d < ndim; ++d)
        n *= u8(4 + 4 * d) << 24 | u8(5 + 4 * d) << 16 | u8(6 + 4 * d) << 8 | u8(7 + 4 * d);
      payloads.push_back(b.substr(4 + 4 * ndim));
      sizes.push_back(n);
    }
    size_t max_size = *std::max_element(sizes.begin(), sizes.end());
    std::vector<uint8_t> decoded(max_size), encoded(encoder.bound(max_size));
    auto cpu_now = [] {
      timespec ts;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return ts.tv_sec + ts.tv_nsec * 1e-9;
    };
    double best = 1e30, best_cpu = 1e30;
    for (int r = 0; r < runs; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      double c0 = cpu_now();
      for (size_t i = 0; i < payloads.size(); ++i) {
        const void* in = payloads[i].data();
        if (!raw_in) {
          decoder.decode(payloads[i].data(), payloads[i].size(), decoded.data(), sizes[i]);
          in = decoded.data();
        }
        encoder.encode(in, sizes[i], encoded.data(), encoded.size());
      }
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      best_cpu = std::min(best_cpu, cpu_now() - c0);
    }
    std::printf("%.6f %.6f\n", best, best_cpu);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "codec_limit: %s\n", e.what());
    return 1;
  }
  return 0;
}
