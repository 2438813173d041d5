// A separate process for the multi-process tests.
//
//   n5_test_writer CONTAINER NODE WORKER WORKERS [PASSES [index|pass]]
//     writes every chunk row `r` with r % workers == worker of a 2-D uint16
//     dataset, PASSES times over (default 3), with value(i) = i * 7 + 3 for
//     flat C index i ("index", the default), or with "pass": every element of
//     pass p (0-based) is p + 1, so a chunk read back must be uniformly one
//     pass's value.
//   n5_test_writer CONTAINER NODE same WRITER ROUNDS
//     ROUNDS times: writes the whole 2-D uint16 dataset (meant to be one
//     chunk) with same_value(WRITER, i), then sets the node's attributes to
//     same_attributes(WRITER, round) -- two of these racing on one chunk and
//     one attributes.json.
#include <stowage/stowage.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "n5_writer_values.hpp"

int main(int argc, char** argv) {
  if (argc < 5 || argc > 7) {
    std::cerr << "usage: n5_test_writer CONTAINER NODE WORKER WORKERS [PASSES [index|pass]]\n"
                 "       n5_test_writer CONTAINER NODE same WRITER ROUNDS\n";
    return 2;
  }
  try {
    stowage::Store store = stowage::Store::open(argv[1], stowage::Mode::update, "n5");
    stowage::Array a = store.array(argv[2]);
    if (std::string(argv[3]) == "same") {
      const uint64_t writer = std::stoull(argv[4]);
      const int rounds = std::stoi(argv[5]);
      std::vector<uint16_t> all(a.info().element_count());
      for (uint64_t i = 0; i < all.size(); ++i) all[i] = n5test::same_value(writer, i);
      for (int round = 0; round < rounds; ++round) {
        a.write(std::vector<uint64_t>(a.ndim(), 0), a.shape(), all.data());
        store.set_attributes(argv[2], n5test::same_attributes(writer, round));
      }
      store.close();
      return 0;
    }
    const uint64_t worker = std::stoull(argv[3]), workers = std::stoull(argv[4]);
    const int passes = argc >= 6 ? std::stoi(argv[5]) : 3;
    const bool by_pass = argc == 7 && std::string(argv[6]) == "pass";
    const uint64_t cols = a.shape()[1], chunk_rows = a.info().chunks[0];
    std::vector<uint16_t> band(chunk_rows * cols);
    for (int pass = 0; pass < passes; ++pass)
      for (uint64_t r = worker; r * chunk_rows < a.shape()[0]; r += workers) {
        for (uint64_t i = 0; i < band.size(); ++i)
          band[i] =
              by_pass ? uint16_t(pass % 65535 + 1) : uint16_t((r * chunk_rows * cols + i) * 7 + 3);
        a.write({r * chunk_rows, 0}, {chunk_rows, cols}, band.data());
      }
    store.close();
  } catch (const std::exception& e) {
    std::cerr << "n5_test_writer failed: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
