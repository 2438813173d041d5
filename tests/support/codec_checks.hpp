// Codec conformance checks: what every codec plugin must do, run through the
// public API (stowage::Registry, stowage::Codec) against the plugin as built.
// A third-party codec author runs them with doctest on their own plugin:
//
//   codec_checks::Spec spec;
//   spec.config = R"({"type": "delta", "typesize": 4})";
//   spec.id = "delta";           // every error message must name it
//   spec.element_size = 4;       // inputs are whole elements
//   spec.bad_configs = {{R"({"type": "delta", "typesize": 3})", "typesize"}};
//   codec_checks::check_codec(spec);
//
// Needs only failure.hpp (beside it), <stowage/stowage.hpp> and doctest.
// README.md beside this file ("Codec checks") says what each check asks and why.
#pragma once

#include "failure.hpp"

#include <stowage/stowage.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace codec_checks {

using Bytes = std::vector<uint8_t>;

using test::Failure;
using test::failure_of;

struct BadConfig {
  std::string config;     // a config the plugin must refuse
  std::string parameter;  // the parameter its message must name
};

struct Spec {
  std::string config;        // the codec's JSON config
  std::string id;            // the codec id every error message names
  size_t element_size = 1;   // inputs are made of whole elements of this size
  bool checksummed = false;  // a damaged payload never decodes to other bytes
  bool versioned = false;    // a damaged format version byte may be UNSUPPORTED rather than CORRUPT
  // Declared parameters this config ignores on purpose (e.g. another
  // framing's): left out of the checks made from the declared parameters.
  std::vector<std::string> ignored_parameters;
  // Refused as INVALID_ARGUMENT naming the parameter, besides those made
  // from the plugin's declared parameters (see check_invalid_configs).
  std::vector<BadConfig> bad_configs;
  stowage::Registry* registry = nullptr;  // nullptr: Registry::global()
};

inline stowage::Registry& registry_of(const Spec& s) {
  return s.registry ? *s.registry : stowage::Registry::global();
}
inline stowage::Codec codec_of(const Spec& s) { return registry_of(s).codec(s.config); }

inline Bytes encode(const stowage::Codec& c, const Bytes& in) {
  return c.encode(in.data(), in.size());
}
inline Bytes decode(const stowage::Codec& c, const Bytes& in, size_t size) {
  return c.decode(in.data(), in.size(), size);
}

// ---- inputs -------------------------------------------------------------------------

struct Input {
  std::string name;
  Bytes data;
};

