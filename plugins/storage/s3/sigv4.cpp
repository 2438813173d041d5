#include "sigv4.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

namespace stowage_s3 {

const char* const kEmptyPayload =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr char kHexUpper[] = "0123456789ABCDEF";

std::string hex(const unsigned char* p, size_t n) {
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kHex[p[i] >> 4];
    s[2 * i + 1] = kHex[p[i] & 15];
  }
  return s;
}

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n))
    throw std::runtime_error("s3 storage: HMAC-SHA256 failed (OpenSSL)");
  return std::string(reinterpret_cast<const char*>(out), n);
}

bool unreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

// Leading and trailing blanks cut, runs of blanks inside made one space.
std::string trimmed(std::string_view v) {
  std::string out;
  bool blank = false;
  for (char ch : v) {
    if (ch == ' ' || ch == '\t') {
      blank = !out.empty();
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += ch;
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string canonical_query(const Pairs& query) {
  Pairs encoded;
  encoded.reserve(query.size());
  for (const auto& [k, v] : query) encoded.emplace_back(uri_encode(k, false), uri_encode(v, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) out += '&';
    out += k + '=' + v;
  }
  return out;
}

// Lower-cased names, sorted; a repeated name's values joined by ',' in order.
std::map<std::string, std::string> canonical_headers(const Pairs& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : headers) {
    auto [it, fresh] = out.emplace(lower(trimmed(name)), trimmed(value));
    if (!fresh) it->second += ',' + trimmed(value);
  }
  return out;
}

}  // namespace

std::string uri_encode(std::string_view s, bool keep_slash) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (unreserved(c) || (keep_slash && c == '/')) {
      out += ch;
    } else {
      out += '%';
      out += kHexUpper[c >> 4];
      out += kHexUpper[c & 15];
    }
  }
  return out;
}

std::string uri_decode(std::string_view s) {
  auto value = [](char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && value(s[i + 1]) >= 0 && value(s[i + 2]) >= 0) {
      out += static_cast<char>(value(s[i + 1]) * 16 + value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string sha256_hex(const void* data, size_t size) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!EVP_Digest(data, size, md, &n, EVP_sha256(), nullptr))
    throw std::runtime_error("s3 storage: SHA-256 failed (OpenSSL)");
  return hex(md, n);
}

std::string amz_date(std::time_t when) {
  std::tm t{};
  gmtime_r(&when, &t);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &t);
  return text;
}

Signature sign(const SignInput& in, const Credentials& c) {
  Signature s;
  const std::string date = amz_date(in.when);
  s.headers.emplace_back("x-amz-date", date);
  if (in.payload_header) s.headers.emplace_back("x-amz-content-sha256", in.payload);
  if (!c.session_token.empty()) s.headers.emplace_back("x-amz-security-token", c.session_token);

  Pairs all = in.headers;
  all.insert(all.end(), s.headers.begin(), s.headers.end());
  std::string names, lines;
  for (const auto& [name, value] : canonical_headers(all)) {
    lines += name + ':' + value + '\n';
    names += (names.empty() ? "" : ";") + name;
  }
  const std::string path = in.path.empty() ? "/" : uri_encode(in.path, true);
  s.canonical_request = in.method + '\n' + path + '\n' + canonical_query(in.query) + '\n' + lines +
                        '\n' + names + '\n' + in.payload;

  const std::string day = date.substr(0, 8);
  const std::string scope = day + '/' + in.region + '/' + in.service + "/aws4_request";
  s.string_to_sign = "AWS4-HMAC-SHA256\n" + date + '\n' + scope + '\n' +
                     sha256_hex(s.canonical_request.data(), s.canonical_request.size());
  std::string key = hmac("AWS4" + c.secret_key, day);
  key = hmac(key, in.region);
  key = hmac(key, in.service);
  key = hmac(key, "aws4_request");
  const std::string mac = hmac(key, s.string_to_sign);
  s.authorization =
      "AWS4-HMAC-SHA256 Credential=" + c.access_key + '/' + scope + ", SignedHeaders=" + names +
      ", Signature=" + hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  return s;
}

}  // namespace stowage_s3
