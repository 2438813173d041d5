// The datadings format plugin, through the stowage C++ API, against the
// fixtures written by the real datadings/simplebloom/msgpack-numpy and
// against Debian's python3-msgpack + python3-msgpack-numpy.
#include "expected_value.hpp"

#include <test_support.hpp>

#include <stowage/plugin_util.hpp>

#include <openssl/evp.h>

#include <doctest/doctest.h>

#include <functional>
#include <random>
#include <set>
#include <thread>

namespace {

using stowage::ErrorCode;
using stowage::json;
using stowage::Mode;
using stowage::Records;
using stowage::Store;
namespace fs = std::filesystem;

const char* const suffixes[] = {"", ".offsets", ".keys", ".key_hashes", ".filter", ".md5"};

fs::path fixture(const std::string& name) {
  return test::fixtures() / "datadings" / (name + ".msgpack");
}
json expected(const std::string& name) {
  return test::read_json(fixture(name).string() + ".expected.json");
}
std::string expected_bin(const std::string& name) {
  return test::read_file(fixture(name).string() + ".expected.bin");
}

std::string md5_hex(const std::string& bytes) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), d, &n, EVP_md5(), nullptr);
  return dd_test::hex(std::string(reinterpret_cast<char*>(d), n));
}

std::vector<std::string> read_all(const Records& r) {
  std::vector<std::string> out;
  r.read_range(0, r.size(), [&](std::string_view s) { out.emplace_back(s); });
  return out;
}

// Copies a fixture's files under `dir`, keeping their names.
fs::path copy_fixture(const std::string& name, const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(test::fixtures() / "datadings")) {
    std::string file = entry.path().filename().string();
    if (file.rfind(name + ".msgpack", 0) == 0 && file.find(".expected.") == std::string::npos) {
      fs::copy_file(entry.path(), dir / file);
      fs::permissions(dir / file, fs::perms::owner_write, fs::perm_options::add);
    }
  }
  return dir / (name + ".msgpack");
}

// Runs fn and returns the stowage::Error it throws.
template <class Fn>
stowage::Error error_of(Fn&& fn) {
  try {
    fn();
  } catch (const stowage::Error& e) {
    return e;
  }
  FAIL("no error was thrown");
  return stowage::Error(ErrorCode::ok, "");
}

// Every sample, key, lookup and decoded value of a fixture.
void check_fixture(const std::string& name) {
  INFO("fixture " << name);
  json e = expected(name);
  std::string bin = expected_bin(name);
  std::string data = test::read_file(fixture(name));
  Store store = Store::open(fixture(name).string());
  CHECK(store.format() == "datadings");
  CHECK(store.describe().count == e["num_samples"].get<uint64_t>());
  Records r = store.records();
  REQUIRE(r.size() == e["num_samples"].get<uint64_t>());

  std::vector<std::string> samples = read_all(r);
  REQUIRE(samples.size() == r.size());
  for (const json& s : e["samples"]) {
    uint64_t i = s["index"].get<uint64_t>();
    INFO("sample " << i);
    CHECK(samples[i] == data.substr(s["offset"].get<size_t>(), s["length"].get<size_t>()));
    CHECK(md5_hex(samples[i]) == s["raw_md5"].get<std::string>());
    CHECK(r.read(i) == samples[i]);
    CHECK(r.key(i) == s["key"].get<std::string>());
    CHECK(r.find(s["key"].get<std::string>()) == std::optional<uint64_t>(i));
    CHECK(r.contains(s["key"].get<std::string>()));
    dd_test::check_value(stowage::sample::decode(samples[i]), s["value"], bin,
                         name + "#" + std::to_string(i));
  }
  for (const json& p : e["lookups"]["present"])
    CHECK(r.find(p["key"].get<std::string>()) ==
          std::optional<uint64_t>(p["index"].get<uint64_t>()));
  bool legacy = e["index_style"] == "legacy";
  for (const json& a : e["lookups"]["absent"]) {
    std::string key = a["key"].get<std::string>();
    INFO("absent key " << key);
    CHECK_FALSE(r.find(key).has_value());
    CHECK_FALSE(r.contains(key));
    json hash = store.command("", "key_hash", {{"key", key}});
    CHECK(hash["hash"] == a["hash_hex"]);
    json filter = store.command("", "filter_contains", {{"key", key}});
    if (legacy)
      CHECK(filter["maybe"].is_null());
    else
      CHECK(filter["maybe"] == a["bloom_maybe"]);
  }
  // The batched contains gives every sample key and absent key (Bloom false
  // positives included) the answer the fixture spells out, in order.
  std::vector<std::string> keys;
  std::vector<bool> expected;
  for (const json& s : e["samples"])
    keys.push_back(s["key"].get<std::string>()), expected.push_back(true);
  for (const json& a : e["lookups"]["absent"])
    keys.push_back(a["key"].get<std::string>()), expected.push_back(false);
  CHECK(r.contains(std::vector<std::string_view>(keys.begin(), keys.end())) == expected);
  CHECK(r.contains(std::vector<std::string_view>{}).empty());
  if (!legacy) {
    json hash = store.command("", "key_hash", {{"key", "x"}});
    CHECK(hash["salt"] == e["key_hashes"]["salt_hex"]);
  }
  json verify = store.command("", "verify");
  CHECK(verify["ok"] == true);
  CHECK(verify["files"].size() == e["md5_file_lines"].size());
}

