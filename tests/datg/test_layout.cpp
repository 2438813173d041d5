// The pure layout functions: modified UTF-8 both ways, the footer, the
// rows-per-block rule, in the static library the plugin links.
#include "datg_layout.hpp"

#include <doctest/doctest.h>

#include <stowage/plugin.hpp>

using namespace datg;

TEST_CASE("modified UTF-8: NUL as C0 80, supplementary characters as surrogate pairs") {
  const std::string utf8 = std::string("a") + '\0' + "\xC3\xA9\xE6\xB8\xAC\xF0\x9F\xA7\xAC";
  const std::string java = utf8_to_modified_utf8(utf8, "t");
  CHECK(java == std::string("a\xC0\x80\xC3\xA9\xE6\xB8\xAC\xED\xA0\xBE\xED\xB7\xAC"));
  CHECK(modified_utf8_to_utf8(java, "t") == utf8);
  CHECK(modified_utf8_to_utf8(std::string("x\0y", 3), "t") == std::string("x\0y", 3));  // raw NUL
  CHECK_THROWS_AS(utf8_to_modified_utf8("\xED\xA0\x80", "t"),
                  stowage::sdk::Error);                                          // CESU in UTF-8
  CHECK_THROWS_AS(utf8_to_modified_utf8("\xC0\xAF", "t"), stowage::sdk::Error);  // overlong
  CHECK_THROWS_AS(modified_utf8_to_utf8("\xE6\xB8", "t"), stowage::sdk::Error);  // cut off
  CHECK(is_valid_utf8("\xF0\x9F\xA7\xAC"));
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // beyond U+10FFFF
}

TEST_CASE("footer: encode then parse, and the default rows per block") {
  Footer f;
  f.created_seconds = 1795302929;
  f.rows = 250;
  f.cols = 3;
  f.rows_per_block = 34;
  f.index_offset = 3000;
  f.metadata_offset = 3100;
  const auto bytes = encode_footer(f);
  CHECK(bytes[39] == 1);
  CHECK(std::string(bytes.begin() + 40, bytes.end()) == "UMCG");
  const Footer g = parse_footer(bytes.data(), 3100 + 6 + 44, "x.datg");
  CHECK(g.rows == 250);
  CHECK(g.rows_per_block == 34);
  CHECK(g.index_offset == 3000);
  CHECK(block_count(250, 34) == 8);
  CHECK(rows_in_block(g, 7) == 12);
  CHECK(default_rows_per_block(1) == 100);
  CHECK(default_rows_per_block(3) == 34);
  CHECK(default_rows_per_block(7) == 15);
  CHECK(default_rows_per_block(99) == 2);
  CHECK(default_rows_per_block(100) == 1);
  const Metadata m{"", "", ""};
  CHECK(encode_metadata(m) == std::string(6, '\0'));
  CHECK(parse_metadata(std::string(6, '\0'), "x").dataset_name.empty());
}
