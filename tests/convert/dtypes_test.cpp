// float16, complex64 and complex128 through stowage-convert: numpy's .npy
// files into Zarr v3 and back, bit for bit; N5 (whose specification has
// neither) refused before anything is written; casts as numpy's astype,
// and complex to real only on a cast that names the complex type.
#include "test_support.hpp"

#include <doctest/doctest.h>

namespace {

std::string convert_cmd() { return test::env_or("STOWAGE_CONVERT", "stowage-convert"); }

test::RunResult convert(const std::string& args) {
  return test::run(convert_cmd() + " --quiet " + args);
}

std::string q(const test::fs::path& p) { return test::quote(p.string()); }

// numpy writes the sources: specials (NaN, infinities, -0.0, subnormals) in
// both byte orders.
void write_sources(const test::fs::path& dir) {
  REQUIRE(test::run_python(
              "import numpy as np, sys\n"
              "d = sys.argv[1]\n"
              "h = np.array([[1.5, -0.0, np.inf], [np.nan, 6e-8, 65504]], dtype='<f2')\n"
              "np.save(d + '/f2.npy', h)\n"
              "np.save(d + '/f2be.npy', h.astype('>f2'))\n"
              "c = np.array([1.5 - 2j, complex(np.inf, -0.0), complex(np.nan, 3), 1e-40j])\n"
              "np.save(d + '/c8be.npy', c.astype('>c8'))\n"
              "np.save(d + '/c16.npy', (c * 1e300).reshape(2, 2))\n"
              "np.save(d + '/f8.npy', np.array([0.1, 65519.0, -3e-8, np.nan, 1e5, 0.3]))\n",
              test::quote(dir.string()))
              .status == 0);
}

// numpy's verdict on a script's assertions, "ok" when all hold.
std::string numpy_says(const test::fs::path& dir, const std::string& script) {
  test::RunResult r =
      test::run_python("import numpy as np, sys\nd = sys.argv[1]\n" + script + "print('ok')\n",
                       test::quote(dir.string()));
  return r.output;
}

}  // namespace

TEST_CASE("numpy's float16 and complex .npy convert into Zarr v3 and back, bit for bit") {
  test::TempDir tmp;
  write_sources(tmp.path());
  for (const char* name : {"f2", "f2be", "c8be", "c16"}) {
    CAPTURE(name);
    const std::string src = (tmp / (std::string(name) + ".npy")).string();
    const test::fs::path zarr = tmp / (std::string(name) + ".zarr"),
                         back = tmp / (std::string(name) + "-back.npy");
    test::RunResult r = convert(test::quote(src) + " " + q(zarr));
    REQUIRE_MESSAGE(r.status == 0, r.output);
    const stowage::json meta = test::read_json(zarr / "zarr.json");
    CHECK(meta["data_type"] == (name[0] == 'f'   ? "float16"
                                : name[1] == '8' ? "complex64"
                                                 : "complex128"));
    r = convert(q(zarr) + " " + q(back));
    REQUIRE_MESSAGE(r.status == 0, r.output);
  }
  // The same bits (NaN payloads, -0.0), as numpy reads them.
  CHECK(numpy_says(tmp.path(),
                   "for n in ['f2', 'f2be', 'c8be', 'c16']:\n"
                   "    a, b = np.load(d + f'/{n}.npy'), np.load(d + f'/{n}-back.npy')\n"
                   "    assert a.shape == b.shape and a.dtype.kind == b.dtype.kind, n\n"
                   "    assert a.dtype.itemsize == b.dtype.itemsize, n\n"
                   "    u = 'u%d' % (a.dtype.itemsize // (2 if a.dtype.kind == 'c' else 1))\n"
                   "    bits = lambda x: x.astype(x.dtype.newbyteorder('<')).view('<' + u)\n"
                   "    assert (bits(a) == bits(b)).all(), (n, a, b)\n") == "ok\n");
}