// Writes `samples` as a new dataset at `path`.
void write_dataset(const fs::path& path, const std::vector<std::string>& samples) {
  Store out = Store::open(path.string(), Mode::truncate, "datadings");
  out.create("", {{"kind", "records"}});
  out.records().append(samples);
  out.close();
}

}  // namespace

TEST_CASE("every fixture reads equal to its expected json and bin") {
  for (const char* name : {"basic", "dtypes", "many", "legacy", "exotic"}) check_fixture(name);
}

TEST_CASE("the many fixture's filter has datadings' parameters and false positives") {
  json e = expected("many");
  CHECK(e["filter"]["num_bits"] == 50000);
  CHECK(e["filter"]["num_hashes"] == 12);
  Store store = Store::open(fixture("many").string());
  int false_positives = 0;
  for (const json& a : e["lookups"]["absent"]) {
    bool maybe = store.command("", "filter_contains", {{"key", a["key"]}})["maybe"].get<bool>();
    false_positives += maybe;
    CHECK_FALSE(store.records().contains(a["key"].get<std::string>()));
  }
  CHECK(false_positives == 10);
}

TEST_CASE("sequential and random reads from many threads agree") {
  Store store = Store::open(fixture("many").string());
  Records r = store.records();
  std::string data = test::read_file(fixture("many"));
  json e = expected("many");
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = t; i < r.size(); i += 7) {
        const json& s = e["samples"][i];
        if (r.read(i) != data.substr(s["offset"].get<size_t>(), s["length"].get<size_t>()))
          ++mismatches;
        if (r.find(s["key"].get<std::string>()) != std::optional<uint64_t>(i)) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(mismatches == 0);
  std::vector<std::string> part;
  r.read_range(1234, 1240, [&](std::string_view s) { part.emplace_back(s); });
  REQUIRE(part.size() == 6);
  CHECK(part[5] == r.read(1239));
  // A read from inside a read's callback sees its own data.
  std::vector<std::string> outer, inner;
  r.read_range(10, 20, [&](std::string_view s) {
    inner.push_back(r.read(2999));
    outer.emplace_back(s);
  });
  CHECK(outer.size() == 10);
  CHECK(outer[0] == r.read(10));
  CHECK(outer[9] == r.read(19));
  CHECK(inner[9] == r.read(2999));
  CHECK(error_of([&] { r.read(3000); }).code() == ErrorCode::invalid_argument);
}

TEST_CASE("a dataset we write is byte-identical to datadings' for the same samples") {
  for (const char* name : {"basic", "dtypes", "many", "exotic"}) {
    INFO("fixture " << std::string(name));
    test::TempDir tmp;
    std::vector<std::string> samples = read_all(Store::open(fixture(name).string()).records());
    fs::path ours = tmp / (std::string(name) + ".msgpack");
    write_dataset(ours, samples);
    for (const char* suffix : suffixes) {
      INFO("file " << suffix);
      CHECK(test::read_file(ours.string() + suffix) ==
            test::read_file(fixture(name).string() + suffix));
    }
    // Nothing else: the temporary files were all renamed.
    CHECK(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()) == 6);
  }
}

TEST_CASE("a legacy dataset rewritten gets the new index with the same offsets") {
  test::TempDir tmp;
  std::vector<std::string> samples = read_all(Store::open(fixture("legacy").string()).records());
  json e = expected("legacy");
  fs::path ours = tmp / "legacy.msgpack";
  write_dataset(ours, samples);
  CHECK(test::read_file(ours) == test::read_file(fixture("legacy")));
  std::string offsets = test::read_file(ours.string() + ".offsets");
  REQUIRE(offsets.size() == 8 * e["offsets"].size());
  for (size_t i = 0; i < e["offsets"].size(); ++i)
    CHECK(stowage::sdk::load_be<uint64_t>(offsets.data() + 8 * i) ==
          e["offsets"][i].get<uint64_t>());
  Store back = Store::open(ours.string());
  CHECK(back.describe_json()["index"] == "new");
  CHECK(back.records().find("legacy-c") == std::optional<uint64_t>(2));
}

