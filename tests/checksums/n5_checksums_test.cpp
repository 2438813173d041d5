// The checksum codecs as N5 compressions, through the real registry and the
// N5 plugin: datasets written and read back, attributes.json naming the
// codec, and a damaged chunk file read as CORRUPT naming that chunk.
#include "n5_helpers.hpp"

using namespace n5test;

TEST_CASE("N5 datasets compressed with each checksum codec round-trip; damage names the chunk") {
  const std::vector<uint64_t> shape = {9, 14}, chunks = {4, 5};
  for (const json& compression : test::codecs_built(json::array(
           {json{{"type", "crc32c"}}, json{{"type", "adler32"}},
            json{{"type", "crc32"}, {"location", "end"}}, json{{"type", "fletcher32"}}}))) {
    const std::string id = compression["type"];
    CAPTURE(id);
    test::TempDir tmp;
    const fs::path path = tmp / "sums.n5";
    const std::string data = sample_bytes(9 * 14 * 4, 5);
    {
      stowage::Store store = open_n5(path, stowage::Mode::create);
      store.create("volume", array_desc("uint32", shape, chunks, compression));
      store.array("volume").write({0, 0}, shape, data.data());
      store.close();
    }
    json written = test::read_json(path / "volume" / "attributes.json")["compression"];
    CHECK(written["type"] == id);
    if (id == "crc32") CHECK(written["location"] == "end");
    CHECK(read_bytes(open_n5(path).array("volume")) == data);

    // One payload byte of chunk (1, 2) changed: N5 order puts it at volume/2/1.
    const fs::path chunk = path / "volume" / "2" / "1";
    std::string bytes = test::read_file(chunk);
    bytes[bytes.size() / 2] ^= 0x10;
    test::write_file(chunk, bytes);
    const std::string message =
        TEST_REQUIRE_ERROR(read_bytes(open_n5(path).array("volume")), stowage::ErrorCode::corrupt);
    CHECK_MESSAGE(message.find(chunk.string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find("checksum mismatch") != std::string::npos, message);
    CHECK_MESSAGE(message.find(id) != std::string::npos, message);
  }
}
