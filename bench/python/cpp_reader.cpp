// The C++ side of bench/python: the same reads as the Python package's,
// through the C++ API, so the table compares like with like.
//
//   cpp_reader array PATH NODE RUNS     whole-array Array::read
//   cpp_reader sparse PATH RUNS         every column: Sparse::read, then read_into
//                                       (and a third figure: the first read)
//
// Prints two best wall times of RUNS in seconds, each after an untimed
// warm-up run (default threads: all cores): into a buffer allocated for each read (what a[...] and
// to_scipy() must do, returning new arrays: the first touch of fresh pages is paid there), then
// into one buffer reused by every read (what a.read(out=) does; Sparse::read_into reuses its
// vectors).
#include <stowage/stowage.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

// The best of `runs` timed calls after one untimed warm-up call: the rule
// bench_python.py follows for the Python side too.
template <class F>
double seconds(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class F>
double best_of(int runs, F&& f, double* first = nullptr) {
  double warm_up = seconds(f);
  if (first) *first = warm_up;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
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
      std::vector<uint64_t> origin(a.ndim(), 0);
      int runs = std::atoi(argv[4]);
      double fresh = best_of(runs, [&] {
        std::unique_ptr<char[]> out(new char[bytes]);
        a.read(origin, a.shape(), out.get());
      });
      std::unique_ptr<char[]> out(new char[bytes]);
      double reused = best_of(runs, [&] { a.read(origin, a.shape(), out.get()); });
      std::printf("%.6f %.6f\n", fresh, reused);
      return 0;
    }
    if (what == "sparse" && argc == 4) {
      stowage::Sparse m = stowage::Store::open(argv[2]).sparse("");
      int runs = std::atoi(argv[3]);
      double first = 0;
      double fresh = best_of(runs, [&] { stowage::SparseSlice s = m.read(0, m.majors()); }, &first);
      stowage::SparseSlice slice;
      double reused = best_of(runs, [&] { m.read_into(0, m.majors(), slice); });
      std::printf("%.6f %.6f %.6f\n", fresh, reused, first);
      return 0;
    }
    std::fprintf(stderr, "usage: cpp_reader array PATH NODE RUNS | cpp_reader sparse PATH RUNS\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpp_reader: %s\n", e.what());
    return 1;
  }
}