TEST_CASE("large samples cross the write and read batch boundaries intact") {
  test::TempDir tmp;
  std::vector<std::string> samples;
  for (int i = 0; i < 40; ++i) {
    // {"key": "big/i", "blob": <bin of 300 KB, or 5 MB for sample 7>}
    std::string blob(i == 7 ? (5u << 20) : 300000u, static_cast<char>(i));
    msgpack::sbuffer b;
    msgpack::packer<msgpack::sbuffer> p(b);
    p.pack_map(2);
    p.pack(std::string("key"));
    p.pack("big/" + std::to_string(i));
    p.pack(std::string("blob"));
    p.pack_bin(static_cast<uint32_t>(blob.size()));
    p.pack_bin_body(blob.data(), static_cast<uint32_t>(blob.size()));
    samples.emplace_back(b.data(), b.size());
  }
  fs::path path = tmp / "big.msgpack";
  write_dataset(path, samples);
  Store store = Store::open(path.string());
  CHECK(read_all(store.records()) == samples);
  CHECK(store.records().read(7) == samples[7]);
  CHECK(store.command("", "verify")["ok"] == true);
}

TEST_CASE("empty and one-sample datasets are written like datadings (filter for n=2)") {
  test::TempDir tmp;
  write_dataset(tmp / "empty.msgpack", {});
  CHECK(test::read_file(tmp / "empty.msgpack").empty());
  CHECK(test::read_file(tmp / "empty.msgpack.offsets") == std::string(8, '\0'));
  CHECK(test::read_file(tmp / "empty.msgpack.keys") == "\x90");
  CHECK(test::read_file(tmp / "empty.msgpack.key_hashes").size() == 8);
  CHECK(test::read_file(tmp / "empty.msgpack.filter").size() == 33);
  Store empty = Store::open((tmp / "empty.msgpack").string());
  CHECK(empty.records().size() == 0);
  CHECK(read_all(empty.records()).empty());
  CHECK_FALSE(empty.records().contains("x"));
  CHECK(empty.command("", "verify")["ok"] == true);

  write_dataset(tmp / "one.msgpack", {std::string("\x81\xa3key\xa3one", 9)});
  CHECK(test::read_file(tmp / "one.msgpack.filter").size() == 33);  // sized for n = 2
  Records one = Store::open((tmp / "one.msgpack").string()).records();
  CHECK(one.size() == 1);
  CHECK(one.contains("one"));
  CHECK(one.key(0) == "one");

  // Missing directories are made, as every format on the storage layer does;
  // a file where a directory should be is an error naming the dataset.
  write_dataset(tmp / "new" / "dir" / "one.msgpack", {std::string("\x81\xa3key\xa3one", 9)});
  CHECK(Store::open((tmp / "new" / "dir" / "one.msgpack").string()).records().key(0) == "one");
  test::write_file(tmp / "plain", "x");
  stowage::Error e = error_of([&] { write_dataset(tmp / "plain" / "such" / "dir.msgpack", {}); });
  CHECK(e.code() == ErrorCode::io);
  CHECK(std::string(e.what()).find("dir.msgpack: cannot create the dataset") != std::string::npos);
}

TEST_CASE("python msgpack + msgpack_numpy decode every sample we write to the same values") {
  test::TempDir tmp;
  // The peer packs samples of every kind; we write them as a dataset; the
  // peer then reads our files the way datadings does and compares.
  std::string make = R"(
import sys, json, msgpack, numpy as np, msgpack_numpy as m
rng = np.random.default_rng(7)
samples = []
for i in range(40):
    s = {"key": "sample/%04d" % i, "label": i * 3 - 50, "score": i / 7.0,
         "name": "n\u00e9-%d" % i, "raw": bytes(range(i % 256)),
         "image": rng.integers(0, 255, size=(4, 5, 3), dtype=np.uint8),
         "feat": rng.standard_normal(i % 5 + 1).astype(["<f4", ">f8", "<i2", ">u4", "|b1"][i % 5]),
         "nested": {"list": [1, None, True, 2.5, "x"], "c": complex(i, -0.5), "s": np.float32(i)}}
    samples.append(s)
samples.append({"key": "x" * 300, "big": np.arange(70000, dtype="<i4").reshape(100, 700)})
with open(sys.argv[1], "wb") as f:
    for s in samples:
        f.write(msgpack.packb(s, default=m.encode))
json.dump([len(msgpack.packb(s, default=m.encode)) for s in samples], open(sys.argv[2], "w"))
)";
  fs::path packed = tmp / "samples.bin", sizes_json = tmp / "sizes.json";
  auto made =
      test::run_python(make, test::quote(packed.string()) + " " + test::quote(sizes_json.string()));
  REQUIRE_MESSAGE(made.status == 0, made.output);
  std::string all = test::read_file(packed);
  std::vector<std::string> samples;
  size_t at = 0;
  for (const json& n : test::read_json(sizes_json)) {
    samples.push_back(all.substr(at, n.get<size_t>()));
    at += n.get<size_t>();
  }
  fs::path ours = tmp / "peer.msgpack";
  write_dataset(ours, samples);

  std::string check = R"(