template <class T>
Bytes as_bytes(const std::vector<T>& v) {
  Bytes out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// Inputs of several element types, patterns and sizes (empty, one element,
// odd counts, a few hundred KiB), each a whole number of `element_size`-byte
// elements, from fixed seeds.
inline std::vector<Input> inputs(size_t element_size = 1) {
  std::mt19937 rng(7);
  std::vector<Input> all;
  std::vector<uint16_t> u16(4099);  // a smooth image row with noise
  for (size_t i = 0; i < u16.size(); ++i)
    u16[i] = static_cast<uint16_t>(
        100 + 900 * std::exp(-((i % 64) - 20.0) * ((i % 64) - 20.0) / 90.0) + rng() % 24);
  std::vector<float> f32(10007);
  for (size_t i = 0; i < f32.size(); ++i)
    f32[i] = std::sin(static_cast<float>(i) * 0.01f) * 1000.0f;
  std::vector<double> f64(3001);
  for (double& v : f64) v = std::ldexp(static_cast<double>(rng()), -16);
  std::vector<int64_t> i64(70001);  // counters with jumps, ~560 KiB
  for (size_t i = 0; i < i64.size(); ++i)
    i64[i] = 1'000'000'000'000LL + static_cast<int64_t>(i) * 3 + (i % 1000 == 0 ? -7 : 0);
  Bytes random(65537);
  for (uint8_t& b : random) b = static_cast<uint8_t>(rng());
  all.push_back({"empty", {}});
  all.push_back({"one element", Bytes(element_size, 0x2a)});
  all.push_back({"uint16 image", as_bytes(u16)});
  all.push_back({"float32 sine", as_bytes(f32)});
  all.push_back({"float64 random", as_bytes(f64)});
  all.push_back({"int64 counters", as_bytes(i64)});
  all.push_back({"zeros", Bytes(100000, 0)});
  all.push_back({"random bytes", random});
  for (Input& in : all) in.data.resize(in.data.size() / element_size * element_size);
  return all;
}

// ---- the checks ---------------------------------------------------------------------

// `c` encodes `data` within its bound and decodes it back; returns the encoding
// for the caller's own checks of it.
inline Bytes check_round_trip(const stowage::Codec& c, const Bytes& data) {
  Bytes packed = encode(c, data);
  CHECK(packed.size() <= c.bound(data.size()));
  CHECK(decode(c, packed, data.size()) == data);
  return packed;
}

// Decoding into a buffer of exactly the decoded size fills it and says so;
// one byte less is CORRUPT naming the codec; neither writes past the capacity.
inline void check_exact_buffer(const stowage::Codec& c, const Bytes& data, const std::string& id) {
  const Bytes packed = encode(c, data);
  for (size_t capacity : {data.size(), data.size() - (data.empty() ? 0 : 1)}) {
    CAPTURE(capacity);
    Bytes out(capacity + 64, 0xA5);  // guard bytes after the capacity
    size_t got = 0;
    Failure f =
        failure_of([&] { got = c.decode(packed.data(), packed.size(), out.data(), capacity); });
    for (size_t i = capacity; i < out.size(); ++i)
      REQUIRE_MESSAGE(out[i] == 0xA5, "decode wrote past its capacity");
    if (capacity == data.size()) {
      CHECK_MESSAGE(f.code == stowage::ErrorCode::ok, f.message);
      CHECK(got == data.size());
      CHECK(Bytes(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(capacity)) == data);
    } else {
      CHECK_MESSAGE(f.code == stowage::ErrorCode::corrupt, f.message);
      CHECK_MESSAGE(f.message.find(id) != std::string::npos, f.message);
    }
  }
}

// Every prefix of a payload decodes to an error, never a crash or a result.
inline void check_every_truncation_fails(const stowage::Codec& c, const Bytes& payload, size_t size,
                                         const std::string& id) {
  size_t step = payload.size() > 4000 ? payload.size() / 997 : 1;
  for (size_t cut = 0; cut < payload.size(); cut += step) {
    Bytes prefix(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(cut));
    CAPTURE(cut);
    Failure f = failure_of([&] { decode(c, prefix, size); });
    CHECK(f.code == stowage::ErrorCode::corrupt);
    CHECK_MESSAGE(f.message.find(id) != std::string::npos, f.message);
  }
}

// Flipping any one byte never crashes: the result is CORRUPT (UNSUPPORTED
// too if `versioned`) naming the codec, or exactly `original.size()` bytes,
// and those are the original when the codec is checksummed (a check covers
// every byte that decoding reads).
inline void check_byte_flips_are_safe(const stowage::Codec& c, const Bytes& payload,
                                      const Bytes& original, bool checksummed = false,
                                      const std::string& id = {}, bool versioned = false) {
  for (size_t i = 0; i < payload.size(); i += 1 + payload.size() / 400) {
    Bytes bad = payload;
    bad[i] ^= 0x5a;
    CAPTURE(i);
    Bytes out;
    Failure f = failure_of([&] { out = decode(c, bad, original.size()); });
    if (f.code != stowage::ErrorCode::ok) {
      CHECK_MESSAGE((f.code == stowage::ErrorCode::corrupt ||
                     (versioned && f.code == stowage::ErrorCode::unsupported)),
                    f.message);
      if (!id.empty()) CHECK_MESSAGE(f.message.find(id) != std::string::npos, f.message);
    } else if (checksummed) {
      CHECK_MESSAGE(out == original, "a flipped byte decoded to other values without an error");
    }
  }
}

// Our encoding of `data`, checked by the two damage checks above; returned for
// the caller's own damage checks of it.
inline Bytes check_damaged_encodings_fail(const stowage::Codec& c, const Bytes& data,
                                          const std::string& id, bool checksummed = false,
                                          bool versioned = false) {
  Bytes packed = encode(c, data);
  check_every_truncation_fails(c, packed, data.size(), id);
  check_byte_flips_are_safe(c, packed, data, checksummed, id, versioned);
  return packed;
}

// Random bytes never crash and never run past the capacity: CORRUPT (or, if
// `versioned`, UNSUPPORTED: a header naming a version the codec does not
// read) naming the codec, or, for a codec with no checksum, at most `size` bytes.
inline void check_garbage_is_refused(const stowage::Codec& c, const std::string& id,
                                     bool checksummed, bool versioned = false) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    Bytes garbage(1 + rng() % 300);
    for (uint8_t& b : garbage) b = static_cast<uint8_t>(rng());
    const size_t size = trial % 2 ? garbage.size() : 1000;
    CAPTURE(trial);
    Bytes out(size + 64, 0xA5);
    size_t got = 0;
    Failure f =
        failure_of([&] { got = c.decode(garbage.data(), garbage.size(), out.data(), size); });
    for (size_t i = size; i < out.size(); ++i)
      REQUIRE_MESSAGE(out[i] == 0xA5, "decode wrote past its capacity");
    if (f.code == stowage::ErrorCode::ok) {
      CHECK_MESSAGE(!checksummed, "a checksummed codec decoded random bytes");
      CHECK(got <= size);
      continue;
    }
    CHECK_MESSAGE((f.code == stowage::ErrorCode::corrupt ||
                   (versioned && f.code == stowage::ErrorCode::unsupported)),
                  f.message);
    CHECK_MESSAGE(f.message.find(id) != std::string::npos, f.message);
  }
  Failure empty = failure_of([&] { decode(c, {}, 100); });  // nothing where 100 bytes were written
  CHECK_MESSAGE(empty.code == stowage::ErrorCode::corrupt, empty.message);
}

