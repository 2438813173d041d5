#include "xml.hpp"

#include <cstdlib>

namespace stowage_s3 {
namespace {

// UTF-8 of a code point (a &#N; entity).
void append_utf8(std::string& out, unsigned long c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace

std::vector<std::string_view> xml_elements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  const std::string open = "<" + std::string(tag), close = "</" + std::string(tag) + ">";
  for (size_t at = 0;;) {
    size_t start = xml.find(open, at);
    if (start == std::string_view::npos) break;
    size_t after = start + open.size();
    if (after >= xml.size()) break;
    if (xml[after] != '>' && xml[after] != ' ') {  // <KeyCount> is not <Key>
      at = after;
      continue;
    }
    size_t gt = xml.find('>', after);
    if (gt == std::string_view::npos) break;
    if (xml[gt - 1] == '/') {  // <Tag/>
      out.push_back(xml.substr(gt + 1, 0));
      at = gt + 1;
      continue;
    }
    size_t end = xml.find(close, gt + 1);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(gt + 1, end - gt - 1));
    at = end + close.size();
  }
  return out;
}

std::string xml_text(std::string_view xml, std::string_view tag) {
  const auto all = xml_elements(xml, tag);
  return all.empty() ? "" : xml_unescape(all.front());
}

std::string xml_unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    size_t semi = s[i] == '&' ? s.find(';', i) : std::string_view::npos;
    if (semi == std::string_view::npos || semi - i > 10) {
      out += s[i];
      continue;
    }
    std::string_view name = s.substr(i + 1, semi - i - 1);
    if (name == "amp")
      out += '&';
    else if (name == "lt")
      out += '<';
    else if (name == "gt")
      out += '>';
    else if (name == "quot")
      out += '"';
    else if (name == "apos")
      out += '\'';
    else if (name.size() > 1 && name[0] == '#') {
      bool hex = name[1] == 'x' || name[1] == 'X';
      std::string digits(name.substr(hex ? 2 : 1));
      append_utf8(out, std::strtoul(digits.c_str(), nullptr, hex ? 16 : 10));
    } else {
      out += s[i];
      continue;
    }
    i = semi;
  }
  return out;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace stowage_s3