import sys, hashlib, struct, math, msgpack, numpy as np, msgpack_numpy as m
path = sys.argv[1]
data = open(path, "rb").read()
raw = open(path + ".offsets", "rb").read()
n = len(raw) // 8 - 1
off = struct.unpack(">%dQ" % (n + 1), raw)
keys = msgpack.unpackb(open(path + ".keys", "rb").read(), raw=False)
kh = open(path + ".key_hashes", "rb").read()
salt = kh[:8]
assert salt == hashlib.blake2s(b"0").digest()[:8]
flt = open(path + ".filter", "rb").read()
magic, size, ne, p = struct.unpack_from(">8sQQd", flt)
assert magic == b"SIMPBLOO" and size == len(flt) and ne == max(2, n) and p == 1.0 / ne
bits = 8 * (size - 32)
assert bits == math.ceil(ne * math.log(p) / -0.4804530139182015 / 8) * 8
k = round(bits / ne * 0.6931471805599453)
lines = open(path + ".md5").read().splitlines()
names = [path.split("/")[-1] + s for s in ["", ".offsets", ".keys", ".key_hashes", ".filter"]]
assert [l.split("  ")[1] for l in lines] == names
for l, name in zip(lines, names):
    assert l.split("  ")[0] == hashlib.md5(open(path[:-len(names[0])] + name, "rb").read()).hexdigest()
ref = open(sys.argv[2], "rb").read()
ru = msgpack.Unpacker(raw=False, strict_map_key=False, object_hook=m.decode)
ru.feed(ref)
def same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[x], b[x]) for x in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) == type(b) and a == b
count = 0
for i, want in enumerate(ru):
    got = msgpack.unpackb(data[off[i]:off[i + 1]], raw=False, strict_map_key=False, object_hook=m.decode)
    assert same(got, want), i
    assert keys[i] == got["key"]
    h = hashlib.blake2s(keys[i].encode(), salt=salt).digest()[:8]
    assert kh[8 + 8 * i: 16 + 8 * i] == h
    d = hashlib.blake2s(keys[i].encode()).digest()
    h1, h2 = struct.unpack(">QQ", d[:16])
    for j in range(k):
        b = ((h1 + j * h2) % 2**64) % bits
        assert flt[32 + (b >> 3)] >> (b & 7) & 1
    count += 1
assert count == n and off[-1] == len(data)
print("OK", count)
)";
  auto checked =
      test::run_python(check, test::quote(ours.string()) + " " + test::quote(packed.string()));
  CHECK_MESSAGE(checked.status == 0, checked.output);
  CHECK(checked.output.find("OK 41") != std::string::npos);

  // And our decoder reads what the peer wrote.
  Records r = Store::open(ours.string()).records();
  stowage::sample::Value last = stowage::sample::decode(r.read(40));
  CHECK(last["key"].as_string() == std::string(300, 'x'));
  std::vector<int32_t> big = last["big"].as_ndarray().values<int32_t>();
  CHECK(big.size() == 70000);
  CHECK(big[69999] == 69999);
  stowage::sample::Value s3 = stowage::sample::decode(r.read(3));
  CHECK(s3["feat"].as_ndarray().dtype == ">u4");
  CHECK(s3["nested"]["c"].as_complex() == std::complex<double>(3, -0.5));
  CHECK(s3["nested"]["s"].as_ndarray().values<float>().at(0) == 3.0f);
  CHECK(s3["name"].as_string() == "n\xc3\xa9-3");
}

