// stowage reads the .npy files numpy writes: every numeric dtype, both byte
// orders, C and Fortran order, 0-d, empty and 3-D arrays, versions 1.0-3.0.
#include "npy_helpers.hpp"

using npytest::read_bytes;
using npytest::run_peer;

namespace {

// The C-order bytes of region [offset, offset+shape) of a C-order array.
std::string slice_bytes(const std::string& all, const std::vector<uint64_t>& full, size_t esize,
                        const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape) {
  std::string out;
  std::vector<uint64_t> i(shape.size(), 0);
  uint64_t n = 1;
  for (uint64_t e : shape) n *= e;
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t flat = 0;
    for (size_t d = 0; d < full.size(); ++d) flat = flat * full[d] + offset[d] + i[d];
    out.append(all, flat * esize, esize);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++i[d] < shape[d]) break;
      i[d] = 0;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every array numpy writes reads to numpy's values, bit for bit") {
  test::TempDir dir;
  run_peer("write", dir.path());
  stowage::json manifest = test::read_json(dir / "manifest.json");
  REQUIRE(manifest.size() > 200);
  for (const auto& entry : manifest) {
    const std::string name = entry["name"];
    CAPTURE(name);
    // Small slabs too, so that multi-chunk arrays are cut several ways.
    for (uint64_t chunk_bytes : {uint64_t{4} << 20, uint64_t{24}}) {
      stowage::Store store =
          stowage::Store::open((dir / (name + ".npy")).string(), stowage::Mode::read, "",
                               {{"chunk_bytes", chunk_bytes}});
      CHECK(store.format() == "npy");
      CHECK(store.list("").empty());
      stowage::Array a = store.array("");
      CHECK(stowage::dtype_name(a.dtype()) == entry["dtype"].get<std::string>());
      CHECK(a.shape() == entry["shape"].get<std::vector<uint64_t>>());
      CHECK(a.info().fortran_order == entry["fortran"].get<bool>());
      for (uint64_t c : a.info().chunks) CHECK(c >= 1);
      const std::string expected = test::read_file(dir / (name + ".raw"));
      const std::string got = read_bytes(a);
      CHECK(got == expected);
      if (a.shape() == std::vector<uint64_t>{37, 11, 3}) {
        std::vector<uint64_t> off{5, 2, 1}, shp{20, 7, 2};
        std::string part(20 * 7 * 2 * stowage::dtype_size(a.dtype()), '\0');
        a.read(off, shp, part.data());
        CHECK(part == slice_bytes(expected, a.shape(), stowage::dtype_size(a.dtype()), off, shp));
      }
    }
  }
}

TEST_CASE("the default slabs are contiguous runs of whole rows, a few MiB at most") {
  test::TempDir dir;
  stowage::json manifest = stowage::json::array();
  test::RunResult r = test::run_python(
      "import numpy as np, sys\n"
      "np.save(sys.argv[1] + '/c.npy', np.zeros((1000, 300, 7), dtype='<f8'))\n"
      "np.save(sys.argv[1] + '/f.npy', np.asfortranarray(np.zeros((7, 300, 1000), dtype='>i2')))\n",
      test::quote(dir.path().string()));
  REQUIRE(r.status == 0);
  stowage::NodeInfo c = stowage::Store::open((dir / "c.npy").string()).describe("");
  CHECK(c.chunks == std::vector<uint64_t>{249, 300, 7});  // 4 MiB / (300*7*8 bytes)
  CHECK_FALSE(c.big_endian);
  stowage::NodeInfo f = stowage::Store::open((dir / "f.npy").string()).describe("");
  CHECK(f.fortran_order);
  CHECK(f.big_endian);
  CHECK(f.chunks == std::vector<uint64_t>{7, 300, 998});  // 4 MiB / (7*300*2 bytes)
}

TEST_CASE("npy files are detected by their magic, and by the .npy extension for writing") {
  test::TempDir dir;
  test::RunResult r =
      test::run_python("import numpy as np, sys\nnp.save(sys.argv[1], np.arange(3))\n",
                       test::quote((dir / "noext").string()));
  REQUIRE(r.status == 0);
  // np.save appends .npy to a name without it.
  CHECK(stowage::Registry::global().detect_format((dir / "noext.npy").string()) == "npy");
  test::write_file(dir / "other.npy", "\x93NUMPX not npy");
  for (const auto& [id, score] : stowage::Registry::global().identify((dir / "other.npy").string()))
    if (id == "npy") CHECK(score == 0);
  CHECK(stowage::Registry::global().format_for_extension("x/y.npy") ==
        std::optional<std::string>("npy"));
}
