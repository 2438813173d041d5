// The little XML the s3 backend reads and writes: S3's answers are flat
// (ListBucketResult, Error, InitiateMultipartUploadResult, DeleteResult),
// so elements are found by name, not parsed into a tree; a document that is
// not what S3 sends yields nothing rather than a guess.
#ifndef STOWAGE_S3_XML_HPP
#define STOWAGE_S3_XML_HPP

#include <string>
#include <string_view>
#include <vector>

namespace stowage_s3 {

// The contents of every <tag>...</tag> in `xml`, in order (not nested ones
// of the same name, which S3 never sends).
std::vector<std::string_view> xml_elements(std::string_view xml, std::string_view tag);
// The first such element's text, its entities decoded; "" if none.
std::string xml_text(std::string_view xml, std::string_view tag);
// &amp; &lt; &gt; &quot; &apos; &#N; &#xN; decoded.
std::string xml_unescape(std::string_view s);
// & < > " ' as entities, for text we put in a request body.
std::string xml_escape(std::string_view s);

}  // namespace stowage_s3

#endif  // STOWAGE_S3_XML_HPP