TEST_CASE("writes refuse duplicate, reserved and missing keys, and keep what was accepted") {
  test::TempDir tmp;
  // {"key": key, extra_key: 1}, extra_key as str or (bin_key) as bin.
  auto sample = [](const std::string& key, const std::string& extra_key = "v",
                   bool bin_key = false) {
    msgpack::sbuffer b;
    msgpack::packer<msgpack::sbuffer> p(b);
    p.pack_map(2);
    p.pack(std::string("key"));
    p.pack(key);
    if (bin_key) {
      p.pack_bin(static_cast<uint32_t>(extra_key.size()));
      p.pack_bin_body(extra_key.data(), static_cast<uint32_t>(extra_key.size()));
    } else {
      p.pack(extra_key);
    }
    p.pack(1);
    return std::string(b.data(), b.size());
  };
  fs::path path = tmp / "w.msgpack";
  Store out = Store::open(path.string(), Mode::truncate, "datadings");
  out.create("", {{"kind", "records"}});
  Records r = out.records();
  r.append({sample("a"), sample("b")});
  // Nothing appears under the final names before close().
  CHECK_FALSE(fs::exists(path));

  auto dup = error_of([&] { r.append({sample("c"), sample("a")}); });
  CHECK(dup.code() == ErrorCode::invalid_argument);
  CHECK(std::string(dup.what()).find("duplicate key") != std::string::npos);
  CHECK(std::string(dup.what()).find("'a'") != std::string::npos);
  CHECK(std::string(dup.what()).find(path.string()) != std::string::npos);
  auto dup_in_batch = error_of([&] { r.append({sample("d"), sample("d")}); });
  CHECK(std::string(dup_in_batch.what()).find("duplicate key") != std::string::npos);
  // bin "nd"/"complex" would make msgpack-numpy decode the whole sample
  // away; str ones are plain data (the basic fixture has a str "complex").
  for (const char* reserved : {"nd", "complex"}) {
    auto e = error_of([&] { r.append({sample("e", reserved, true)}); });
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("reserved") != std::string::npos);
  }
  auto two_keys = sample("e", "key");
  CHECK(std::string(error_of([&] { r.append({two_keys}); }).what()).find("two \"key\"") !=
        std::string::npos);
  msgpack::sbuffer no_key;
  msgpack::pack(no_key, std::map<std::string, int>{{"label", 1}});
  CHECK(std::string(error_of([&] { r.append({std::string(no_key.data(), no_key.size())}); }).what())
            .find("no \"key\"") != std::string::npos);
  CHECK(std::string(error_of([&] { r.append({std::string("\x93\x01\x02\x03")}); }).what())
            .find("not a msgpack map") != std::string::npos);
  std::string truncated = sample("f");
  truncated.pop_back();
  CHECK(std::string(error_of([&] { r.append({truncated}); }).what()).find("truncated") !=
        std::string::npos);
  CHECK(r.size() == 2);
  CHECK(r.find("b") == std::optional<uint64_t>(1));
  r.append({sample("c"), sample("s", "nd")});
  out.close();

  Records back = Store::open(path.string()).records();
  CHECK(back.size() == 4);
  CHECK(back.key(2) == "c");
  CHECK_FALSE(back.contains("d"));
  CHECK(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()) == 6);
  auto append_to_existing = error_of([&] { back.append({sample("z")}); });
  CHECK(append_to_existing.code() == ErrorCode::unsupported);
}

stowage_store_handle abandoned_store;  // extern linkage: the store to it is never optimized out

TEST_CASE("a write that never reaches close() leaves no dataset behind") {
  test::TempDir tmp;
  fs::path path = tmp / "abandoned.msgpack";
  stowage::Registry& registry = stowage::Registry::global();
  auto vt = static_cast<const stowage_format_vtable*>(registry.load("format", "datadings")->vtable);
  stowage_store_handle h = nullptr;
  stowage_error err{};
  std::string p = path.string();
  REQUIRE(vt->open(registry.host(), p.data(), p.size(), STOWAGE_MODE_TRUNCATE, "{}", 2, &h, &err) ==
          STOWAGE_OK);
  std::string s = "\x81\xa3key\xa1k";
  const void* recs[] = {s.data()};
  uint64_t sizes[] = {s.size()};
  stowage_node node{sizeof(stowage_node), 0, nullptr, nullptr};
  REQUIRE(vt->open_node(h, "", 0, &node, &err) == STOWAGE_OK);
  REQUIRE(node.kind == STOWAGE_NODE_RECORDS);
  auto records = static_cast<const stowage_records_vtable*>(node.table);
  REQUIRE(records->append(node.handle, 1, recs, sizes, &err) == STOWAGE_OK);
  vt->close_node(h, node.handle);
  // Only the hidden temporary data file exists; no name of the dataset.
  for (const char* suffix : suffixes) CHECK_FALSE(fs::exists(p + suffix));
  // Deliberately never closed; a global keeps the abandoned store reachable,
  // so the leak checker does not count it as lost.
  abandoned_store = h;
}

