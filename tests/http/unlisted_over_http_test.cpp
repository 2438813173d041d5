// Public data read as it is served (issue #33): a server that answers 404
// for a folder URL, as S3's HTTP interface does for a prefix and nginx
// does serving files only. Detection and open find N5 and Zarr containers
// by their metadata files, asked for by name, and the values read equal
// the fixtures' expected data.
#include "nginx.hpp"
#include "failure.hpp"
#include "test_support.hpp"
#include "tools.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stowage::json;
using stowage::Store;

// nginx serving the fixtures under /files/ (and, listed, under /), where a folder URL is 404 (no
// listing, no redirect): only files are there, as in an object store.
struct FilesOnly {
  test::Nginx nginx{"", "    location /files/ { if (-d $request_filename) { return 404; } }\n"};
  FilesOnly() {
    fs::create_directory(nginx.root() / "files");
    for (const char* set : {"n5", "zarr"}) {
      fs::create_directory_symlink(fs::absolute(test::fixtures() / set),
                                   nginx.root() / "files" / set);
      fs::create_directory_symlink(fs::absolute(test::fixtures() / set), nginx.root() / set);
    }
  }
  std::string url(const std::string& path) const { return nginx.url("files/" + path); }
  // The same files under nginx's JSON autoindex, which hides dotfiles.
  std::string listed_url(const std::string& path) const { return nginx.url(path); }
};

}  // namespace

TEST_CASE("unlisted http: an N5 container whose folder URL is 404 is detected and read") {
  FilesOnly server;
  const std::string url = server.url("n5/java-style.n5");
  // What a user meets on S3: the container's own URL is no object.
  const test::RunResult head = test::run_python(
      "import sys, urllib.request, urllib.error\n"
      "try: urllib.request.urlopen(urllib.request.Request(sys.argv[1], method='HEAD'))\n"
      "except urllib.error.HTTPError as e: print(e.code)\n",
      test::quote(url));
  CHECK(head.output == "404\n");
  const std::string local = (test::fixtures() / "n5/java-style.n5").string();
  Store want = Store::open(local, stowage::Mode::read, "n5");
  for (Store got : {Store::open(url), Store::open(url, stowage::Mode::read, "n5")}) {
    CHECK(got.format() == "n5");
    CHECK(got.describe_json("") == want.describe_json(""));
    test::check_same_arrays(got, want, {"gzip/int32_2d", "zstd/uint32_2d"});
  }
}

TEST_CASE("unlisted http: Zarr v2 and v3 stores whose folder URL is 404 are detected and read") {
  FilesOnly server;
  for (const char* name : {"v2_uint16_blosc_slash", "v3_uint16_raw", "v3_int32_zstd_sharded"}) {
    CAPTURE(name);
    const json expected =
        test::read_json(test::fixtures() / "zarr" / (std::string(name) + ".expected.json"));
    const std::string bin =
        test::read_file(test::fixtures() / "zarr" / expected["expected_bin"].get<std::string>());
    Store got = Store::open(server.url("zarr/" + std::string(name) + ".zarr"));
    CHECK(got.format() == "zarr");
    const std::string node = expected.value("array", "");
    stowage::Array a = got.array(node);
    CHECK(json(a.shape()) == expected["shape"]);
    CHECK(test::read_whole(a) == bin);
  }
}

TEST_CASE("unlisted http: a missing container is still 'no such file'") {
  FilesOnly server;
  const std::string url = server.url("n5/no-such.n5");
  test::Failure f = test::failure_of([&] { Store::open(url); });
  CHECK(f.message.find(url + ": no such file or directory") != std::string::npos);
}