TEST_CASE("N5 has no float16 or complex: stowage-convert says so and writes nothing") {
  test::TempDir tmp;
  write_sources(tmp.path());
  for (const char* name : {"f2", "c8be", "c16"}) {
    CAPTURE(name);
    const test::fs::path out = tmp / (std::string(name) + ".n5");
    test::RunResult r = convert(q(tmp / (std::string(name) + ".npy")) + " " + q(out));
    CHECK(r.status != 0);
    CHECK(r.output.find(out.string()) != std::string::npos);
    CHECK(r.output.find("no float16 or complex") != std::string::npos);
    CHECK(r.output.find("--cast") != std::string::npos);  // the way out
    CHECK_FALSE(test::fs::exists(out));
  }
  // An array in a container: named once, by the path the user gave and its node.
  {
    stowage::Store grp =
        stowage::Store::open((tmp / "grp.zarr").string(), stowage::Mode::truncate, "zarr");
    grp.create("x", {{"kind", "array"}, {"dtype", "float16"}, {"shape", {3}}, {"chunks", {3}}});
    grp.close();
  }
  const test::fs::path out = tmp / "grp.n5";
  test::RunResult r = convert(q(tmp / "grp.zarr") + " " + q(out));
  CHECK(r.status != 0);
  CHECK_MESSAGE(r.output.find((out / "x").string() + ": n5 create") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find((out / "grp.n5").string()) == std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find(out.string() + ": " + out.string()) == std::string::npos, r.output);
  CHECK_FALSE(test::fs::exists(out));
  // With a cast the N5 has, it converts.
  CHECK(convert(q(tmp / "f2.npy") + " " + q(tmp / "f2.n5") + " --cast float32").status == 0);
}

TEST_CASE(
    "float16 casts as numpy's astype; overflow refused or clipped; complex to real only when named") {
  test::TempDir tmp;
  write_sources(tmp.path());
  const std::string dir = tmp.path().string();
  auto run = [&](const std::string& src, const std::string& out, const std::string& args) {
    return convert(test::quote(dir + "/" + src) + " " + test::quote(dir + "/" + out) + " " + args);
  };
  CHECK(run("f2be.npy", "f2-f4.npy", "--cast float32").status == 0);
  CHECK(run("f2.npy", "f2-f8.npy", "--cast float16=float64").status == 0);
  // 1e5 is beyond float16 (65504 is the largest, 65519 rounds to it).
  test::RunResult r = run("f8.npy", "f8-f2.npy", "--cast float16");
  CHECK(r.status == 2);
  CHECK(r.output.find("float16 cannot hold the float64 value 100000.0 at [4]") !=
        std::string::npos);
  CHECK_FALSE(test::fs::exists(tmp / "f8-f2.npy"));
  CHECK(run("f8.npy", "f8-f2.npy", "--cast float16 --cast-overflow clip").status == 0);
  CHECK(run("f8.npy", "f8-c8.npy", "--cast complex64").status == 0);
  // Complex to real drops the imaginary parts: refused unless the cast names the complex type.
  r = run("c8be.npy", "c8-f8.npy", "--cast float64");
  CHECK(r.status == 2);
  CHECK(r.output.find("imaginary") != std::string::npos);
  CHECK(r.output.find("--cast complex64=float64") != std::string::npos);
  CHECK_FALSE(test::fs::exists(tmp / "c8-f8.npy"));
  CHECK(run("c8be.npy", "c8-f8.npy", "--cast complex64=float64").status == 0);
  r = run("c16.npy", "c16-c8.npy", "--cast complex64");
  CHECK(r.status == 2);
  CHECK(r.output.find("complex64 cannot hold the complex128 value") != std::string::npos);
  CHECK(
      numpy_says(tmp.path(),
                 "same = lambda a, b: a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)\n"
                 "h = np.load(d + '/f2.npy')\n"
                 "assert same(np.load(d + '/f2-f4.npy'), h.astype('<f4'))\n"
                 "assert same(np.load(d + '/f2-f8.npy'), h.astype('<f8'))\n"
                 "f = np.load(d + '/f8.npy')\n"
                 "want = np.clip(f, -65504, 65504).astype('<f2')\n"
                 "assert same(np.load(d + '/f8-f2.npy'), want), np.load(d + '/f8-f2.npy')\n"
                 "assert same(np.load(d + '/f8-c8.npy'), f.astype('<c8'))\n"
                 "c = np.load(d + '/c8be.npy')\n"
                 "assert same(np.load(d + '/c8-f8.npy'), c.real.astype('<f8'))\n") == "ok\n");
}