// Encoding into a buffer too small for the result is INVALID_ARGUMENT, its
// message contains `words` (the codec id, say), and it leaves nothing behind
// that changes the next encoding.
inline void check_small_output_buffer(const stowage::Codec& c, const Bytes& data,
                                      const std::string& words = "too small") {
  const Bytes expected = encode(c, data);
  REQUIRE(!expected.empty());
  for (size_t capacity : {size_t{0}, std::min<size_t>(8, expected.size() - 1), expected.size() / 2,
                          expected.size() - 1}) {
    CAPTURE(capacity);
    Bytes out(capacity);
    Failure f = failure_of([&] { c.encode(data.data(), data.size(), out.data(), out.size()); });
    CHECK(f.code == stowage::ErrorCode::invalid_argument);
    CHECK_MESSAGE(f.message.find(words) != std::string::npos, f.message);
    CHECK(encode(c, data) == expected);
  }
}

// Runs fn(t) for t in [0, threads) on threads released together, so that
// their calls overlap rather than follow each other as the threads start.
template <class F>
void run_together(int threads, F&& fn) {
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      fn(t);
    });
  for (std::thread& th : pool) th.join();
}

// One instance used from several threads at once gives what one thread
// gives, input by input (each thread goes through them in its own order).
inline void check_thread_safe(const stowage::Codec& c, const std::vector<Bytes>& data,
                              int threads = 4, int rounds = 8) {
  REQUIRE(c.thread_safe());
  std::vector<Bytes> expected;
  for (const Bytes& d : data) expected.push_back(encode(c, d));
  std::vector<int> failures(static_cast<size_t>(threads), 0);
  run_together(threads, [&](int t) {
    for (int round = 0; round < rounds; ++round)
      for (size_t k = 0; k < data.size(); ++k) {
        size_t i = (k + static_cast<size_t>(t)) % data.size();
        try {
          failures[t] += encode(c, data[i]) != expected[i] ||
                         decode(c, expected[i], data[i].size()) != data[i];
        } catch (const std::exception&) {
          ++failures[t];
        }
      }
  });
  CHECK(failures == std::vector<int>(static_cast<size_t>(threads), 0));
}
inline void check_thread_safe(const stowage::Codec& c, const Bytes& data) {
  check_thread_safe(c, std::vector<Bytes>{data});
}

