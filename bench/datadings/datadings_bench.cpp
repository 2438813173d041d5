// datadings benchmark: 100,000 samples of {"key": str, "image": 32x32x3
// uint8 msgpack-numpy array, "label": int}, through the stowage C++ API:
// write, sequential read and 10,000 random reads by index, each returning the
// raw bytes and decoding every sample into values (msgpack_sample.hpp),
// 10,000 key lookups and reads by key, 100,000 contains checks.
//
//   datadings_bench [samples] [directory] [runs]
// Run through `ninja -C <build> bench-datadings` (uses this tree's plugins,
// and prints in the same run a Python baseline from peer_python_reader.py,
// which reads the same random indices). Every row, ours and Python's, is the
// best of `runs` passes (default 3).
#include <stowage/msgpack_sample.hpp>
#include <stowage/stowage.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

// Wall time and this process's CPU time: on a shared machine the CPU time
// shows what one core does, the wall time what this run got.
struct Timer {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = cpu_seconds();
  static double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  }
  double wall_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  }
  double cpu_seconds_since() const { return cpu_seconds() - cpu; }
};

int runs = 3;

// Times `runs` passes of pass() and prints the best wall and CPU times.
void best_of(const char* what, uint64_t n, const std::function<void()>& pass) {
  double wall = 1e30, cpu = 1e30;
  for (int i = 0; i < runs; ++i) {
    Timer t;
    pass();
    wall = std::min(wall, t.wall_seconds()), cpu = std::min(cpu, t.cpu_seconds_since());
  }
  std::printf("%-42s %7llu  wall %7.3f s %10.0f/s   cpu %7.3f s %10.0f/s\n", what,
              static_cast<unsigned long long>(n), wall, n / wall, cpu, n / cpu);
  std::fflush(stdout);
}

std::string key_of(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "train/%07llu", static_cast<unsigned long long>(i));
  return buf;
}

