// The lz4 codec against real peers: Debian's python3-lz4 and numcodecs
// (zarr-python's framing), and Debian's liblz4-java through a Java program
// of ours (tests/lz4/Lz4BlockPeer.java, compiled at test time).
#include "lz4_common.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace lz4test;

namespace {

// The inputs every peer round trip uses.
std::map<std::string, Bytes> peer_inputs() {
  return {{"empty", {}},
          {"one", {42}},
          {"ramp", ramp_bytes(100000, 1)},
          {"noise", random_bytes(70000, 2)},
          {"mixed", mixed_bytes(300000, 3)},
          {"large", ramp_bytes(5 << 20, 4)}};
}

void write_bytes(const test::fs::path& p, const Bytes& b) { test::write_file(p, text(b)); }
Bytes read_bytes(const test::fs::path& p) { return bytes(test::read_file(p)); }

// Python side: writes what numcodecs and python-lz4 make of each input, and
// decodes (and describes) the LZ4 frames we wrote.
const char* kPythonPeer = R"PY(
import json, os, sys
import lz4.block, lz4.frame, numcodecs
d = sys.argv[1]
def put(name, data):
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)
for name in sorted(os.listdir(d)):
    if name.startswith('in_'):
        key = name[3:-4]
        data = open(os.path.join(d, name), 'rb').read()
        put('py_numcodecs_' + key, numcodecs.LZ4().encode(data))             # zarr-python N5Store
        put('py_numcodecs-acc8_' + key, numcodecs.LZ4(acceleration=8).encode(data))
        put('py_bare_' + key, lz4.block.compress(data, store_size=False))    # z5
        put('py_bare-hc_' + key, lz4.block.compress(data, mode='high_compression',
                                                     compression=9, store_size=False))
        put('py_frame_' + key, lz4.frame.compress(data))                     # rust-n5, liblz4 defaults
        put('py_frame-linked64k_' + key, lz4.frame.compress(
            data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=True,
            content_checksum=True, store_size=True))
        put('py_frame-blocksum-hc_' + key, lz4.frame.compress(
            data, block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False,
            block_checksum=True, compression_level=9))
report = {}
for name in sorted(os.listdir(d)):
    if name.startswith('ours_'):
        frame = open(os.path.join(d, name), 'rb').read()
        info = lz4.frame.get_frame_info(frame)
        put('pydec_' + name[5:], lz4.frame.decompress(frame))
        report[name[5:]] = {k: info[k] for k in
                            ('block_size_id', 'block_linked', 'content_checksum', 'block_checksum', 'content_size')}
print(json.dumps(report))
)PY";

struct FrameVariant {
  std::string name, options;
  bool content_checksum, block_checksum, content_size;
  int block_size_id;
};

const std::vector<FrameVariant> kFrameVariants = {
    {"default", "", true, false, false, 7},
    {"hc", R"(,"level":9,"blockSizeId":4)", true, false, false, 4},
    {"checks",
     R"(,"blockChecksum":true,"contentChecksum":false,"contentSize":true,"blockSizeId":5)", false,
     true, true, 5},
};

// Parses the peer's one JSON line (the last line of its output).
stowage::json last_json_line(const std::string& output) {
  std::string trimmed = output.substr(0, output.find_last_not_of("\n") + 1);
  size_t start = trimmed.rfind('\n');
  stowage::json parsed = stowage::json::parse(
      trimmed.substr(start == std::string::npos ? 0 : start + 1), nullptr, false);
  REQUIRE_MESSAGE(parsed.is_object(), output);
  return parsed;
}

std::string lz4_java_jar() {
  test::RunResult r = test::run("dpkg -L liblz4-java | grep '/lz4-java.jar$' | head -n 1");
  std::string jar = r.output.substr(0, r.output.find('\n'));
  return jar.empty() ? "/usr/share/java/lz4-java.jar" : jar;
}

}  // namespace

