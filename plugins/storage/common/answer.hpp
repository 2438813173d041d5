// What one HTTP request brings back, whichever transport carried it
// (libcurl's transfer in http_storage.cpp, or a connection of the backend's own in
// direct_get.cpp): the answer's head (Reply) and where its body goes (Body).
// Both transports fill them the same way, so retries, truncation checks and
// errors are decided once, in http_storage.cpp, for both.
#ifndef STOWAGE_STORAGE_COMMON_ANSWER_HPP
#define STOWAGE_STORAGE_COMMON_ANSWER_HPP

#include <curl/curl.h>
#include <stowage/plugin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace stowage_curl {

// Where a response body goes: bytes [offset, offset + limit) of the file,
// into a caller's buffers one after the other (read_into, a scattered read:
// a chunk's header into one, its payload straight into the array) or a
// growing one (read). A server that answers a ranged GET with 200 sends the
// whole file: the bytes before `offset` are skipped, and the transfer stops
// once `limit` bytes are kept.
struct Body {
  uint64_t offset = 0;
  uint64_t limit = 0;
  const stowage_buffer* parts = nullptr;  // read_into: `count` buffers, limit bytes in all
  size_t count = 0;
  std::vector<uint8_t>* grow = nullptr;
  // The body of an answer that is not the file (an error page), its first
  // 64 KiB: S3 says why in it (<Code>, <Message>). Null: dropped.
  std::string* error_page = nullptr;
  // per attempt
  bool started = false;
  bool keep = false;      // a 200/206 answer: its body is the file
  uint64_t skip = 0;      // bytes still to skip (a 200 answer to a ranged GET)
  uint64_t received = 0;  // bytes the server sent
  uint64_t kept = 0;
  size_t part = 0;         // read_into: the buffer the next byte goes to...
  uint64_t part_at = 0;    // ...and where in it
  bool full = false;       // stopped on purpose: limit bytes kept
  bool no_memory = false;  // a growing buffer could not grow (thrown after the transfer returns)

  void restart() {
    started = keep = full = no_memory = false;
    skip = received = kept = part_at = 0;
    part = 0;
    if (grow) grow->clear();
    if (error_page) error_page->clear();
  }

  // The answer's status (and its Content-Length, or -1) is known.
  void start(long status, int64_t content_length) {
    started = true;
    keep = status == 200 || status == 206;
    skip = status == 200 ? offset : 0;
    if (keep && grow && content_length > 0 && static_cast<uint64_t>(content_length) > skip) {
      try {  // one allocation for a whole file, not log2(size) of them
        grow->reserve(static_cast<size_t>(
            std::min<uint64_t>(static_cast<uint64_t>(content_length) - skip, limit)));
      } catch (const std::exception&) {  // a bogus length: grow as the bytes come
      }
    }
  }

  // n more bytes of the body, copied where they go. False when the transfer
  // must stop: limit bytes are kept and more come (`full`), or a growing
  // buffer cannot grow (`no_memory`). Nothing is thrown (curl calls this).
  bool take(const char* data, size_t n) {
    received += n;
    if (!keep) {  // an error page
      if (error_page && error_page->size() < (64u << 10)) error_page->append(data, n);
      return true;
    }
    size_t at = 0;
    if (skip) {
      uint64_t s = std::min<uint64_t>(skip, n);
      skip -= s;
      at = static_cast<size_t>(s);
    }
    uint64_t count_kept = std::min<uint64_t>(n - at, limit - kept);
    if (count_kept) {
      if (parts) {
        scatter(data + at, count_kept);
      } else {
        try {
          grow->insert(grow->end(), data + at, data + at + count_kept);
        } catch (const std::bad_alloc&) {
          no_memory = true;
          return false;
        }
      }
      kept += count_kept;
    }
    if (kept == limit && at + count_kept < n) {
      full = true;  // the rest of a whole-file answer is not wanted
      return false;
    }
    return true;
  }

  // Where the next bytes of the body can be received in place, without a
  // copy: the rest of the caller's current buffer. {nullptr, 0} when they
  // must go through take() (bytes to skip, a growing buffer, an error page,
  // or nothing more to keep).
  std::pair<uint8_t*, uint64_t> place() {
    if (!keep || skip || !parts || kept == limit) return {nullptr, 0};
    while (part < count && part_at == parts[part].size) next_part();
    if (part == count) return {nullptr, 0};
    return {static_cast<uint8_t*>(parts[part].data) + part_at,
            std::min(parts[part].size - part_at, limit - kept)};
  }
  // n bytes were received at place().
  void placed(uint64_t n) {
    received += n;
    kept += n;
    part_at += n;
    if (part_at == parts[part].size) next_part();
  }

 private:
  void next_part() {
    ++part;
    part_at = 0;
  }
  // Copies n bytes on into the caller's buffers (n <= limit - kept).
  void scatter(const char* data, uint64_t n) {
    while (n) {
      const stowage_buffer& p = parts[part];
      uint64_t count_copied = std::min<uint64_t>(n, p.size - part_at);
      std::memcpy(static_cast<uint8_t*>(p.data) + part_at, data, static_cast<size_t>(count_copied));
      data += count_copied;
      n -= count_copied;
      part_at += count_copied;
      if (part_at == p.size) next_part();  // (an empty buffer is passed over here too)
    }
  }
};

// What a response said besides its body.
struct Reply {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string status_line;    // "HTTP/1.1 404 Not Found"
  std::string content_range;  // "bytes 0-99/1000"
  std::string etag;           // the ETag header as sent (quotes kept), "" without one
  std::string bucket_region;  // S3's x-amz-bucket-region (a HEAD of a bucket on AWS)
  int64_t content_length = -1;
  std::string effective_url;  // after redirects
  long os_errno = 0;          // why a connection failed (ECONNREFUSED), where libcurl tells
  char curl_error[CURL_ERROR_SIZE] = {0};
};

}  // namespace stowage_curl

#endif  // STOWAGE_STORAGE_COMMON_ANSWER_HPP
