#include "direct_get.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/write.hpp>  // operator<< for a request

#include <poll.h>

#include <chrono>
#include <cstdio>
#include <sstream>

namespace stowage_curl {
namespace {

namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;

constexpr size_t kHeadBuffer = 4096;  // a head (nginx: about 250 bytes) and the body's first bytes
constexpr size_t kMaxHead = 64 * 1024;       // a longer head is declined
constexpr uint64_t kMaxErrorPage = 1 << 16;  // read to keep the connection; a longer one closes it
constexpr size_t kScratch = 256 * 1024;      // bodies that go through Body::take (see get)
constexpr size_t kMaxIdle = 32;              // as CurlPool: a burst of threads keeps no more open
// At most this much per recv (curl_easy_recv reads no more than
// CURLOPT_BUFFERSIZE at once): a 64^3 uint16 chunk.
constexpr long kMaxReceive = 512L * 1024;

}  // namespace

// A request's end, as libcurl's CURLOPT_TIMEOUT_MS: 0 is none.
class Deadline {
 public:
  explicit Deadline(int64_t ms)
      : none_(ms == 0), at_(Clock::now() + std::chrono::milliseconds(ms)), ms_(ms) {}
  // For poll(): -1 without a deadline, 0 once it has passed.
  int left_ms() const {
    if (none_) return -1;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left + 1, INT32_MAX));
  }
  int64_t ms() const { return ms_; }

 private:
  bool none_;
  Clock::time_point at_;
  int64_t ms_;
};

namespace {

std::string request_head(const Origin& o, const std::string& range,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  http::request<http::empty_body> req{http::verb::get, o.target, 11};
  req.set(http::field::host, o.host_header);
  if (!range.empty()) req.set(http::field::range, "bytes=" + range);
  for (const auto& [name, value] : headers) req.set(name, value);
  std::ostringstream text;
  text << req;
  return text.str();
}

void set_error(Reply& r, CURLcode code, const std::string& text) {
  r.code = code;
  std::snprintf(r.curl_error, sizeof r.curl_error, "%s", text.c_str());
}

}  // namespace

bool origin_of(const std::string& url, Origin* origin) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), curl_url_cleanup);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return false;
  auto part = [&](CURLUPart what, unsigned flags, std::string* out) {
    char* text = nullptr;
    if (curl_url_get(u.get(), what, &text, flags) != CURLUE_OK) return false;
    *out = text;
    curl_free(text);
    return true;
  };
  std::string scheme, user, host, port, query;
  if (!part(CURLUPART_SCHEME, 0, &scheme) || scheme != "http") return false;
  if (part(CURLUPART_USER, 0, &user)) return false;  // credentials: libcurl's business
  if (!part(CURLUPART_HOST, 0, &host) || !part(CURLUPART_PATH, 0, &origin->target)) return false;
  bool port_given = part(CURLUPART_PORT, 0, &port);
  if (!port_given && !part(CURLUPART_PORT, CURLU_DEFAULT_PORT, &port)) return false;
  if (part(CURLUPART_QUERY, 0, &query)) origin->target += "?" + query;
  origin->connect_url = "http://" + host + ":" + port + "/";
  origin->host_header = port_given ? host + ":" + port : host;
  return true;
}

// One connection, used by one request at a time.
struct DirectGet::Connection {
  CURL* handle = nullptr;
  curl_socket_t socket = CURL_SOCKET_BAD;
  std::string server;  // Origin::connect_url
  bool reused = false;
  char error[CURL_ERROR_SIZE] = {0};  // libcurl's text for a failed connect, send or recv
  std::vector<char> head =
      std::vector<char>(kHeadBuffer);  // an answer's head and the body's first bytes
  std::vector<char> scratch;           // body bytes that cannot go in place

  ~Connection() {
    if (handle) curl_easy_cleanup(handle);
  }

  // False if the deadline passed first.
  bool wait(short events, const Deadline& d) {
    pollfd p{socket, events, 0};
    int n;
    do n = ::poll(&p, 1, d.left_ms());
    while (n < 0 && errno == EINTR);
    return n != 0;  // (an error or a hang-up shows in the send or recv that follows)
  }