TEST_CASE(
    "lz4 peers: python-lz4 and numcodecs encode, we decode; we write frames, python-lz4 decodes") {
  test::TempDir dir;
  auto inputs = peer_inputs();
  for (const auto& [key, data] : inputs) {
    write_bytes(dir / ("in_" + key + ".bin"), data);
    for (const auto& v : kFrameVariants) {
      stowage::Codec c = codec(R"({"type":"lz4","framing":"frame")" + v.options + "}");
      write_bytes(dir / ("ours_" + v.name + "_" + key), c.encode(data.data(), data.size()));
    }
  }
  test::RunResult r = test::run_python(kPythonPeer, test::quote(dir.path().string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  stowage::json report = last_json_line(r.output);

  stowage::Codec sniffing = codec(R"({"type":"lz4"})");
  stowage::Codec frames = codec(R"({"type":"lz4","framing":"frame"})");
  stowage::Codec z5_config = codec(R"({"type":"lz4","blockSize":6})");  // z5 stores its level there
  // Zarr v2's lz4: numcodecs' framing, written byte for byte as numcodecs writes it.
  stowage::Codec numcodecs = codec(R"({"type":"lz4","framing":"numcodecs"})");
  stowage::Codec numcodecs8 = codec(R"({"type":"lz4","framing":"numcodecs","acceleration":8})");
  for (const auto& [key, data] : inputs) {
    CAPTURE(key);
    for (const char* tag : {"numcodecs", "numcodecs-acc8", "bare", "bare-hc", "frame",
                            "frame-linked64k", "frame-blocksum-hc"}) {
      CAPTURE(tag);
      Bytes theirs = read_bytes(dir / ("py_" + std::string(tag) + "_" + key));
      CHECK(sniffing.decode(theirs.data(), theirs.size(), data.size()) == data);
      if (std::string(tag).rfind("bare", 0) == 0)
        CHECK(z5_config.decode(theirs.data(), theirs.size(), data.size()) == data);
      if (std::string(tag).rfind("frame", 0) == 0)
        CHECK(frames.decode(theirs.data(), theirs.size(), data.size()) == data);
      if (std::string(tag).rfind("numcodecs", 0) == 0)
        CHECK(numcodecs.decode(theirs.data(), theirs.size(), data.size()) == data);
    }
    CHECK(numcodecs.encode(data.data(), data.size()) == read_bytes(dir / ("py_numcodecs_" + key)));
    CHECK(numcodecs8.encode(data.data(), data.size()) ==
          read_bytes(dir / ("py_numcodecs-acc8_" + key)));
    for (const auto& v : kFrameVariants) {
      CAPTURE(v.name);
      std::string name = v.name + "_" + key;
      CHECK(read_bytes(dir / ("pydec_" + name)) == data);
      const stowage::json& info = report.at(name);
      CHECK(info["content_checksum"].get<bool>() == v.content_checksum);
      CHECK(info["block_checksum"].get<bool>() == v.block_checksum);
      CHECK(info["block_linked"].get<bool>() == false);
      CHECK(info["content_size"].get<uint64_t>() == (v.content_size ? data.size() : 0));
      // liblz4 lowers the block size to the smallest that holds the input.
      CHECK(info["block_size_id"].get<int>() <= v.block_size_id);
    }
  }
}

TEST_CASE("lz4 peers: lz4-java's LZ4BlockInputStream/OutputStream and ours agree byte for byte") {
  test::TempDir dir;
  std::string jar = lz4_java_jar();
  REQUIRE_MESSAGE(test::fs::exists(jar), "liblz4-java is not installed: " << jar);
  test::fs::path source = test::source_root() / "tests/lz4/Lz4BlockPeer.java";
  test::RunResult compiled =
      test::run("javac -cp " + test::quote(jar) + " -d " + test::quote(dir.path().string()) + " " +
                test::quote(source.string()));
  REQUIRE_MESSAGE(compiled.status == 0, compiled.output);

  const std::vector<int> block_sizes = {64, 1024, 65536, 100000};
  auto inputs = peer_inputs();
  std::string jobs;
  for (const auto& [key, data] : inputs) {
    write_bytes(dir / ("in_" + key), data);
    for (int bs : block_sizes) {
      std::string tag = key + "_" + std::to_string(bs);
      stowage::Codec c = codec(R"({"type":"lz4","blockSize":)" + std::to_string(bs) + "}");
      write_bytes(dir / ("ours_" + tag), c.encode(data.data(), data.size()));
      jobs += "encode " + std::to_string(bs) + " " + (dir / ("in_" + key)).string() + " " +
              (dir / ("java_" + tag)).string() + "\n";
      jobs += "decode " + (dir / ("ours_" + tag)).string() + " " +
              (dir / ("javadec_" + tag)).string() + "\n";
    }
  }
  test::write_file(dir / "jobs.txt", jobs);
  test::RunResult r = test::run("java -cp " + test::quote(dir.path().string() + ":" + jar) +
                                " Lz4BlockPeer " + test::quote((dir / "jobs.txt").string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  REQUIRE_MESSAGE(r.output.find("ok") != std::string::npos, r.output);
  MESSAGE("peer: " << r.output.substr(0, r.output.find('\n')));

  for (const auto& [key, data] : inputs) {
    for (int bs : block_sizes) {
      std::string tag = key + "_" + std::to_string(bs);
      CAPTURE(tag);
      stowage::Codec c = codec(R"({"type":"lz4","blockSize":)" + std::to_string(bs) + "}");
      Bytes java = read_bytes(dir / ("java_" + tag));
      CHECK(read_bytes(dir / ("javadec_" + tag)) == data);             // Java reads ours
      CHECK(c.decode(java.data(), java.size(), data.size()) == data);  // we read Java's
      CHECK(read_bytes(dir / ("ours_" + tag)) == java);                // same bytes
    }
  }
}
