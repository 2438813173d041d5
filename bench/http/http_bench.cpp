// Raw throughput of the http storage backend against a private nginx on
// loopback, beside reading the same files locally (pread, page cache warm).
//
//   http_bench [FILES] [THREADS]     (default: 256 files, 2 threads)
//
// The files are chunk-sized, 64^3 uint16 = 512 KiB each (256 of them: the
// 128 MiB volume of bench/n5), read whole by read_into from THREADS threads,
// file i by thread i % THREADS, as the host reads chunks in parallel. Each
// figure is the best of 5 rounds. STOWAGE_HTTP_PLUGIN names the plugin
// (`ninja -C build bench-http` sets it).
#include "nginx.hpp"

#include <stowage/storage.hpp>

#include <dlfcn.h>
#include <fcntl.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

namespace sdk = stowage::sdk;

namespace {

constexpr size_t kFileSize = 64 * 64 * 64 * 2;

double best_seconds(const std::function<void()>& round) {
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    round();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void in_threads(int threads, int files, const std::function<void(int file, std::vector<char>& buf)>& read) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<char> buf(kFileSize);
      for (int i = t; i < files; i += threads) read(i, buf);
    });
  for (std::thread& t : pool) t.join();
}

std::string name(int i) { return "c" + std::to_string(i); }

}  // namespace

int main(int argc, char** argv) {
  int files = argc > 1 ? std::atoi(argv[1]) : 256;
  int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const char* plugin = std::getenv("STOWAGE_HTTP_PLUGIN");
  if (!plugin) {
    std::fprintf(stderr, "http_bench: set STOWAGE_HTTP_PLUGIN to stowage_store_http.so\n");
    return 2;
  }
  void* lib = ::dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  auto entry = lib ? reinterpret_cast<stowage_plugin_entry_fn>(::dlsym(lib, STOWAGE_PLUGIN_ENTRY_SYMBOL)) : nullptr;
  if (!entry) {
    std::fprintf(stderr, "http_bench: cannot load %s: %s\n", plugin, ::dlerror());
    return 2;
  }
  stowage_host host{};
  host.struct_size = sizeof host;
  host.abi_version = STOWAGE_PLUGIN_ABI;
  auto vt = static_cast<const stowage_storage_vtable*>(entry(&host)->vtable);
  stowage_storage_handle h = nullptr;
  stowage_error err{};
  if (vt->open(&host, "", 0, &h, &err) != STOWAGE_OK) {
    std::fprintf(stderr, "http_bench: %s\n", err.message);
    return 1;
  }
  sdk::Storage storage(vt, h, 0);

  test::Nginx nginx;
  std::string bytes(kFileSize, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 2654435761u >> 13);
  for (int i = 0; i < files; ++i) test::write_file(nginx.root() / name(i), bytes);

  double mib = double(files) * kFileSize / (1 << 20);
  double local = best_seconds([&] {
    in_threads(threads, files, [&](int i, std::vector<char>& buf) {
      int fd = ::open((nginx.root() / name(i)).c_str(), O_RDONLY);
      if (fd < 0 || ::pread(fd, buf.data(), buf.size(), 0) != static_cast<ssize_t>(buf.size())) std::abort();
      ::close(fd);
    });
  });
  double http = best_seconds([&] {
    in_threads(threads, files, [&](int i, std::vector<char>& buf) {
      storage.read_exact(nginx.url(name(i)), 0, buf.data(), buf.size());
    });
  });
  std::printf("%d files of %zu bytes (%.0f MiB), %d threads, best of 5\n", files, kFileSize, mib, threads);
  std::printf("local pread      %8.0f MiB/s\n", mib / local);
  std::printf("http read_into   %8.0f MiB/s  (%.2f of local)\n", mib / http, local / http);
  vt->close(h);
  return 0;
}
