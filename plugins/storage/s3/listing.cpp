#include "listing.hpp"

#include "errors.hpp"
#include "xml.hpp"

namespace stowage_s3 {
namespace {

// S3's encoding-type=url: percent-encoding, a space as '+'.
std::string key_decoded(std::string_view encoded) {
  std::string s = xml_unescape(encoded);
  for (char& c : s)
    if (c == '+') c = ' ';
  return uri_decode(s);
}

}  // namespace

Listing list_objects(Client& client, const std::string& shown, const std::string& bucket,
                     const std::string& prefix, bool delimited, uint64_t at_most) {
  Listing out;
  std::string token;
  for (;;) {
    std::vector<uint8_t> text;
    stowage_curl::Body body;
    body.limit = UINT64_MAX;
    body.grow = &text;
    Request r;
    r.bucket = bucket;
    r.query = {{"list-type", "2"}, {"encoding-type", "url"}};
    if (!prefix.empty()) r.query.emplace_back("prefix", prefix);
    if (delimited) r.query.emplace_back("delimiter", "/");
    if (at_most)
      r.query.emplace_back("max-keys", std::to_string(std::min<uint64_t>(at_most, 1000)));
    if (!token.empty()) r.query.emplace_back("continuation-token", token);
    r.body = &body;
    r.shown = shown;
    const Answer a = client.send(r);
    if (!succeeded(a)) fail_answer(shown, a);
    const std::string_view xml(reinterpret_cast<const char*>(text.data()), text.size());
    for (std::string_view c : xml_elements(xml, "Contents"))
      out.keys.push_back(
          key_decoded(xml_elements(c, "Key").empty() ? "" : xml_elements(c, "Key")[0]));
    for (std::string_view p : xml_elements(xml, "CommonPrefixes"))
      out.prefixes.push_back(
          key_decoded(xml_elements(p, "Prefix").empty() ? "" : xml_elements(p, "Prefix")[0]));
    token = xml_text(xml, "NextContinuationToken");
    if (at_most && out.keys.size() + out.prefixes.size() >= at_most) break;
    if (xml_text(xml, "IsTruncated") != "true" || token.empty()) break;
  }
  return out;
}

}  // namespace stowage_s3