// What msgpack.packb({"key": k, "image": img, "label": l}, default=msgpack_numpy.encode) gives.
std::string make_sample(uint64_t i, std::mt19937_64& rng) {
  std::string image(32 * 32 * 3, '\0');
  for (size_t at = 0; at < image.size(); at += 8) {
    uint64_t r = rng();
    std::memcpy(&image[at], &r, 8);
  }
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> p(b);
  auto bin = [&](const std::string& s) {
    p.pack_bin(static_cast<uint32_t>(s.size()));
    p.pack_bin_body(s.data(), static_cast<uint32_t>(s.size()));
  };
  p.pack_map(3);
  p.pack(std::string("key"));
  p.pack(key_of(i));
  p.pack(std::string("image"));
  p.pack_map(5);
  bin("nd");
  p.pack_true();
  bin("type");
  p.pack(std::string("|u1"));
  bin("kind");
  bin("");
  bin("shape");
  p.pack(std::vector<int>{32, 32, 3});
  bin("data");
  bin(image);
  p.pack(std::string("label"));
  p.pack(static_cast<int>(i % 1000));
  return std::string(b.data(), b.size());
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = argc > 1 ? std::stoull(argv[1]) : 100000;
  if (argc > 3) runs = std::max(1, std::atoi(argv[3]));
  std::filesystem::path dir = argc > 2
                                  ? std::filesystem::path(argv[2])
                                  : std::filesystem::temp_directory_path() /
                                        ("stowage-datadings-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "bench.msgpack").string();
  std::printf("datadings bench: %llu samples, 32x32x3 uint8 + label + key, in %s\n",
              static_cast<unsigned long long>(n), path.c_str());
  std::printf(
      "Rules (every row, ours and Python's): best of %d passes; one thread; warm page cache\n"
      "(the file was just written, and each read row runs after the others); the same 10,000\n"
      "random indices on both sides; wall and CPU time each the best of the passes.\n",
      runs);

  // Samples are made in batches of 1000 before the clock starts.
  std::mt19937_64 rng(42);
  const uint64_t batch = 1000;
  std::vector<std::vector<std::string>> batches;
  for (uint64_t i = 0; i < n; ++i) {
    if (i % batch == 0) batches.emplace_back();
    batches.back().push_back(make_sample(i, rng));
  }

  best_of("write (append + close)", n, [&] {
    stowage::Store out = stowage::Store::open(path, stowage::Mode::truncate, "datadings");
    out.create("", {{"kind", "records"}});
    stowage::Records r = out.records();
    for (const auto& part : batches) r.append(part);
    out.close();
  });
  std::printf("  data file: %.1f MB\n", std::filesystem::file_size(path) / 1e6);
  batches.clear();
  batches.shrink_to_fit();

  stowage::Store store = stowage::Store::open(path);
  stowage::Records r = store.records();

  uint64_t bytes = 0, label_sum = 0;
  best_of("sequential read (raw bytes)", r.size(),
          [&] { r.read_range(0, r.size(), [&](std::string_view s) { bytes += s.size(); }); });
  auto decode = [&](std::string_view s) {
    stowage::sample::Value v = stowage::sample::decode(s);
    label_sum += v["label"].as_uint() + v["image"].as_ndarray().data.size();
  };
  best_of("sequential read + decode", r.size(), [&] { r.read_range(0, r.size(), decode); });

  std::mt19937_64 pick(7);
  std::vector<uint64_t> indices(10000);
  for (uint64_t& i : indices) i = pick() % n;
  // The Python baseline reads the same indices.
  std::string indices_path = (dir / "bench.indices").string();
  {
    FILE* f = std::fopen(indices_path.c_str(), "wb");
    std::fwrite(indices.data(), 8, indices.size(), f);  // little endian on this machine
    std::fclose(f);
  }

  best_of("random read by index", indices.size(), [&] {
    for (uint64_t i : indices) bytes += r.read(i).size();
  });
  best_of("random read by index + decode", indices.size(), [&] {
    for (uint64_t i : indices) decode(r.read(i));
  });

  std::vector<std::string> keys;
  for (uint64_t i : indices) keys.push_back(key_of(i));
  best_of("find by key", keys.size(), [&] {
    for (const std::string& k : keys) bytes += *r.find(k);
  });
  best_of("random read by key (find + read)", keys.size(), [&] {
    for (const std::string& k : keys) bytes += r.read(*r.find(k)).size();
  });

  // One BLAKE2s a check: the filter's digest also gives the key's
  // fingerprint in the presence table. Absent keys mostly stop at the filter.
  std::vector<std::string> present_keys, absent_keys;
  for (uint64_t i = 0; i < 100000; ++i) {
    present_keys.push_back(key_of(pick() % n));
    absent_keys.push_back("absent/" + std::to_string(i));
  }
  r.contains(present_keys[0]);  // loads the filter and the key table, outside the timing
  uint64_t present = 0;
  auto best_of_contains = [&](const char* what, uint64_t n, const std::function<uint64_t()>& pass) {
    best_of(what, n, [&] { present += pass(); });
  };
  auto one_by_one = [&](const std::vector<std::string>& keys) {
    return [&] {
      uint64_t found = 0;
      for (const std::string& k : keys) found += r.contains(k);
      return found;
    };
  };
  // The same checks as one batch: one call into the plugin, which overlaps
  // a key's cache misses with the next key's hashing.
  auto batched = [&](const std::vector<std::string>& keys) {
    return [&] {
      uint64_t found = 0;
      for (bool p : r.contains(std::vector<std::string_view>(keys.begin(), keys.end()))) found += p;
      return found;
    };
  };
  best_of_contains("contains (present keys)", present_keys.size(), one_by_one(present_keys));
  best_of_contains("contains (absent keys)", absent_keys.size(), one_by_one(absent_keys));
  best_of_contains("contains batch (present keys)", present_keys.size(), batched(present_keys));
  best_of_contains("contains batch (absent keys)", absent_keys.size(), batched(absent_keys));

  stowage::json v;
  best_of("verify (md5 of all files)", 1, [&] { v = store.command("", "verify"); });

  // The Python baseline (datadings' way of reading), when asked for.
  if (const char* script = std::getenv("DATADINGS_BENCH_PYTHON_PEER")) {
    std::fflush(stdout);
    std::string command = "/usr/bin/python3 '" + std::string(script) + "' '" + path + "' '" +
                          indices_path + "' " + std::to_string(runs);
    if (std::system(command.c_str()) != 0) std::printf("python baseline failed\n");
  }

  std::printf("checksum %llu %llu %s\n", static_cast<unsigned long long>(label_sum + bytes),
              static_cast<unsigned long long>(present),
              v["ok"].get<bool>() ? "verified" : "VERIFY FAILED");
  if (argc <= 2) std::filesystem::remove_all(dir);
  return 0;
}