  CURLcode send_all(const std::string& bytes, const Deadline& d) {
    for (size_t at = 0; at < bytes.size();) {
      size_t sent = 0;
      CURLcode c = curl_easy_send(handle, bytes.data() + at, bytes.size() - at, &sent);
      if (c == CURLE_AGAIN) {
        if (!wait(POLLOUT, d)) return CURLE_OPERATION_TIMEDOUT;
        continue;
      }
      if (c != CURLE_OK) return c;
      at += sent;
    }
    return CURLE_OK;
  }

  // Up to n bytes into p; *got is 0 when the server has closed the connection.
  CURLcode receive(void* p, size_t n, size_t* got, const Deadline& d) {
    for (;;) {
      CURLcode c = curl_easy_recv(handle, p, n, got);
      if (c != CURLE_AGAIN) return c;
      if (!wait(POLLIN, d)) return CURLE_OPERATION_TIMEDOUT;
    }
  }

  // Receives an answer's head into `parser`. The bytes after it (the
  // body's first) are head[*parsed, *filled).
  Exchange receive_head(http::response_parser<http::empty_body>& parser, size_t* parsed,
                        size_t* filled, const Deadline& d, Reply& r) {
    *parsed = *filled = 0;
    while (!parser.is_header_done()) {
      if (*filled == head.size()) {
        if (head.size() >= kMaxHead) return Exchange::declined;
        head.resize(head.size() * 2);
      }
      size_t got = 0;
      CURLcode code = receive(head.data() + *filled, head.size() - *filled, &got, d);
      if (code == CURLE_OPERATION_TIMEDOUT) return timed_out(d, 0, r);
      if ((code != CURLE_OK || got == 0) && *filled == 0 && reused) return Exchange::stale;
      if (code != CURLE_OK) return failed(code, error, r);
      if (got == 0)
        return failed(*filled == 0 ? CURLE_GOT_NOTHING : CURLE_RECV_ERROR,
                      *filled == 0 ? "the server closed the connection without answering"
                                   : "the server closed the connection in the answer's head",
                      r);
      *filled += got;
      boost::system::error_code ec;
      *parsed += parser.put(boost::asio::buffer(head.data() + *parsed, *filled - *parsed), ec);
      if (ec && ec != http::error::need_more) return Exchange::declined;
    }
    return Exchange::reusable;
  }

  // Receives the `left` bytes of a body still to come into b: in place
  // where Body says so, through `scratch` and Body::take where not.
  Exchange receive_body(uint64_t left, Body& b, const Deadline& d, Reply& r) {
    for (bool go_on = true; go_on && left;) {
      auto [at, room] = b.place();
      size_t got = 0;
      CURLcode code;
      if (at) {  // straight into the caller's buffer
        code = receive(at, static_cast<size_t>(std::min(room, left)), &got, d);
        if (code == CURLE_OK) b.placed(got);
      } else {
        scratch.resize(kScratch);
        code = receive(scratch.data(), static_cast<size_t>(std::min<uint64_t>(kScratch, left)),
                       &got, d);
        if (code == CURLE_OK) go_on = b.take(scratch.data(), got);
      }
      if (code == CURLE_OPERATION_TIMEDOUT) return timed_out(d, b.received, r);
      if (code != CURLE_OK) return failed(code, error, r);
      if (got == 0)
        return failed(CURLE_PARTIAL_FILE, "the connection closed before the body ended", r);
      left -= got;
    }
    // A body stopped before its end (limit bytes kept of a whole file)
    // leaves the connection in no state for another request.
    return left ? Exchange::closed : Exchange::reusable;
  }

  static Exchange failed(CURLcode code, const std::string& text, Reply& r) {
    set_error(r, code, text);
    return Exchange::closed;
  }
  static Exchange timed_out(const Deadline& d, uint64_t received, Reply& r) {
    return failed(CURLE_OPERATION_TIMEDOUT,
                  "timed out after " + std::to_string(d.ms()) + " ms with " +
                      std::to_string(received) + " bytes received",
                  r);
  }
};

DirectGet::DirectGet(Timeouts t) : timeouts_(t) {}
DirectGet::~DirectGet() = default;

