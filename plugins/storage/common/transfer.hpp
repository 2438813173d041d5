// What the curl-based storage backends (http, s3) decide the same way about
// a transfer: libcurl's callbacks that fill a Reply and a Body
// (answer.hpp), which failures are worth another attempt, and whether a body
// came back whole. Moved here from the http backend so that s3 retries,
// detects truncation and reads ranges exactly as it does.
#ifndef STOWAGE_STORAGE_COMMON_TRANSFER_HPP
#define STOWAGE_STORAGE_COMMON_TRANSFER_HPP

#include <curl/curl.h>
#include <strings.h>

#include <stowage/storage.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <memory>
#include <vector>
#include <thread>

#include "answer.hpp"

namespace stowage_curl {

// A body read into `bytes` as the view read() lends: the vector is its owner.
inline stowage_view owned_view(std::unique_ptr<std::vector<uint8_t>> bytes) {
  stowage_view v{};
  v.data = bytes->data();
  v.size = bytes->size();
  v.owner = bytes.release();
  v.release = [](void* owner) { delete static_cast<std::vector<uint8_t>*>(owner); };
  return v;
}

// libcurl's write callback: the body, to where Body puts it.
struct CurlSink {
  CURL* handle;
  Body* body;
};
inline size_t write_body(char* data, size_t one, size_t n, void* ctx) {
  CurlSink& sink = *static_cast<CurlSink*>(ctx);
  Body& b = *sink.body;
  n *= one;
  if (!b.started) {
    long status = 0;
    curl_easy_getinfo(sink.handle, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t length = -1;
    if (curl_easy_getinfo(sink.handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) != CURLE_OK)
      length = -1;
    b.start(status, length);
  }
  return b.take(data, n) ? n : 0;  // 0 stops the transfer (CURLE_WRITE_ERROR)
}

// The value of `line` if it is the header `name` ("etag:"), else false.
inline bool header_value(std::string_view line, std::string_view name, std::string* value) {
  if (line.size() <= name.size() || strncasecmp(line.data(), name.data(), name.size()) != 0)
    return false;
  std::string_view v = line.substr(name.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  *value = std::string(v);
  return true;
}

inline size_t read_header(char* data, size_t one, size_t n, void* ctx) {
  Reply& r = *static_cast<Reply*>(ctx);
  n *= one;
  std::string_view line(data, n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect or a 100)
    r.status_line = std::string(line);
    r.content_range.clear();
    r.etag.clear();
    r.bucket_region.clear();
  } else if (!header_value(line, "content-range:", &r.content_range) &&
             !header_value(line, "etag:", &r.etag)) {
    header_value(line, "x-amz-bucket-region:", &r.bucket_region);
  }
  return n;
}

// "bytes a-b/total" (total may be '*'); false if not that.
inline bool parse_content_range(const std::string& s, uint64_t* first, uint64_t* last) {
  unsigned long long a = 0, b = 0;
  if (std::sscanf(s.c_str(), "bytes %llu-%llu/", &a, &b) != 2 || b < a) return false;
  *first = a;
  *last = b;
  return true;
}

// (A body cut short, CURLE_PARTIAL_FILE, is retried through is_truncated.)
inline bool transient_curl_error(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

inline bool transient_status(long s) { return s >= 500 || s == 408 || s == 429; }

// "404 Not Found" from the status line, or just the number.
inline std::string status_text(const Reply& r) {
  size_t sp = r.status_line.find(' ');
  if (sp != std::string::npos) return r.status_line.substr(sp + 1);
  return std::to_string(r.status);
}

// The whole file's size from an answer to a GET: the total of a 206's or a
// 416's Content-Range ("bytes 0-99/1000", "bytes */1000"), the length of a
// 200's body. False if it tells none (a total of '*').
inline bool total_size(const Reply& r, uint64_t* size) {
  if (r.status == 200 && r.content_length >= 0) {
    *size = static_cast<uint64_t>(r.content_length);
    return true;
  }
  if (r.status != 206 && r.status != 416) return false;
  size_t slash = r.content_range.rfind('/');
  if (slash == std::string::npos || slash + 1 == r.content_range.size()) return false;
  const char* digits = r.content_range.c_str() + slash + 1;
  if (*digits < '0' || *digits > '9') return false;
  char* end = nullptr;
  unsigned long long total = std::strtoull(digits, &end, 10);
  if (*end != '\0') return false;
  *size = total;
  return true;
}

// "a-b" for curl's CURLOPT_RANGE, or "" for the whole file.
inline std::string range_header(const Body& b) {
  if (b.offset == 0 && b.limit == UINT64_MAX) return "";
  if (b.limit == UINT64_MAX || b.offset + b.limit < b.offset) return std::to_string(b.offset) + "-";
  return std::to_string(b.offset) + "-" + std::to_string(b.offset + b.limit - 1);
}

// A range answered with fewer bytes than asked though the file goes on,
// its headers agreeing with its body ("bytes 0-499/1000" for 0-999): the
// rest would read as the file's end.
inline bool is_short_range(const Body& b, const Reply& r, std::string* why) {
  uint64_t first = 0, last = 0, total = 0;
  if (!parse_content_range(r.content_range, &first, &last) || !total_size(r, &total)) return false;
  const uint64_t asked_end = b.offset + std::min(b.limit, UINT64_MAX - b.offset);
  if (last + 1 >= std::min(total, asked_end)) return false;
  if (why)
    *why = "the server sent bytes " + std::to_string(first) + "-" + std::to_string(last) +
           " of the " + std::to_string(std::min(total, asked_end) - b.offset) +
           " asked from byte " + std::to_string(b.offset) + " (the file has " +
           std::to_string(total) + ")";
  return true;
}

// Did the body stop before what the server announced? `why` receives how.
inline bool is_truncated(const Body& b, const Reply& r, std::string* why) {
  if (r.code == CURLE_PARTIAL_FILE) {
    if (why)
      *why = "the connection closed before the body ended (" + std::to_string(b.received) + " of " +
             std::to_string(r.content_length) + " bytes)";
    return true;
  }
  if (r.code != CURLE_OK || b.full) return false;
  uint64_t expected = 0;
  if (r.status == 206) {
    uint64_t first = 0, last = 0;
    if (!parse_content_range(r.content_range, &first, &last)) return false;  // checked in finish()
    expected = last - first + 1;
  } else if (r.status == 200 && r.content_length >= 0) {
    expected = static_cast<uint64_t>(r.content_length);
  } else {
    return false;
  }
  if (b.received != expected) {
    if (why)
      *why = "got " + std::to_string(b.received) + " of " + std::to_string(expected) + " bytes";
    return true;
  }
  return r.status == 206 && is_short_range(b, r, why);
}

// Waits before attempt `attempt + 1`: delay_ms, then twice that, and so on.
inline void back_off(int64_t delay_ms, int64_t attempt) {
  std::this_thread::sleep_for(
      std::chrono::milliseconds(delay_ms << std::min<int64_t>(attempt, 16)));
}

}  // namespace stowage_curl

#endif  // STOWAGE_STORAGE_COMMON_TRANSFER_HPP