TEST_CASE("malformed datasets are errors naming the file and the fault") {
  test::TempDir tmp;
  auto expect_corrupt = [](const fs::path& path, const std::string& file_part,
                           const std::string& what, auto&& action) {
    INFO(what);
    stowage::Error e = error_of([&] { action(Store::open(path.string()).records()); });
    CHECK(e.code() == ErrorCode::corrupt);
    CHECK_MESSAGE(std::string(e.what()).find(file_part) != std::string::npos, e.what());
    CHECK_MESSAGE(std::string(e.what()).find(what) != std::string::npos, e.what());
  };
  auto read_everything = [](const Records& r) { read_all(r); };
  auto patch_offset = [](const fs::path& path, size_t i, uint64_t value) {
    std::string o = test::read_file(path.string() + ".offsets");
    stowage::sdk::store_be<uint64_t>(o.data() + 8 * i, value);
    test::write_file(path.string() + ".offsets", o);
  };

  SUBCASE("offsets not increasing") {
    fs::path p = copy_fixture("basic", tmp.path());
    patch_offset(p, 2, 100);
    expect_corrupt(p, "basic.msgpack.offsets", "not increasing", read_everything);
  }
  SUBCASE("offsets past the end of the data file") {
    fs::path p = copy_fixture("basic", tmp.path());
    patch_offset(p, 6, 5000);
    expect_corrupt(p, "basic.msgpack.offsets", "past the end", read_everything);
  }
  SUBCASE("data file shorter than the offsets say") {
    fs::path p = copy_fixture("basic", tmp.path());
    fs::resize_file(p, 1300);
    expect_corrupt(p, "basic.msgpack.offsets", "past the end", read_everything);
  }
  SUBCASE("truncated sample") {
    // Sample 2 loses its last 5 bytes; the offsets after it are moved so
    // that they stay consistent with the file.
    fs::path p = copy_fixture("basic", tmp.path());
    json e = expected("basic");
    std::string data = test::read_file(p);
    uint64_t end2 = e["offsets"][3].get<uint64_t>();
    data.erase(end2 - 5, 5);
    test::write_file(p, data);
    for (size_t i = 3; i < e["offsets"].size(); ++i)
      patch_offset(p, i, e["offsets"][i].get<uint64_t>() - 5);
    expect_corrupt(p, "basic.msgpack", "sample 2", [](const Records& r) { r.read(2); });
    expect_corrupt(p, "basic.msgpack", "truncated", read_everything);
    CHECK(Store::open(p.string()).records().read(1).size() == 179);  // others still read
  }
  SUBCASE("keys count mismatch") {
    fs::path p = copy_fixture("basic", tmp.path());
    std::string keys = test::read_file(p.string() + ".keys");
    REQUIRE(static_cast<unsigned char>(keys[0]) == 0x96);
    keys[0] = '\x95';
    keys.resize(keys.size() - 7);  // drop "nested" (fixstr: 1 + 6 bytes)
    test::write_file(p.string() + ".keys", keys);
    expect_corrupt(p, "basic.msgpack.offsets", "keys count mismatch", read_everything);
    expect_corrupt(p, "basic.msgpack.key_hashes", "keys count mismatch",
                   [](const Records& r) { r.find("misc"); });
  }
  SUBCASE("keys file that is not an array of str") {
    fs::path p = copy_fixture("basic", tmp.path());
    std::string keys = test::read_file(p.string() + ".keys");
    keys[1] = '\x07';  // the first key becomes the integer 7
    test::write_file(p.string() + ".keys", keys);
    expect_corrupt(p, "basic.msgpack.keys", "non-string key", [](const Records& r) { r.key(0); });
  }
  SUBCASE("keys header declaring more keys than the file can hold") {
    fs::path p = copy_fixture("basic", tmp.path());
    std::string keys = test::read_file(p.string() + ".keys");
    test::write_file(p.string() + ".keys", std::string("\xdd\x7f\xff\xff\xff", 5) + keys.substr(1));
    expect_corrupt(p, "basic.msgpack.keys", "declares 2147483647 keys",
                   [](const Records& r) { r.size(); });
  }
  SUBCASE("bad filter header") {
    fs::path p = copy_fixture("basic", tmp.path());
    std::string f = test::read_file(p.string() + ".filter");
    std::string bad_magic = f;
    bad_magic[0] = 'X';
    test::write_file(p.string() + ".filter", bad_magic);
    expect_corrupt(p, "basic.msgpack.filter", "magic",
                   [](const Records& r) { r.contains("misc"); });
    std::string bad_n = f;
    stowage::sdk::store_be<uint64_t>(bad_n.data() + 16, 7);  // 7 elements need more bits
    test::write_file(p.string() + ".filter", bad_n);
    expect_corrupt(p, "basic.msgpack.filter", "bits", [](const Records& r) { r.contains("misc"); });
    std::string bad_size = f;
    stowage::sdk::store_be<uint64_t>(bad_size.data() + 8, 99);
    test::write_file(p.string() + ".filter", bad_size);
    expect_corrupt(p, "basic.msgpack.filter", "99 bytes",
                   [](const Records& r) { r.contains("misc"); });
    test::write_file(p.string() + ".filter", f.substr(0, 20));
    expect_corrupt(p, "basic.msgpack.filter", "header",
                   [](const Records& r) { r.contains("misc"); });
  }
  SUBCASE("key hashes of the wrong size") {
    fs::path p = copy_fixture("basic", tmp.path());
    test::write_file(p.string() + ".key_hashes",
                     test::read_file(p.string() + ".key_hashes").substr(0, 40));
    expect_corrupt(p, "basic.msgpack.key_hashes", "keys count mismatch",
                   [](const Records& r) { r.find("misc"); });
  }
  SUBCASE("legacy index with decreasing offsets") {
    fs::path p = copy_fixture("legacy", tmp.path());
    std::string index = test::read_file(p.string() + ".index");
    size_t at = index.find("legacy-b");
    REQUIRE(at != std::string::npos);
    REQUIRE(static_cast<unsigned char>(index[at + 8]) == 86);  // positive fixint 86
    index[at + 8] = '\x00';
    test::write_file(p.string() + ".index", index);
    expect_corrupt(p, "legacy.msgpack.index", "not increasing", read_everything);
  }
  SUBCASE("legacy index with a duplicate key") {
    fs::path p = copy_fixture("legacy", tmp.path());
    std::string index = test::read_file(p.string() + ".index");
    size_t at = index.find("legacy-e");
    REQUIRE(at != std::string::npos);
    index[at + 7] = 'd';  // the last key becomes "legacy-d" again
    test::write_file(p.string() + ".index", index);
    expect_corrupt(p, "legacy.msgpack.index", "have the same key 'legacy-d'",
                   [](const Records& r) { r.find("legacy-a"); });
  }
  SUBCASE("no index at all") {
    fs::path p = copy_fixture("basic", tmp.path());
    fs::remove(p.string() + ".offsets");
    stowage::Error e = error_of([&] { Store::open(p.string(), Mode::read, "datadings"); });
    CHECK(e.code() == ErrorCode::not_found);
    CHECK(std::string(e.what()).find("basic.msgpack.offsets") != std::string::npos);
  }
}