std::unique_ptr<DirectGet::Connection> DirectGet::take(const Origin& o, Reply& r) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = idle_.size(); i-- > 0;) {
      if (idle_[i]->server != o.connect_url) continue;
      std::unique_ptr<Connection> c = std::move(idle_[i]);
      idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
      c->reused = true;
      return c;
    }
  }
  auto c = std::make_unique<Connection>();
  c->server = o.connect_url;
  c->handle = curl_easy_init();
  if (!c->handle) throw std::bad_alloc();
  curl_easy_setopt(c->handle, CURLOPT_URL, o.connect_url.c_str());
  curl_easy_setopt(c->handle, CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(c->handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c->handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts_.connect_ms));
  curl_easy_setopt(c->handle, CURLOPT_BUFFERSIZE, kMaxReceive);
  curl_easy_setopt(c->handle, CURLOPT_ERRORBUFFER, c->error);
  CURLcode code = curl_easy_perform(c->handle);
  if (code == CURLE_OK) code = curl_easy_getinfo(c->handle, CURLINFO_ACTIVESOCKET, &c->socket);
  if (code != CURLE_OK) {
    set_error(r, code, c->error[0] ? c->error : curl_easy_strerror(code));
    curl_easy_getinfo(c->handle, CURLINFO_OS_ERRNO, &r.os_errno);
    return nullptr;
  }
  return c;
}

void DirectGet::give_back(std::unique_ptr<Connection> c) {
  c->reused = false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(c));
}

DirectGet::Outcome DirectGet::get(const Origin& o, const std::string& range, Body& b, Reply& r,
                                  const std::vector<std::pair<std::string, std::string>>& headers) {
  const std::string request = request_head(o, range, headers);
  const Deadline deadline(timeouts_.whole_ms);
  for (;;) {
    std::unique_ptr<Connection> c = take(o, r);
    if (!c) return Outcome::answered;  // r.code: could not connect
    Exchange e = exchange(*c, request, deadline, b, r);
    // A kept-alive connection the server closed while it was idle (nginx:
    // after keepalive_timeout): the same request on a new one.
    if (e == Exchange::stale && c->reused) {
      r = Reply{};
      continue;
    }
    if (e == Exchange::declined) return Outcome::declined;
    if (e == Exchange::reusable) give_back(std::move(c));
    return Outcome::answered;
  }
}

// Sends the request on c and receives the answer: its head into r, its body
// into b.
DirectGet::Exchange DirectGet::exchange(Connection& c, const std::string& request,
                                        const Deadline& d, Body& b, Reply& r) {
  CURLcode code = c.send_all(request, d);
  if (code != CURLE_OK) return c.reused ? Exchange::stale : Connection::failed(code, c.error, r);
  http::response_parser<http::empty_body> parser;
  size_t parsed = 0, filled = 0;
  Exchange e = c.receive_head(parser, &parsed, &filled, d, r);
  if (e != Exchange::reusable) return e;

  const auto& h = parser.get();
  r.status = static_cast<long>(h.result_int());
  r.status_line = "HTTP/" + std::to_string(h.version() / 10) + "." +
                  std::to_string(h.version() % 10) + " " + std::to_string(r.status) + " " +
                  std::string(h.reason());
  r.content_range = std::string(h[http::field::content_range]);
  // Redirects and bodies of unknown length are libcurl's.
  if (r.status < 200 || (r.status >= 300 && r.status < 400) || !parser.content_length())
    return Exchange::declined;
  uint64_t length = *parser.content_length();
  r.content_length = static_cast<int64_t>(std::min<uint64_t>(length, INT64_MAX));
  b.start(r.status, r.content_length);
  if (!b.keep && length > kMaxErrorPage)
    return Exchange::closed;  // an error page not worth reading

  size_t early = static_cast<size_t>(std::min<uint64_t>(filled - parsed, length));
  if (!b.take(c.head.data() + parsed, early)) return Exchange::closed;
  e = c.receive_body(length - early, b, d, r);
  // Bytes past the body, or a server that closes after this answer, leave
  // the connection in no state for another request.
  if (e == Exchange::reusable && (filled - parsed > early || !parser.keep_alive()))
    return Exchange::closed;
  return e;
}

}  // namespace stowage_curl
