// A small HTTP proxy in front of a server that, deterministically on every
// Nth request, misbehaves the way real servers and networks do:
//   drop    closes the connection without answering
//   status  answers "503 Service Unavailable"
//   cut     forwards the answer but only half of its body, then closes
//   stall   answers nothing for a while (the client's timeout fires)
//   short_range   answers a range (206) with its first half only, its
//                 headers saying so (Content-Range and Content-Length of
//                 the half): consistent, but fewer bytes than asked
//   short_length  answers a range (206) with its first half and a
//                 Content-Length of the half, its Content-Range still the
//                 whole range asked: the body ends before the range does
// Every other request is forwarded to the server as is. One request per
// client connection ("Connection: close" both ways), so requests are counted
// exactly whatever the client's connection reuse.
#pragma once

#include "nginx.hpp"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace test {

class FlakyProxy {
 public:
  enum class Fault { none, drop, status, cut, stall, short_range, short_length };

  explicit FlakyProxy(int upstream_port) : upstream_(upstream_port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listener_, 128) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &n) != 0)
      throw std::runtime_error("FlakyProxy: cannot listen");
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FlakyProxy() {
    stopping_ = true;
    acceptor_.join();
    ::close(listener_);
    std::vector<std::thread> handlers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      handlers.swap(handlers_);
    }
    for (std::thread& t : handlers) t.join();
  }
  FlakyProxy(const FlakyProxy&) = delete;
  FlakyProxy& operator=(const FlakyProxy&) = delete;

  // Requests number every, 2 * every, ... (counting from 1) get `fault`;
  // every = 1: all of them.
  void misbehave(Fault fault, int every) {
    std::lock_guard<std::mutex> lock(mutex_);
    fault_ = fault;
    every_ = every;
  }
  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  int requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  int faults() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return faults_;
  }
  // The request lines ("GET /x HTTP/1.1") since the last call, in order.
  std::vector<std::string> take_request_lines() {
    std::lock_guard<std::mutex> lock(mutex_);
    ranges_.clear();
    return std::exchange(request_lines_, {});
  }

  // The requests since the last take, each its request line and its Range
  // header's value ("" without one).
  struct Request {
    std::string line, range;
  };
  std::vector<Request> take_requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Request> out;
    for (size_t i = 0; i < request_lines_.size(); ++i)
      out.push_back({request_lines_[i], ranges_[i]});
    request_lines_.clear();
    ranges_.clear();
    return out;
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      handlers_.emplace_back([this, client] {
        serve(client);
        ::close(client);
      });
    }
  }

  static void set_timeout(int fd, int seconds) {
    timeval tv{seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  static bool send_all(int fd, const char* p, size_t n) {
    while (n) {
      ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
      if (k <= 0) return false;
      p += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }
  // Reads a request head (GET and HEAD have no body).
  static std::string read_head(int fd) {
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      ssize_t k = ::recv(fd, buf, sizeof buf, 0);
      if (k <= 0) return "";
      head.append(buf, static_cast<size_t>(k));
    }
    return head;
  }
  // The head with "Connection: close" instead of whatever the client asked.
  static std::string closing(const std::string& head) {
    std::string out;
    size_t at = 0;
    while (at < head.size()) {
      size_t eol = head.find("\r\n", at);
      std::string line = head.substr(at, eol - at);
      at = eol + 2;
      if (line.empty()) break;
      if (strncasecmp(line.c_str(), "connection:", 11) == 0) continue;
      out += line + "\r\n";
    }
    return out + "Connection: close\r\n\r\n";
  }

  // The value of header `name` (lower case) in a request head, "" if absent.
  static std::string header_value(const std::string& head, const std::string& name) {
    for (size_t at = head.find("\r\n"); at != std::string::npos && at + 2 < head.size();) {
      const size_t start = at + 2, eol = head.find("\r\n", start);
      const std::string line = head.substr(start, eol - start);
      if (line.size() > name.size() && strncasecmp(line.c_str(), name.c_str(), name.size()) == 0 &&
          line[name.size()] == ':') {
        const size_t v = line.find_first_not_of(' ', name.size() + 1);
        return v == std::string::npos ? std::string() : line.substr(v);
      }
      at = eol;
    }
    return {};
  }

  Fault next_fault(const std::string& head) {
    std::lock_guard<std::mutex> lock(mutex_);
    request_lines_.push_back(head.substr(0, head.find("\r\n")));
    ranges_.push_back(header_value(head, "range"));
    int n = ++requests_;
    if (fault_ == Fault::none || n % every_ != 0) return Fault::none;
    ++faults_;
    return fault_;
  }

  void serve(int client) {
    set_timeout(client, 10);
    std::string head = read_head(client);
    if (head.empty()) return;
    Fault f = next_fault(head);
    if (f == Fault::drop) return;
    if (f == Fault::status) {
      const char* r =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      send_all(client, r, std::strlen(r));
      return;
    }
    if (f == Fault::stall) {  // until the client gives up (or 5 s)
      pollfd p{client, POLLIN, 0};
      ::poll(&p, 1, 5000);
      return;
    }
    std::string answer = forward(closing(head));
    size_t end = answer.find("\r\n\r\n");
    if (f == Fault::cut && end != std::string::npos) {
      size_t body = answer.size() - (end + 4);
      answer.resize(end + 4 + body / 2);
    }
    if ((f == Fault::short_range || f == Fault::short_length) && end != std::string::npos)
      answer = halved_range(answer, end, f == Fault::short_range);
    send_all(client, answer.data(), answer.size());
  }

  // A 206 answer with the first half of its body, Content-Length saying so,
  // and Content-Range too when `consistent`. Other answers stay as they are.
  static std::string halved_range(const std::string& answer, size_t end, bool consistent) {
    if (answer.compare(0, 12, "HTTP/1.1 206") != 0) return answer;
    const std::string body = answer.substr(end + 4);
    const size_t half = body.size() / 2;
    std::string head;
    for (size_t at = 0; at < end;) {
      size_t eol = std::min(answer.find("\r\n", at), end);
      std::string line = answer.substr(at, eol - at);
      at = eol + 2;
      if (strncasecmp(line.c_str(), "content-length:", 15) == 0) {
        line = "Content-Length: " + std::to_string(half);
      } else if (consistent && strncasecmp(line.c_str(), "content-range:", 14) == 0) {
        unsigned long long first = 0, last = 0;
        const size_t slash = line.find('/');
        if (std::sscanf(line.c_str() + 14, " bytes %llu-%llu/", &first, &last) == 2 &&
            slash != std::string::npos)
          line = "Content-Range: bytes " + std::to_string(first) + "-" +
                 std::to_string(first + half - 1) + line.substr(slash);
      }
      head += line + "\r\n";
    }
    return head + "\r\n" + body.substr(0, half);
  }

  // The server's whole answer to one request.
  std::string forward(const std::string& request) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(upstream_));
    std::string answer;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        send_all(fd, request.data(), request.size())) {
      set_timeout(fd, 10);
      char buf[65536];
      ssize_t k;
      while ((k = ::recv(fd, buf, sizeof buf, 0)) > 0) answer.append(buf, static_cast<size_t>(k));
    }
    ::close(fd);
    return answer;
  }

  int upstream_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::vector<std::thread> handlers_;
  Fault fault_ = Fault::none;
  int every_ = 1;
  int requests_ = 0;
  int faults_ = 0;
  std::vector<std::string> request_lines_;
  std::vector<std::string> ranges_;  // each request's Range header, "" if none
};

}  // namespace test