TEST_CASE("opening is lazy: each index file is read when first needed") {
  // Broken offsets and filter do not stop what does not need them.
  test::TempDir tmp;
  fs::path p = copy_fixture("basic", tmp.path());
  test::write_file(p.string() + ".offsets", "broken");
  test::write_file(p.string() + ".filter", "broken");
  Store store = Store::open(p.string());
  Records r = store.records();
  CHECK(r.size() == 6);
  CHECK(r.key(4) == "misc");
  CHECK(r.find("nested") == std::optional<uint64_t>(5));
  CHECK(error_of([&] { r.contains("misc"); }).code() == ErrorCode::corrupt);
  stowage::Error e = error_of([&] { r.read(0); });
  CHECK(e.code() == ErrorCode::corrupt);
  CHECK(std::string(e.what()).find("basic.msgpack.offsets") != std::string::npos);
  // A failed load is not remembered as done: fixing the file fixes the store.
  fs::copy_file(fixture("basic").string() + ".offsets", p.string() + ".offsets",
                fs::copy_options::overwrite_existing);
  CHECK(r.read(5) == read_all(Store::open(fixture("basic").string()).records())[5]);
}

TEST_CASE("randomly damaged datasets give errors, never crashes") {
  // Flips bytes in one file of a copy of `basic`, then uses every operation;
  // anything but a stowage::Error, or an sdk::Error from the sample decoder
  // (or a normal answer), fails the process.
  std::mt19937 rng(2024);
  int errors = 0;
  for (int round = 0; round < 300; ++round) {
    test::TempDir tmp;
    fs::path p = copy_fixture("basic", tmp.path());
    std::string victim = p.string() + suffixes[rng() % 5];
    std::string bytes = test::read_file(victim);
    for (int flips = 1 + rng() % 3; flips > 0 && !bytes.empty(); --flips)
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) bytes.resize(rng() % (bytes.size() + 1));
    test::write_file(victim, bytes);
    try {
      Store store = Store::open(p.string());
      Records r = store.records();
      for (const std::string& s : read_all(r)) {
        try {
          stowage::sample::decode(s);
        } catch (const stowage::sdk::Error&) {
          ++errors;
        }
      }
      for (uint64_t i = 0; i < r.size(); ++i) r.contains(r.key(i));
      r.find("absent");
      store.command("", "verify");
    } catch (const stowage::Error& e) {
      ++errors;
      CHECK(std::string(e.what()).find("basic.msgpack") != std::string::npos);
    }
  }
  CHECK(errors > 100);
}

