// crash_writer: the child process tests/crash kills. It writes one dataset
// through the public C++ API, as version V (0 = the "old" content, 1 = the
// "new" one), so that every value, name and attribute tells the versions
// apart:
//
//   crash_writer n5        CONTAINER V   dataset "vol" (created if missing), attribute "version"
//   crash_writer datg      PATH V        float64 matrix with row/col names
//   crash_writer bpcells   DIR V         CSC float64 sparse matrix with names
//   crash_writer daf-axes  REPO [1.1]    a repository with axes cell and gene only ([1,1] if asked)
//   crash_writer daf-vector REPO NAME    adds float64 vector vectors/cell/NAME to an existing
//   repository crash_writer daf       REPO V        dense node matrices/cell/gene/x in an existing
//   repository crash_writer daf-repo  REPO V        a whole repository (replaced): axes and that
//   node crash_writer datadings PATH V        keyed msgpack samples crash_writer npy       PATH V
//   a source array for stowage-convert
//
// Exit status 0 when the store was closed, 1 on an error (printed).
#include <stowage/stowage.hpp>

#include <cstdio>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

using stowage::json;
using stowage::Mode;
using stowage::Store;

namespace {

// Sizes: each full write takes roughly 50-200 ms on the shared 2-core machine.
constexpr uint64_t kN5Side = 768, kN5Chunk = 64;         // 144 chunks of uint16
constexpr uint64_t kDatgRows = 3000, kDatgCols = 400;    // 9.6 MB of float64
constexpr uint64_t kBpRows = 20000, kBpCols = 1500;      // ~1.5 M non-zeros
constexpr uint64_t kDafCells = 1500, kDafGenes = 800;    // 9.6 MB dense float64
constexpr uint64_t kSamples = 6000, kSampleBytes = 900;  // ~5.5 MB of records
constexpr uint64_t kNpyRows = 1024, kNpyCols = 1024;     // 2 MB of uint16

// A cheap 64-bit mix, so values look random (realistic compression) and
// differ between versions at every element.
uint64_t mix(uint64_t version, uint64_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (version + 1) * 0xD1B54A32D192ED03ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}
double value(uint64_t version, uint64_t i) {
  return double(mix(version, i) % 1000000) / 64.0 - 7000.0;
}
// Vector <name>'s element i (the test recomputes it): i / 2 plus the name's last byte.
double daf_vector_value(const std::string& name, uint64_t i) {
  return double(i) * 0.5 + double(uint8_t(name.back()));
}

std::vector<std::string> names(const std::string& prefix, uint64_t version, uint64_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i)
    out.push_back(prefix + "v" + std::to_string(version) + "_" + std::to_string(i));
  return out;
}

bool has_node(const Store& s, const std::string& node) {
  try {
    s.describe(node);
    return true;
  } catch (const stowage::Error& e) {
    if (e.code() != stowage::ErrorCode::not_found) throw;
    return false;
  }
}

void write_n5(const std::string& path, uint64_t v) {
  Store s = Store::open(path, Mode::create, "n5");
  if (!has_node(s, "vol"))
    s.create("vol", {{"kind", "array"},
                     {"dtype", "uint16"},
                     {"shape", {kN5Side, kN5Side}},
                     {"chunks", {kN5Chunk, kN5Chunk}},
                     {"codec", {{"type", "gzip"}, {"level", 1}}}});
  stowage::Array a = s.array("vol");
  std::vector<uint16_t> band(kN5Chunk * kN5Side);
  for (uint64_t r = 0; r < kN5Side; r += kN5Chunk) {  // one band of chunks at a time
    for (uint64_t i = 0; i < band.size(); ++i) band[i] = uint16_t(mix(v, r * kN5Side + i));
    a.write({r, 0}, {kN5Chunk, kN5Side}, band.data());
  }
  s.set_attributes("vol", {{"version", v}});
  s.close();
}

