// A host program that converts through the library, not the tool: the
// smallest use of stowage::copy (copy.hpp). Build it against an installed
// stowage with
//   g++ -std=c++17 copy_host.cpp $(pkg-config --cflags --libs stowage)
// and run it as `copy_host SRC DST [CODEC]`, e.g.
//   copy_host examples/volume.n5::raw/s0 s0-zstd.n5 zstd:level=5
#include <stowage/copy.hpp>

#include <cstdio>
#include <iostream>

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::cerr << "usage: copy_host SRC DST [CODEC]\n";
    return 2;
  }
  stowage::CopyOptions options;
  if (argc == 4) options.compression = stowage::parse_compression_spec(argv[3]);
  int last_percent = -1;
  options.progress = [&](const stowage::CopyProgress& p) {
    int percent = p.bytes_total ? static_cast<int>(100 * p.bytes_done / p.bytes_total) : 100;
    if (percent / 25 != last_percent / 25) std::fprintf(stderr, "copy_host: %d%%\n", percent);
    last_percent = percent;
  };
  try {
    stowage::CopyResult r = stowage::copy(argv[1], argv[2], options);
    std::cout << r.from << " -> " << r.to << ": " << r.nodes << " nodes, " << r.bytes_in
              << " bytes in, " << r.bytes_out << " bytes out\n";
    return 0;
  } catch (const stowage::Error& e) {
    std::cerr << "copy_host: " << e.what() << "\n";
    return e.code() == stowage::ErrorCode::invalid_argument ? 2 : 1;
  }
}