TEST_CASE("verify names the file whose md5 differs") {
  test::TempDir tmp;
  fs::path p = copy_fixture("basic", tmp.path());
  std::string keys = test::read_file(p.string() + ".keys");
  keys[5] ^= 1;
  test::write_file(p.string() + ".keys", keys);
  fs::remove(p.string() + ".filter");
  Store store = Store::open(p.string());
  json v = store.command("", "verify");
  CHECK(v["ok"] == false);
  CHECK(v["differs"] == json::array({"basic.msgpack.keys", "basic.msgpack.filter"}));
  CHECK(v["message"].get<std::string>().find("basic.msgpack.keys") != std::string::npos);
  CHECK(v["files"][0]["ok"] == true);
  CHECK(v["files"][4]["error"] == "missing");
  // Without a filter, contains falls back to the hash table.
  CHECK(store.records().contains("misc"));
  CHECK_FALSE(store.records().contains("absent"));

  json legacy = Store::open(copy_fixture("legacy", tmp.path()).string()).command("", "verify");
  CHECK(legacy["ok"] == true);
  CHECK(legacy["files"].size() == 2);
}

TEST_CASE("the store is one record set at the root") {
  Store store = Store::open(fixture("basic").string());
  CHECK(store.list().empty());
  json d = store.describe_json();
  CHECK(d["kind"] == "records");
  CHECK(d["count"] == 6);
  CHECK(d["index"] == "new");
  CHECK(error_of([&] { store.describe("sub"); }).code() == ErrorCode::not_found);
  CHECK(error_of([&] { store.command("", "nonsense"); }).code() == ErrorCode::unsupported);
  auto scores = stowage::Registry::global().identify(fixture("basic").string());
  bool found = false;
  for (const auto& [id, score] : scores) found |= id == "datadings" && score == 100;
  CHECK(found);
}

TEST_CASE("samples read the same from the map and with pread (the \"mmap\" open option)") {
  for (const char* name : {"basic", "legacy", "many"}) {
    INFO(name);
    std::vector<std::string> mapped = read_all(
        Store::open(fixture(name).string(), Mode::read, "datadings", {{"mmap", true}}).records());
    Records r =
        Store::open(fixture(name).string(), Mode::read, "datadings", {{"mmap", false}}).records();
    CHECK(read_all(r) == mapped);
    CHECK(r.read(r.size() - 1) == mapped.back());
  }
  stowage::Error e = error_of(
      [] { Store::open(fixture("basic").string(), Mode::read, "datadings", {{"mmap", 1}}); });
  CHECK(e.code() == ErrorCode::invalid_argument);
  CHECK(std::string(e.what()).find("\"mmap\" must be true or false") != std::string::npos);
}

TEST_CASE("a data file cut short in place after opening is an error, never SIGBUS") {
  // As datadings' own writer rewrites a dataset: the same inode, truncated.
  // Through a live map, a read of the lost pages would kill the process.
  for (bool map : {true, false}) {
    INFO("mmap " << map);
    test::TempDir tmp;
    fs::path p = copy_fixture("dtypes", tmp.path());
    Store store = Store::open(p.string(), Mode::read, "datadings", {{"mmap", map}});
    Records r = store.records();
    std::vector<std::string> before = read_all(r);  // maps the file (mmap true)
    uint64_t keep = before[0].size() + before[1].size();
    REQUIRE(fs::file_size(p) - keep > 3 * 4096);  // whole pages are lost
    fs::resize_file(p, keep);
    CHECK(r.read(1) == before[1]);  // still inside the file
    for (auto read : {std::function<void()>([&] { r.read(r.size() - 1); }),
                      std::function<void()>([&] { read_all(r); })}) {
      stowage::Error e = error_of(read);
      CHECK(e.code() == ErrorCode::corrupt);
      std::string what = e.what();
      CHECK_MESSAGE(what.find("dtypes.msgpack: file is truncated") != std::string::npos, what);
    }
  }
}