void write_datg(const std::string& path, uint64_t v) {
  Store s = Store::open(path, Mode::truncate, "datg");
  s.create("", {{"kind", "array"},
                {"dtype", "float64"},
                {"shape", {kDatgRows, kDatgCols}},
                {"attributes", {{"dataset_name", "crash v" + std::to_string(v)}}}});
  const stowage::NodeInfo info = s.describe("");
  s.write_strings(info.dims[0].labels, names("gene_", v, kDatgRows));
  s.write_strings(info.dims[1].labels, names("sample_", v, kDatgCols));
  stowage::Array a = s.array("");
  std::vector<double> rows(100 * kDatgCols);
  for (uint64_t r = 0; r < kDatgRows; r += 100) {
    for (uint64_t i = 0; i < rows.size(); ++i) rows[i] = value(v, r * kDatgCols + i);
    a.write({r, 0}, {100, kDatgCols}, rows.data());
  }
  s.close();
}

// Column c holds rows r with mix(v, r, c) % 16 == 0 (~6 %), value from the mix.
void write_bpcells(const std::string& path, uint64_t v) {
  Store s = Store::open(path, Mode::truncate, "bpcells");
  s.create(
      "",
      {{"kind", "sparse"}, {"dtype", "float64"}, {"shape", {kBpRows, kBpCols}}, {"layout", "csc"}});
  s.write_strings("row_names", names("r", v, kBpRows));
  s.write_strings("col_names", names("c", v, kBpCols));
  stowage::Sparse m = s.sparse("");
  constexpr uint64_t kBatch = 100;
  stowage::SparseSlice slice;
  for (uint64_t c0 = 0; c0 < kBpCols; c0 += kBatch) {
    slice.indptr.assign(1, 0);
    slice.indices.clear();
    std::vector<double> values;
    for (uint64_t c = c0; c < c0 + kBatch; ++c) {
      for (uint64_t r = 0; r < kBpRows; ++r) {
        uint64_t h = mix(v, c * kBpRows + r);
        if (h % 16 != 0) continue;
        slice.indices.push_back(uint32_t(r));
        values.push_back(double(h >> 40) / 8.0);
      }
      slice.indptr.push_back(slice.indices.size());
    }
    slice.values.resize(values.size() * sizeof(double));
    std::memcpy(slice.values.data(), values.data(), slice.values.size());
    m.append(slice, kBatch);
  }
  s.close();
}

void write_daf_axes(const std::string& repo, bool v11) {
  Store s =
      Store::open(repo, Mode::truncate, "daf", v11 ? json{{"version", {1, 1}}} : json::object());
  s.write_strings("axes/cell", names("cell", 0, kDafCells));
  s.write_strings("axes/gene", names("gene", 0, kDafGenes));
  s.close();
}

// Node matrices/cell/gene/x (dense float64) of version v, in an open repository.
void write_daf_node(Store& s, uint64_t v) {
  s.create("matrices/cell/gene/x",
           {{"kind", "array"}, {"dtype", "float64"}, {"shape", {kDafCells, kDafGenes}}});
  stowage::Array a = s.array("matrices/cell/gene/x");
  std::vector<double> rows(100 * kDafGenes);
  for (uint64_t r = 0; r < kDafCells; r += 100) {
    for (uint64_t i = 0; i < rows.size(); ++i) rows[i] = value(v, r * kDafGenes + i);
    a.write({r, 0}, {100, kDafGenes}, rows.data());
  }
}

// A whole repository replaced (Daf's "w"): axes and node x of version v.
void write_daf_repo(const std::string& repo, uint64_t v) {
  Store s = Store::open(repo, Mode::truncate, "daf");
  s.write_strings("axes/cell", names("cell", v, kDafCells));
  s.write_strings("axes/gene", names("gene", v, kDafGenes));
  write_daf_node(s, v);
  s.close();
}

// Vector vectors/cell/<name>, values from the name, in an existing repository (r+).
void write_daf_vector(const std::string& repo, const std::string& name) {
  Store s = Store::open(repo, Mode::update, "daf");
  s.create("vectors/cell/" + name,
           {{"kind", "array"}, {"dtype", "float64"}, {"shape", {kDafCells}}});
  std::vector<double> values(kDafCells);
  for (uint64_t i = 0; i < kDafCells; ++i) values[i] = daf_vector_value(name, i);
  s.array("vectors/cell/" + name).write({0}, {kDafCells}, values.data());
  s.close();
}