// Configs the plugin must refuse, made from the parameters it declares
// (its params schema): each integer one past its range, and a value of the
// wrong JSON type; each string enum with a value not in it. Plus spec's own.
inline std::vector<BadConfig> bad_configs(const Spec& s) {
  std::vector<BadConfig> out = s.bad_configs;
  const stowage::json config = stowage::json::parse(s.config);
  const std::string id = config.at("type").get<std::string>();
  std::optional<stowage::PluginInfo> info = registry_of(s).find("codec", id);
  REQUIRE_MESSAGE(info.has_value(), ("no codec plugin " + id));
  if (info->params_schema.empty()) return out;
  const stowage::json schema = stowage::json::parse(info->params_schema);
  for (const auto& item : schema.items()) {
    const std::string name = item.key();
    const stowage::json& p = item.value();
    if (std::find(s.ignored_parameters.begin(), s.ignored_parameters.end(), name) !=
        s.ignored_parameters.end())
      continue;
    auto with = [&](stowage::json value) {
      stowage::json c = config;
      c[name] = std::move(value);
      out.push_back({c.dump(), name});
    };
    const std::string type = p.value("type", "");
    if (type == "integer") {
      if (p.contains("max") && p["max"].get<int64_t>() < std::numeric_limits<int64_t>::max())
        with(p["max"].get<int64_t>() + 1);
      if (p.contains("min") && p["min"].get<int64_t>() > std::numeric_limits<int64_t>::min())
        with(p["min"].get<int64_t>() - 1);
      with("1");
    } else if (type == "boolean") {
      with("yes");
    } else if (type == "string") {
      with(1);
      if (p.contains("enum")) with("no such " + name);
    }
  }
  return out;
}

// Each bad config is INVALID_ARGUMENT and its message names the parameter.
inline void check_invalid_configs(const Spec& s) {
  for (const BadConfig& bad : bad_configs(s)) {
    CAPTURE(bad.config);
    Failure f = failure_of([&] { registry_of(s).codec(bad.config); });
    CHECK_MESSAGE(f.code == stowage::ErrorCode::invalid_argument, f.message);
    CHECK_MESSAGE(f.message.find(bad.parameter) != std::string::npos, f.message);
  }
}

// Several threads on one config at once: four share one instance, the others
// each make their own from the config meanwhile; every thread gives, input by
// input, what one thread gives.
inline void check_concurrent_use(const Spec& spec, const std::vector<Bytes>& data, int threads = 6,
                                 int rounds = 3) {
  const stowage::Codec shared = codec_of(spec);
  std::vector<Bytes> expected;
  for (const Bytes& d : data) expected.push_back(encode(shared, d));
  std::vector<int> failures(static_cast<size_t>(threads), 0);
  run_together(threads, [&](int t) {
    try {
      const stowage::Codec c = t < 4 ? shared : codec_of(spec);
      for (int round = 0; round < rounds; ++round)
        for (size_t k = 0; k < data.size(); ++k) {
          size_t i = (k + static_cast<size_t>(t)) % data.size();
          failures[t] += encode(c, data[i]) != expected[i] ||
                         decode(c, expected[i], data[i].size()) != data[i];
        }
    } catch (const std::exception&) {
      ++failures[t];
    }
  });
  CHECK(failures == std::vector<int>(static_cast<size_t>(threads), 0));
}

// Every check above on the codec `spec` describes.
inline void check_codec(const Spec& spec) {
  CAPTURE(spec.config);
  stowage::Codec c = codec_of(spec);
  REQUIRE(c.thread_safe());
  std::vector<Bytes> data;
  for (const Input& in : inputs(spec.element_size)) {
    CAPTURE(in.name);
    check_round_trip(c, in.data);
    check_exact_buffer(c, in.data, spec.id);
    // The damage checks decode each payload ~1,400 times: mid-sized inputs only.
    if (in.data.size() > 1000 && in.data.size() <= 50000)
      check_damaged_encodings_fail(c, in.data, spec.id, spec.checksummed, spec.versioned);
    if (in.data.size() <= 100000) data.push_back(in.data);
  }
  check_garbage_is_refused(c, spec.id, spec.checksummed, spec.versioned);
  check_small_output_buffer(c, inputs(spec.element_size)[2].data, spec.id);
  check_invalid_configs(spec);
  check_concurrent_use(spec, data);
}

}  // namespace codec_checks
