// datg_names.cpp -- reading and writing the gzip'ed name files with zlib.
#include "datg_names.hpp"

#include "datg_layout.hpp"

#include <stowage/plugin_util.hpp>

#include <zlib.h>

#include <optional>

#include <unordered_map>

namespace datg {

namespace sdk = stowage::sdk;

namespace {

// Deflate never shrinks data by more than 1032:1, so a name file cannot
// legitimately inflate beyond this; bounds what a hostile file makes us hold.
constexpr uint64_t kMaxGzipRatio = 1032;

// Inflates a whole gzip file (all members, as Java's GZIPInputStream does).
std::string gunzip(const sdk::Bytes& compressed, const std::string& path) {
  const uint64_t limit = compressed.size() * kMaxGzipRatio + 1024;
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK)
    sdk::fail(STOWAGE_INTERNAL, path + ": inflateInit2 failed");
  std::string out;
  z.next_in = const_cast<Bytef*>(compressed.data());
  z.avail_in = static_cast<uInt>(compressed.size());
  if (compressed.size() != z.avail_in) {
    inflateEnd(&z);
    sdk::corrupt(path + ": name file larger than 4 GiB");
  }
  char buffer[65536];
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (out.size() > limit) rc = Z_DATA_ERROR;
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK) break;
  }
  std::string message = z.msg ? z.msg : "";
  inflateEnd(&z);
  if (rc == Z_STREAM_END) return out;
  if (rc == Z_BUF_ERROR) sdk::corrupt(path + ": gzip stream is truncated");
  if (out.size() > limit) sdk::corrupt(path + ": gzip stream inflates beyond any real name file");
  sdk::corrupt(path + ": not a valid gzip file (" + (message.empty() ? "zlib error" : message) +
               ")");
}

}  // namespace

NameList read_name_file(const sdk::Storage& storage, const std::string& path, uint64_t expected,
                        const char* axis) {
  const std::optional<sdk::Bytes> compressed = storage.read_if_exists(path);
  if (!compressed)
    sdk::fail(STOWAGE_NOT_FOUND, path + ": the datg " + axis + " name file is missing");
  const std::string text = gunzip(*compressed, path);
  NameList names;
  names.reserve(expected);
  size_t line_start = 0;
  const auto add_line = [&](size_t line_end) {
    if (names.size() == expected)
      sdk::corrupt(path + ": more than the " + std::to_string(expected) + " " + axis +
                   " names the datg footer declares");
    std::string_view line(text.data() + line_start, line_end - line_start);
    std::string_view name = line.substr(0, line.find('\t'));
    if (!is_valid_utf8(name))
      sdk::corrupt(path + ": " + axis + " name " + std::to_string(names.size()) +
                   " is not valid UTF-8");
    names.push_back(name);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n' && text[i] != '\r') continue;
    add_line(i);
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    line_start = i + 1;
  }
  if (line_start < text.size()) add_line(text.size());  // last line without LF
  if (names.size() != expected)
    sdk::corrupt(path + ": has " + std::to_string(names.size()) + " " + axis +
                 " names, but the datg footer declares " + std::to_string(expected));
  return names;
}

void check_names_writable(const std::vector<std::string>& names, const char* axis,
                          const sdk::Host& host) {
  std::unordered_map<std::string_view, size_t> seen;
  seen.reserve(names.size());
  bool warned = false;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (name.find_first_of("\t\r\n") != std::string::npos)
      sdk::invalid(std::string("datg ") + axis + " name " + std::to_string(i) +
                   " contains a TAB, CR or LF, which the name files cannot store");
    if (!is_valid_utf8(name))
      sdk::invalid(std::string("datg ") + axis + " name " + std::to_string(i) +
                   " is not valid UTF-8");
    auto [it, inserted] = seen.emplace(name, i);
    if (!inserted)
      sdk::invalid(std::string("datg ") + axis + " names must be unique: '" + name + "' is both " +
                   axis + " " + std::to_string(it->second) + " and " + std::to_string(i));
    if (!warned && name.find_first_of("\"\\") != std::string::npos) {
      host.log(STOWAGE_LOG_WARNING, std::string("datg ") + axis + " name '" + name +
                                        "' contains '\"' or '\\', which the Java reader "
                                        "(opencsv) alters");
      warned = true;
    }
  }
}

std::string encode_name_file(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    text += name;
    text += '\n';
  }
  if (text.size() > UINT32_MAX)
    sdk::invalid("datg: the names take more than 4 GiB, beyond what the name files hold here");
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    sdk::fail(STOWAGE_INTERNAL, "datg: deflateInit2 failed");
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(text.data());
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) sdk::fail(STOWAGE_INTERNAL, "datg: gzip of the name file failed");
  return out;
}

}  // namespace datg
