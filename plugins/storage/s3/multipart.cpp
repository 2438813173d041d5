#include "multipart.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "xml.hpp"

namespace stowage_s3 {
namespace {

std::string start_upload(Client& client, const std::string& shown, const std::string& bucket,
                         const std::string& key) {
  std::vector<uint8_t> text;
  stowage_curl::Body body;
  body.limit = UINT64_MAX;
  body.grow = &text;
  Request r;
  r.method = "POST";
  r.bucket = bucket;
  r.key = key;
  r.query = {{"uploads", ""}};
  r.body = &body;
  r.shown = shown;
  const Answer a = client.send(r);
  if (!succeeded(a)) fail_answer(shown, a);
  std::string id = xml_text(
      std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), "UploadId");
  if (id.empty())
    stowage::sdk::fail(STOWAGE_IO,
                       shown + ": the server began a multipart upload without an UploadId");
  return id;
}

// The part's ETag, which completing the upload names.
std::string put_part(Client& client, const std::string& shown, const std::string& bucket,
                     const std::string& key, const std::string& id, uint64_t number,
                     const uint8_t* data, uint64_t size) {
  Request r;
  r.method = "PUT";
  r.bucket = bucket;
  r.key = key;
  r.query = {{"partNumber", std::to_string(number)}, {"uploadId", id}};
  r.upload = data;
  r.upload_size = size;
  r.shown = shown;
  const Answer a = client.send(r);
  if (!succeeded(a)) fail_answer(shown + " (part " + std::to_string(number) + ")", a);
  return a.reply.etag;
}

void complete(Client& client, const std::string& shown, const std::string& bucket,
              const std::string& key, const std::string& id,
              const std::vector<std::string>& etags) {
  std::string xml = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < etags.size(); ++i)
    xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
           xml_escape(etags[i]) + "</ETag></Part>";
  xml += "</CompleteMultipartUpload>";
  std::vector<uint8_t> text;
  stowage_curl::Body body;
  body.limit = UINT64_MAX;
  body.grow = &text;
  Request r;
  r.method = "POST";
  r.bucket = bucket;
  r.key = key;
  r.query = {{"uploadId", id}};
  r.upload = reinterpret_cast<const uint8_t*>(xml.data());
  r.upload_size = xml.size();
  r.body = &body;
  r.shown = shown;
  const Answer a = client.send(r);
  if (!succeeded(a)) fail_answer(shown, a);
}

// Best effort: the failure that brought us here is the one to report.
void abort_upload(Client& client, const std::string& shown, const std::string& bucket,
                  const std::string& key, const std::string& id) noexcept {
  try {
    Request r;
    r.method = "DELETE";
    r.bucket = bucket;
    r.key = key;
    r.query = {{"uploadId", id}};
    r.shown = shown;
    client.send(r);
  } catch (...) {
  }
}

}  // namespace

void put_multipart(Client& client, const std::string& shown, const std::string& bucket,
                   const std::string& key, const uint8_t* data, uint64_t size, uint64_t part_size,
                   unsigned threads) {
  const uint64_t parts = (size + part_size - 1) / part_size;
  const std::string id = start_upload(client, shown, bucket, key);
  std::vector<std::string> etags(parts);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (uint64_t i; !failed && (i = next++) < parts;) {
      try {
        const uint64_t at = i * part_size;
        etags[i] = put_part(client, shown, bucket, key, id, i + 1, data + at,
                            std::min(part_size, size - at));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<uint64_t>(threads, parts); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  try {
    if (error) std::rethrow_exception(error);
    complete(client, shown, bucket, key, id, etags);
  } catch (...) {
    abort_upload(client, shown, bucket, key, id);
    throw;
  }
}

}  // namespace stowage_s3
