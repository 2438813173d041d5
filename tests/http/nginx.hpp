// A private nginx for a test: Debian's nginx on 127.0.0.1 and a free port,
// its config, pid file, logs and temp paths in a temp dir, serving a folder
// the test fills, with `autoindex on; autoindex_format json;`. It runs as a
// child process (`daemon off`) and is stopped when the object dies, also when
// a check fails; if the test process dies first, the kernel sends nginx
// SIGTERM (PR_SET_PDEATHSIG).
//
// Beside the document root, two locations serve the same files differently:
//   /forbidden/...  answers 403 (deny all), for any user (root reads a mode
//                   000 file, so that alone cannot make a 403 under CI)
//   /status500/...  answers 500 Internal Server Error, /status401/... 401
//                   Unauthorized: a broken server and one that wants a login
//   /norange/...    ignores Range (max_ranges 0) and answers 200 with the
//                   whole file, as some servers do
//   /nohead/...     answers HEAD with 405 Method Not Allowed
//   /chunked/...    answers 200 with the whole file in chunked transfer
//                   encoding, without Content-Length, as a server that
//                   makes its answers as it sends them does (nginx's
//                   sub_filter, which changes nothing here, drops the length
//                   and with it Range)
//   /bearer/...     answers 401 unless the request carries
//                   "Authorization: Bearer <kBearerToken>"
//   /basic/...      HTTP basic authentication: kUser and kPassword (its
//                   htpasswd line in nginx's {PLAIN} scheme: no hashing tool)
#pragma once

#include "test_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace test {

// A port nothing listens on right now (the kernel's pick).
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t n = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0)
    throw std::runtime_error("free_port: cannot bind a socket");
  ::close(fd);
  return ntohs(a.sin_port);
}

inline bool can_connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

class Nginx {
 public:
  static constexpr const char* kBearerToken = "bearer-s3cr3t-7f1c";
  static constexpr const char* kUser = "reader";
  static constexpr const char* kPassword = "basic-s3cr3t-9d2e";

  // `main_directives`: more of nginx's main context, such as
  // "worker_cpu_affinity 10 10;" (bench/http's split mode).
  // `server_directives`: more of the server's, such as a `location / {...}`
  // (tests/s3: a proxy in front of radosgw).
  explicit Nginx(std::string main_directives = {}, std::string server_directives = {})
      : root_(dir_ / "www"),
        main_directives_(std::move(main_directives)),
        server_directives_(std::move(server_directives)) {
    fs::create_directories(root_);
    fs::create_directories(dir_ / "temp");
    // Another process may take the port between free_port() and nginx's
    // bind: try a few.
    for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) start(free_port());
    if (pid_ <= 0) throw std::runtime_error("nginx did not start: " + error_log());
  }
  ~Nginx() { stop(); }
  Nginx(const Nginx&) = delete;
  Nginx& operator=(const Nginx&) = delete;

  // The folder nginx serves; files may be added while it runs.
  const fs::path& root() const { return root_; }
  int port() const { return port_; }
  // The master process (its workers are its children), for a benchmark that
  // counts their CPU time.
  int pid() const { return pid_; }
  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  std::string error_log() const {
    std::error_code ec;
    return fs::exists(dir_ / "error.log", ec) ? read_file(dir_ / "error.log") : "(no error.log)";
  }

  // Stops nginx and starts it again on the same port: every connection a
  // client kept open is closed under it.
  void restart() {
    int port = port_;
    stop();
    for (int i = 0; i < 50 && pid_ <= 0; ++i) {  // the old workers may hold the port a moment
      start(port);
      if (pid_ <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (pid_ <= 0) throw std::runtime_error("nginx did not start again: " + error_log());
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);  // fast shutdown of the master and its workers
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
  }

 private:
  static std::string binary() {
    return fs::exists("/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx";
  }

  std::string config(int port) const {
    std::string t = (dir_ / "temp").string();
    std::string c;
    // Under CI the tests run as root: nginx's workers would switch to
    // nobody, who cannot read the temp dir. As anyone else, `user` is
    // ignored with a warning, so it is left out.
    if (::geteuid() == 0) c += "user root;\n";
    c += "daemon off;\nworker_processes 2;\npid " + (dir_ / "nginx.pid").string() + ";\n";
    c += "error_log " + (dir_ / "error.log").string() + " warn;\n";
    c += main_directives_;
    c += "events { worker_connections 512; }\n";
    // tcp_nopush: the head of an answer goes out with the first bytes of the
    // file, not in a segment of its own (strace of bench/http: 2 recv calls
    // per 512 KiB chunk instead of 3; nginx's CPU time 1.4-2.9 instead of
    // 2.3-2.5 times the host's scatter of the chunks, bench/http/README.md).
    c +=
        "http {\n  access_log off;\n  default_type application/octet-stream;\n  sendfile on;\n  tcp_nopush on;\n";
    c += "  keepalive_requests 100000;\n";
    for (const char* kind : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
      c += std::string("  ") + kind + "_temp_path " + t + "/" + kind + ";\n";
    c += "  server {\n    listen 127.0.0.1:" + std::to_string(port) + ";\n";
    c += "    root " + root_.string() + ";\n";
    c += "    autoindex on;\n    autoindex_format json;\n";
    // A relative Location keeps a redirect on the port the client used (a
    // proxy's, in the flaky-server tests).
    c += "    absolute_redirect off;\n";
    c += "    location /forbidden/ { deny all; }\n";
    c += "    location /status500/ { return 500; }\n    location /status401/ { return 401; }\n";
    c += "    location /norange/ { alias " + root_.string() + "/; max_ranges 0; }\n";
    c += "    location /chunked/ { alias " + root_.string() +
         "/; sub_filter_types *; sub_filter_once off; sub_filter \"-no such text-\" \"\"; }\n";
    c += "    location /bearer/ { alias " + root_.string() +
         "/; if ($http_authorization != \"Bearer " + kBearerToken + "\") { return 401; } }\n";
    c += "    location /basic/ { alias " + root_.string() + "/; auth_basic \"test\"; " +
         "auth_basic_user_file " + (dir_ / "htpasswd").string() + "; }\n";
    c += "    location /nohead/ { alias " + root_.string() +
         "/; if ($request_method = HEAD) { return 405; } }\n";
    c += server_directives_;
    c += "  }\n}\n";
    return c;
  }

  void start(int port) {
    write_file(dir_ / "htpasswd", std::string(kUser) + ":{PLAIN}" + kPassword + "\n");
    write_file(dir_ / "nginx.conf", config(port));
    std::string conf = (dir_ / "nginx.conf").string(), prefix = dir_.path().string() + "/",
                err = (dir_ / "error.log").string();
    std::string nginx = binary();
    log_command(nginx + " -p " + prefix + " -e " + err + " -c " + conf);
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) _exit(127);
      ::execl(nginx.c_str(), nginx.c_str(), "-p", prefix.c_str(), "-e", err.c_str(), "-c",
              conf.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid < 0) return;
    for (int i = 0; i < 500; ++i) {  // up to 10 s
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) return;  // exited: port taken, or a bad config
      if (can_connect(port)) {
        pid_ = pid;
        port_ = port;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }

  TempDir dir_;
  fs::path root_;
  std::string main_directives_;
  std::string server_directives_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace test