TEST_CASE(
    "unlisted http: a Zarr v2 array in a folder not named *.zarr, under a listing hiding dotfiles") {
  FilesOnly server;
  const std::string url = server.listed_url("zarr/v2_uint16_blosc_slash.zarr/data");
  // nginx's JSON autoindex leaves .zarray out: only the chunk folders show.
  const test::RunResult listing = test::run_python(
      "import sys, urllib.request\nprint(urllib.request.urlopen(sys.argv[1]).read().decode())\n",
      test::quote(url + "/"));
  CHECK(listing.output.find("\"0\"") != std::string::npos);
  CHECK(listing.output.find(".zarray") == std::string::npos);
  const json expected =
      test::read_json(test::fixtures() / "zarr/v2_uint16_blosc_slash.expected.json");
  Store got = Store::open(url);
  CHECK(got.format() == "zarr");
  stowage::Array a = got.array("");
  CHECK(json(a.shape()) == expected["shape"]);
  CHECK(test::read_whole(a) ==
        test::read_file(test::fixtures() / "zarr/v2_uint16_blosc_slash.expected.bin"));
}

TEST_CASE("unlisted http: a container root whose tree its metadata does not name says so") {
  FilesOnly server;
  const std::string want =
      ": the server gives no directory listing, and N5 metadata here does not name the nodes; "
      "open a node by its own URL, or serve a listing (nginx autoindex_format json)";
  const std::string url = server.url("n5/java-style.n5");
  test::Failure f = test::failure_of([&] { Store::open(url).list(""); });
  CHECK_MESSAGE(f.message.find(url + want) != std::string::npos, f.message);
  const test::RunResult info =
      test::run(test::tool("stowage-info").string() + " " + test::quote(url));
  CHECK(info.status != 0);
  CHECK_MESSAGE(info.output.find(url + want) != std::string::npos, info.output);
  // A node opened by its own URL reads.
  Store node = Store::open(url + "/gzip/int32_2d");
  CHECK(node.format() == "n5");
  CHECK(test::read_whole(node.array("")) ==
        test::read_whole(
            Store::open((test::fixtures() / "n5/java-style.n5").string()).array("gzip/int32_2d")));
}

// A consolidated Zarr v2 store (zarr-python's consolidate_metadata): its
// .zmetadata names every node, so its root is known with no listing, and
// stowage-info and stowage-convert work on it.
TEST_CASE("unlisted http: a consolidated Zarr v2 root lists its nodes from .zmetadata") {
  FilesOnly server;
  const fs::path made = server.nginx.root() / "files" / "made.zarr";
  const test::RunResult peer = test::run_python(
      "import sys, numpy as np, zarr\n"
      "root = zarr.open_group(sys.argv[1], mode='w')\n"
      "root.create_dataset('a', data=np.arange(60, dtype='<i4').reshape(6, 10), chunks=(4, 4))\n"
      "root.create_group('sub').create_dataset('b', data=np.arange(7, dtype='<f8') / 2, "
      "chunks=(3,))\n"
      "zarr.consolidate_metadata(sys.argv[1])\n",
      test::quote(made.string()));
  REQUIRE_MESSAGE(peer.status == 0, peer.output);
  const std::string url = server.url("made.zarr");
  Store got = Store::open(url);
  CHECK(got.format() == "zarr");
  CHECK(got.list("") == std::vector<std::string>{"a", "sub"});
  CHECK(got.list("sub") == std::vector<std::string>{"b"});
  std::string a = test::read_whole(got.array("a")), b = test::read_whole(got.array("sub/b"));
  REQUIRE(a.size() == 60 * 4);
  REQUIRE(b.size() == 7 * 8);
  for (int32_t i = 0; i < 60; ++i) CHECK(reinterpret_cast<const int32_t*>(a.data())[i] == i);
  for (int i = 0; i < 7; ++i) CHECK(reinterpret_cast<const double*>(b.data())[i] == i / 2.0);
  const test::RunResult info =
      test::run(test::tool("stowage-info").string() + " " + test::quote(url));
  CHECK_MESSAGE(info.status == 0, info.output);
  CHECK(info.output.find("sub/b") != std::string::npos);
  test::TempDir tmp;
  const std::string out = (tmp.path() / "copy.n5").string();
  const test::RunResult convert = test::run(test::tool("stowage-convert").string() + " --quiet " +
                                            test::quote(url) + " " + test::quote(out));
  REQUIRE_MESSAGE(convert.status == 0, convert.output);
  CHECK(test::read_whole(Store::open(out).array("sub/b")) == b);
  CHECK(test::read_whole(Store::open(out).array("a")) == a);
}
