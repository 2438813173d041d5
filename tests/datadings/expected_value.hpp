// Compares a decoded sample (stowage::sample::Value) with the tagged JSON of
// the fixtures' .expected.json ("$map", "$bytes", "$float64", "$ndarray",
// "$scalar", "$complex"; README in tests/fixtures/datadings) and the
// arrays' bytes with .expected.bin (little-endian, C order).
#pragma once

#include <stowage/msgpack_sample.hpp>
#include <stowage/stowage.hpp>  // stowage::json

#include <doctest/doctest.h>

#include <cmath>
#include <string>

namespace dd_test {

using stowage::json;
using stowage::sample::NdArray;
using stowage::sample::Type;
using stowage::sample::Value;

inline std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// The array's bytes as little-endian (what .expected.bin holds).
inline std::string little_endian_bytes(const NdArray& a) {
  std::string b = a.data;
  if (a.byte_order != '>' || a.itemsize < 2 || a.kind == 'S' || a.kind == 'V') return b;
  size_t width = a.kind == 'c' ? a.itemsize / 2 : a.kind == 'U' ? 4 : a.itemsize;
  for (size_t at = 0; at + width <= b.size(); at += width)
    for (size_t i = 0; i < width / 2; ++i) std::swap(b[at + i], b[at + width - 1 - i]);
  return b;
}

inline void check_double(double actual, const json& expected, const std::string& where) {
  INFO(where);
  if (expected.is_string()) {
    std::string s = expected.get<std::string>();
    if (s == "nan")
      CHECK(std::isnan(actual));
    else
      CHECK(actual == (s == "inf" ? HUGE_VAL : -HUGE_VAL));
    return;
  }
  double want = expected.get<double>();
  CHECK(actual == want);
  CHECK(std::signbit(actual) == std::signbit(want));
}

// Flattens a nested JSON list of numbers (complex as [re, im]) in C order.
inline void flatten(const json& j, std::vector<json>& out) {
  if (j.is_array()) {
    for (const json& e : j) flatten(e, out);
  } else {
    out.push_back(j);
  }
}

inline void check_ndarray(const Value& v, const json& e, const std::string& bin,
                          const std::string& where) {
  INFO(where);
  const NdArray& a = v.as_ndarray();
  CHECK(a.dtype == e["dtype"].get<std::string>());
  CHECK(a.itemsize == e["itemsize"].get<size_t>());
  CHECK(a.size() == e["size"].get<uint64_t>());
  CHECK(a.shape == e["shape"].get<std::vector<uint64_t>>());
  size_t offset = e["bin_offset"].get<size_t>(), nbytes = e["bin_nbytes"].get<size_t>();
  REQUIRE(offset + nbytes <= bin.size());
  CHECK(little_endian_bytes(a) == bin.substr(offset, nbytes));
  if (e.contains("descr")) {
    REQUIRE(a.fields.size() == e["descr"].size());
    for (size_t i = 0; i < a.fields.size(); ++i) {
      CHECK(a.fields[i].name == e["descr"][i][0].get<std::string>());
      CHECK(a.fields[i].dtype == e["descr"][i][1].get<std::string>());
    }
  }
  // Numeric values, also through the typed accessors.
  if (!e.contains("values") || std::string("biuf").find(a.kind) == std::string::npos) return;
  std::vector<json> want;
  flatten(e["values"], want);
  std::vector<double> got = a.to_doubles();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (want[i].is_boolean())
      CHECK(got[i] == (want[i].get<bool>() ? 1.0 : 0.0));
    else
      check_double(got[i], want[i], where + " element " + std::to_string(i));
  }
}

inline void check_value(const Value& v, const json& e, const std::string& bin,
                        const std::string& where) {
  INFO(where);
  if (e.is_null()) {
    CHECK(v.is_nil());
  } else if (e.is_boolean()) {
    REQUIRE(v.type() == Type::boolean);
    CHECK(v.as_bool() == e.get<bool>());
  } else if (e.is_number_unsigned()) {
    REQUIRE(v.type() == Type::uint64);
    CHECK(v.as_uint() == e.get<uint64_t>());
  } else if (e.is_number_integer()) {
    REQUIRE(v.type() == Type::int64);
    CHECK(v.as_int() == e.get<int64_t>());
  } else if (e.is_string()) {
    REQUIRE(v.type() == Type::string);
    CHECK(v.as_string() == e.get<std::string>());
  } else if (e.is_array()) {
    REQUIRE(v.type() == Type::array);
    REQUIRE(v.size() == e.size());
    for (size_t i = 0; i < e.size(); ++i)
      check_value(v[i], e[i], bin, where + "[" + std::to_string(i) + "]");
  } else if (e.contains("$map")) {
    REQUIRE(v.type() == Type::map);
    const json& entries = e["$map"];
    REQUIRE(v.size() == entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      std::string sub = where + "{" + entries[i][0].dump() + "}";
      check_value(v.as_map()[i].first, entries[i][0], bin, sub + " key");
      check_value(v.as_map()[i].second, entries[i][1], bin, sub);
    }
  } else if (e.contains("$bytes")) {
    REQUIRE(v.type() == Type::bytes);
    CHECK(hex(v.as_bytes()) == e["$bytes"].get<std::string>());
  } else if (e.contains("$float64")) {
    REQUIRE(v.type() == Type::float64);
    check_double(v.as_double(), e["$float64"], where);
  } else if (e.contains("$ndarray")) {
    REQUIRE(v.type() == Type::ndarray);
    check_ndarray(v, e["$ndarray"], bin, where);
  } else if (e.contains("$scalar")) {
    REQUIRE(v.type() == Type::numpy_scalar);
    const json& s = e["$scalar"];
    const NdArray& a = v.as_ndarray();
    CHECK(a.dtype == s["dtype"].get<std::string>());
    CHECK(hex(a.data) == s["data_hex"].get<std::string>());
    CHECK(a.shape.empty());
    if (a.kind == 'c' && a.itemsize == 8) {
      auto c = a.values<std::complex<float>>().at(0);
      check_double(c.real(), s["value"][0], where);
      check_double(c.imag(), s["value"][1], where);
    } else if (a.kind == 'c') {
      auto c = a.values<std::complex<double>>().at(0);
      check_double(c.real(), s["value"][0], where);
      check_double(c.imag(), s["value"][1], where);
    } else if (a.kind == 'u' && a.itemsize == 8) {
      CHECK(a.values<uint64_t>().at(0) == s["value"].get<uint64_t>());
    } else if (a.kind == 'i' && a.itemsize == 8) {
      CHECK(a.values<int64_t>().at(0) == s["value"].get<int64_t>());
    } else if (a.kind == 'b') {
      CHECK(a.values<bool>().at(0) == s["value"].get<bool>());
    } else {
      check_double(a.to_doubles().at(0), s["value"], where);
    }
  } else if (e.contains("$complex")) {
    REQUIRE(v.type() == Type::complex);
    check_double(v.as_complex().real(), e["$complex"][0], where);
    check_double(v.as_complex().imag(), e["$complex"][1], where);
  } else {
    FAIL("unknown expected tag " << e.dump());
  }
}

}  // namespace dd_test
