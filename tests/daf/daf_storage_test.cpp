// The Daf plugin on the storage layer: it writes and reads a repository in
// memory (mem://) equal to one on disk, and does no file-system I/O of its
// own (a grep of its sources). Reading over HTTP is in the http suite
// (tests/http/daf_over_http_test.cpp), which has the nginx it needs.
#include "daf_test_util.hpp"
#include "storage_checks.hpp"

#include <doctest/doctest.h>

namespace {

using stowage::json;
using namespace daf_test;

// A repository copied from a fixture into `location` through the plugin
// (every kind of write: axes, scalars, dense, sparse, strings), then read.
json copy_fixture_to(const std::string& fixture, const std::string& location,
                     stowage::Registry& registry) {
  stowage::Store in = stowage::Store::open((fixtures_dir() / fixture).string(), stowage::Mode::read,
                                           "daf", json::object(), registry);
  {
    stowage::Store out = stowage::Store::open(location, stowage::Mode::truncate, "daf",
                                              {{"version", {1, 1}}}, registry);
    for (const std::string& axis : in.list("axes"))
      out.write_strings("axes/" + axis, in.read_strings("axes/" + axis));
    json attributes = in.describe_json("")["attributes"];
    out.set_attributes("", attributes);
    auto copy_property = [&](const std::string& node) {
      stowage::NodeInfo info = in.describe(node);
      json d = in.describe_json(node);
      if (info.kind == stowage::NodeKind::strings)
        return out.write_strings(node, in.read_strings(node));
      std::vector<uint8_t> bytes(info.element_count() * stowage::dtype_size(info.dtype));
      if (info.kind == stowage::NodeKind::sparse) {
        if (!bytes.empty())
          in.sparse(node).read_dense(0, 0, info.shape[0], info.shape[1], bytes.data());
        d = {{"kind", "array"},
             {"dtype", d["dtype"]},
             {"shape", d["shape"]},
             {"storage", {{"daf_storage", "sparse"}}}};
      } else if (!bytes.empty()) {
        in.array(node).read(std::vector<uint64_t>(info.shape.size(), 0), info.shape, bytes.data());
      }
      out.create(node, {{"kind", "array"},
                        {"dtype", d["dtype"]},
                        {"shape", d["shape"]},
                        {"storage", d["storage"]}});
      if (!bytes.empty())
        out.array(node).write(std::vector<uint64_t>(info.shape.size(), 0), info.shape,
                              bytes.data());
    };
    for (const std::string& axis : in.list("vectors"))
      for (const std::string& name : in.list("vectors/" + axis))
        copy_property("vectors/" + axis + "/" + name);
    for (const std::string& rows : in.list("matrices"))
      for (const std::string& cols : in.list("matrices/" + rows))
        for (const std::string& name : in.list("matrices/" + rows + "/" + cols))
          copy_property("matrices/" + rows + "/" + cols + "/" + name);
    out.close();
  }
  return snapshot(
      stowage::Store::open(location, stowage::Mode::read, "daf", json::object(), registry));
}

TEST_CASE(
    "daf in memory (mem://): a repository written and read through the memory storage equals one on disk") {
  test::TempDir tmp;
  stowage::Registry& registry =
      stowage::Registry::global();  // its memory backend lives as long as the process
  for (const char* fixture : {"julia_v10_small", "gen_v11_types"}) {
    CAPTURE(fixture);
    json on_disk =
        copy_fixture_to(fixture, (tmp / (std::string(fixture) + ".daf")).string(), registry);
    json in_memory =
        copy_fixture_to(fixture, std::string("mem://daf-test/") + fixture + ".daf", registry);
    CHECK(leaves(on_disk) > 10);
    CHECK(in_memory == on_disk);
  }
}

TEST_CASE("daf does no file-system I/O of its own: everything goes through the storage layer") {
  CHECK(test::check_no_direct_file_io(test::source_root() / "plugins" / "formats" / "daf") >= 10);
}

}  // namespace
