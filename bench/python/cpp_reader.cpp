// The C++ side of bench/python: the same reads as the Python package's,
// through the C++ API, so the table compares like with like.
//
//   cpp_reader array PATH NODE RUNS     whole-array Array::read into one buffer
//   cpp_reader sparse PATH RUNS         Sparse::read_into of every column, buffers reused
//
// Prints the best wall time of RUNS in seconds (default threads: all cores).
#include <stowage/stowage.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

namespace {

template <class F>
double best_of(int runs, F&& f) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string what = argc > 1 ? argv[1] : "";
    if (what == "array" && argc == 5) {
      stowage::Array a = stowage::Store::open(argv[2]).array(argv[3]);
      size_t bytes = a.info().element_count() * stowage::dtype_size(a.dtype());
      std::unique_ptr<char[]> out(new char[bytes]);
      std::printf("%.6f\n", best_of(std::atoi(argv[4]), [&] {
                    a.read(std::vector<uint64_t>(a.ndim(), 0), a.shape(), out.get());
                  }));
      return 0;
    }
    if (what == "sparse" && argc == 4) {
      stowage::Sparse m = stowage::Store::open(argv[2]).sparse("");
      stowage::SparseSlice slice;
      std::printf("%.6f\n", best_of(std::atoi(argv[3]), [&] { m.read_into(0, m.majors(), slice); }));
      return 0;
    }
    std::fprintf(stderr, "usage: cpp_reader array PATH NODE RUNS | cpp_reader sparse PATH RUNS\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpp_reader: %s\n", e.what());
    return 1;
  }
}
