// Writes most of an .npy file, then kills itself with SIGKILL before close():
// the test checks that no destination file appears.
#include <stowage/stowage.hpp>

#include <csignal>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  stowage::Store store = stowage::Store::open(argv[1], stowage::Mode::truncate);
  store.create("", {{"kind", "array"}, {"dtype", "float32"}, {"shape", {1000, 1000}}});
  std::vector<float> values(1000 * 1000, 1.5f);
  store.array("").write({0, 0}, {1000, 1000}, values.data());
  std::printf("wrote, now killing myself\n");
  std::fflush(stdout);
  std::raise(SIGKILL);
  return 1;
}