void write_daf(const std::string& repo, uint64_t v) {
  Store s = Store::open(repo, Mode::update, "daf");
  write_daf_node(s, v);
  s.close();
}

// One msgpack map {"key": "s<v>_<i>", "data": bin of kSampleBytes}, encoded by hand.
std::string sample(uint64_t v, uint64_t i) {
  const std::string key = "s" + std::to_string(v) + "_" + std::to_string(i);  // < 32 bytes: fixstr
  std::string out;
  out += char(0x82);
  out += char(0xa3);
  out += "key";
  out += char(0xa0 | key.size());
  out += key;
  out += char(0xa4);
  out += "data";
  out += char(0xc5);  // bin 16
  out += char(kSampleBytes >> 8);
  out += char(kSampleBytes & 0xff);
  for (uint64_t b = 0; b < kSampleBytes; b += 8) {
    uint64_t h = mix(v, i * kSampleBytes + b);
    out.append(reinterpret_cast<const char*>(&h), std::min<uint64_t>(8, kSampleBytes - b));
  }
  return out;
}

void write_datadings(const std::string& path, uint64_t v) {
  Store s = Store::open(path, Mode::truncate, "datadings");
  s.create("", {{"kind", "records"}});
  stowage::Records r = s.records("");
  std::vector<std::string> batch;
  for (uint64_t i = 0; i < kSamples; ++i) {
    batch.push_back(sample(v, i));
    if (batch.size() == 500) r.append(batch), batch.clear();
  }
  if (!batch.empty()) r.append(batch);
  s.close();
}

void write_npy(const std::string& path, uint64_t v) {
  Store s = Store::open(path, Mode::truncate, "npy");
  s.create("", {{"kind", "array"}, {"dtype", "uint16"}, {"shape", {kNpyRows, kNpyCols}}});
  std::vector<uint16_t> all(kNpyRows * kNpyCols);
  for (uint64_t i = 0; i < all.size(); ++i) all[i] = uint16_t(mix(v, i) % 4096);  // compressible
  s.array("").write({0, 0}, {kNpyRows, kNpyCols}, all.data());
  s.close();
}

int usage() {
  std::cerr << "usage: crash_writer n5|datg|bpcells|daf|daf-repo|datadings|npy PATH VERSION\n"
               "       crash_writer daf-axes REPO [1.1]\n"
               "       crash_writer daf-vector REPO NAME\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string what = argv[1], path = argv[2];
  try {
    // The rename-injection runs ask for one worker thread, so that strace's
    // per-thread rename count is the process's count.
    if (const char* t = std::getenv("STOWAGE_CRASH_THREADS"))
      stowage::Registry::global().set_threads(std::stoul(t));
    if (what == "daf-axes")
      return write_daf_axes(path, argc == 4 && std::string(argv[3]) == "1.1"), 0;
    if (what == "daf-vector" && argc == 4) return write_daf_vector(path, argv[3]), 0;
    if (argc != 4) return usage();
    const uint64_t v = std::stoull(argv[3]);
    // Tell the harness that writing starts now: plugins are loaded first, so
    // the window it draws kill moments over is the writing itself.
    if (const char* marker = std::getenv("STOWAGE_CRASH_MARKER")) {
      stowage::Registry::global().plugins(true);
      if (FILE* f = std::fopen(marker, "w")) std::fclose(f);
    }
    if (what == "n5")
      write_n5(path, v);
    else if (what == "datg")
      write_datg(path, v);
    else if (what == "bpcells")
      write_bpcells(path, v);
    else if (what == "daf")
      write_daf(path, v);
    else if (what == "daf-repo")
      write_daf_repo(path, v);
    else if (what == "datadings")
      write_datadings(path, v);
    else if (what == "npy")
      write_npy(path, v);
    else
      return usage();
  } catch (const std::exception& e) {
    std::cerr << "crash_writer " << what << " " << path << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
