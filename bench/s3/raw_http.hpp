// The lightest S3 client we could write, for the limit of bench/s3: plain
// sockets on loopback, HTTP/1.1 keep-alive, one connection per thread,
// presigned URLs (radosgw checks every signature; this client computes none),
// each body received into one buffer the thread reuses and a PUT's body sent
// from memory. No retries, no parsing beyond the status and Content-Length:
// what is left is the server's cost and the kernel's.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace raw_http {

struct Request {
  std::string target;  // path?query, as presigned
  const char* body = nullptr;
  size_t size = 0;
};

class Connection {
 public:
  explicit Connection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("raw_http: cannot connect to port " + std::to_string(port));
    host_ = "127.0.0.1:" + std::to_string(port);  // as presigned: the Host is signed
  }
  ~Connection() { ::close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One request and its answer; the body lands in `body`. Throws unless 2xx.
  void exchange(const char* method, const Request& r, std::vector<char>& body) {
    std::string head =
        std::string(method) + " " + r.target + " HTTP/1.1\r\nHost: " + host_ + "\r\n";
    if (r.body) head += "Content-Length: " + std::to_string(r.size) + "\r\n";
    head += "\r\n";
    send_all(head.data(), head.size(), r.body ? MSG_MORE : 0);
    if (r.body) send_all(r.body, r.size, 0);
    receive(body, r.target);
  }

 private:
  void send_all(const char* p, size_t n, int flags) {
    while (n > 0) {
      ssize_t k = ::send(fd_, p, n, flags | MSG_NOSIGNAL);
      if (k <= 0) throw std::runtime_error("raw_http: send failed");
      p += k;
      n -= size_t(k);
    }
  }

  // The head into head_, then the rest of the body straight into `body`.
  void receive(std::vector<char>& body, const std::string& target) {
    head_.clear();
    size_t end = std::string::npos;
    char buf[4096];
    while (end == std::string::npos) {
      ssize_t k = ::recv(fd_, buf, sizeof buf, 0);
      if (k <= 0) throw std::runtime_error("raw_http: connection closed");
      head_.append(buf, size_t(k));
      end = head_.find("\r\n\r\n");
    }
    const int status = std::atoi(head_.c_str() + 9);  // "HTTP/1.1 200"
    const size_t length = content_length(head_.substr(0, end));
    body.resize(length);
    size_t have = std::min(length, head_.size() - end - 4);
    std::memcpy(body.data(), head_.data() + end + 4, have);
    while (have < length) {
      ssize_t k = ::recv(fd_, body.data() + have, length - have, 0);
      if (k <= 0) throw std::runtime_error("raw_http: body cut short");
      have += size_t(k);
    }
    if (status < 200 || status > 299)
      throw std::runtime_error("raw_http: HTTP " + std::to_string(status) + " for " +
                               target.substr(0, target.find('?')) + ": " +
                               std::string(body.begin(), body.end()));
  }

  static size_t content_length(std::string head) {
    for (char& c : head) c = char(std::tolower(static_cast<unsigned char>(c)));
    size_t at = head.find("\r\ncontent-length:");
    if (at == std::string::npos)
      throw std::runtime_error("raw_http: an answer without Content-Length");
    return std::stoull(head.substr(at + 17));
  }

  int fd_;
  std::string host_, head_;
};

// Every request from `threads` threads, request i by thread i % threads, each
// thread on a connection of its own (a loopback connect is timed with it:
// tens of microseconds).
inline void run(int port, const char* method, const std::vector<Request>& requests, int threads) {
  std::vector<std::thread> pool;
  std::exception_ptr failed;
  std::mutex m;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        Connection c(port);
        std::vector<char> body;
        for (size_t i = t; i < requests.size(); i += threads) c.exchange(method, requests[i], body);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        failed = std::current_exception();
      }
    });
  for (std::thread& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace raw_http
