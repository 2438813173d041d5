// GETs of plain-HTTP files on connections of the backend's own, their bodies
// received straight into the caller's buffers.
//
// libcurl's transfer hands a body over from its own receive buffer, so every
// byte is copied once more than a local read copies it; libcurl has no way to
// receive into the caller's memory. Here libcurl only opens the connection
// (CURLOPT_CONNECT_ONLY: its resolver, connect timeout and error texts),
// Boost.Beast writes the request and parses the answer's head, and the body
// is received with curl_easy_recv, which is a plain recv() into the buffer it
// is given. A whole N5 read over loopback: bench/http/README.md.
//
// Only what a static file server answers is taken here: a body of a known
// length (Content-Length). A redirect, a body of unknown length (chunked, or
// ended by closing) or a head Beast cannot parse is `declined`: the caller
// sends the request again through libcurl's transfer, which knows them all.
// Connections are kept alive, one per thread at a time, and a request sent on
// one the server has closed meanwhile goes again on a new one.
#ifndef STOWAGE_STORAGE_COMMON_DIRECT_GET_HPP
#define STOWAGE_STORAGE_COMMON_DIRECT_GET_HPP

#include "answer.hpp"

#include <curl/curl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace stowage_curl {

// A URL split for a request of our own: plain http, no credentials.
struct Origin {
  std::string connect_url;  // "http://host:port/": what libcurl connects to
  std::string host_header;  // "host" or "host:port", as the URL has it
  std::string target;       // "/path?query"
};
// False if `url` is not one this transport carries.
bool origin_of(const std::string& url, Origin* origin);

class Deadline;

class DirectGet {
 public:
  struct Timeouts {
    int64_t whole_ms = 0;  // the whole request; 0: none
    int64_t connect_ms = 0;
  };
  explicit DirectGet(Timeouts t);
  ~DirectGet();
  DirectGet(const DirectGet&) = delete;
  DirectGet& operator=(const DirectGet&) = delete;

  enum class Outcome { answered, declined };
  // One attempt of GET `o` with `range` ("a-b", "a-" or "" for the whole
  // file) into `b`, filling `r` as libcurl's transfer would: a failure is
  // r.code (and r.curl_error), an answer is r.status and its headers.
  // `declined`: nothing was decided, send it through libcurl. `headers` go
  // with the request besides Host and Range (s3: its signature).
  Outcome get(const Origin& o, const std::string& range, Body& b, Reply& r,
              const std::vector<std::pair<std::string, std::string>>& headers = {});

 private:
  struct Connection;
  // How an exchange on a connection ended, and so what becomes of it.
  enum class Exchange {
    reusable,  // answered, and ready for the next request
    closed,    // answered or failed (r says which); the connection is closed
    stale,     // nothing came back on a kept-alive connection: the server had closed it
    declined,  // an answer left to libcurl
  };
  std::unique_ptr<Connection> take(const Origin& o, Reply& r);
  void give_back(std::unique_ptr<Connection> c);
  Exchange exchange(Connection& c, const std::string& request, const Deadline& d, Body& b,
                    Reply& r);

  Timeouts timeouts_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace stowage_curl

#endif  // STOWAGE_STORAGE_COMMON_DIRECT_GET_HPP
