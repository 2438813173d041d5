// DafStore: what close() does -- commit the pending arrays and sparse
// matrices, write relayout copies, rebuild metadata.json, and publish a
// repository built in a temporary directory.
#include "daf_store.hpp"

#include "daf_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

namespace daf {

using sdk::invalid;

namespace {

constexpr uint64_t kMaxJsonBytes = 1 << 20;

// Positions, in column-major order, of the non-zero elements of dense data.
void gather_nonzeros(const unsigned char* data, uint64_t n, size_t es,
                     std::vector<uint64_t>& positions) {
  static const unsigned char zero[8] = {0};
  for (uint64_t i = 0; i < n; ++i)
    if (std::memcmp(data + i * es, zero, es) != 0) positions.push_back(i);
}

// Floating-point -0.0 is a zero too (Julia's iszero).
void gather_nonzeros_float(const unsigned char* data, uint64_t n, ElType t,
                           std::vector<uint64_t>& positions) {
  for (uint64_t i = 0; i < n; ++i) {
    double v;
    if (t == ElType::Float32) {
      float f;
      std::memcpy(&f, data + 4 * i, 4);
      v = f;
    } else {
      std::memcpy(&v, data + 8 * i, 8);
    }
    if (v != 0.0) positions.push_back(i);
  }
}

void write_index_file(const sdk::Storage& storage, const std::string& path, ElType indtype,
                      const std::vector<uint64_t>& values1) {
  std::vector<unsigned char> bytes(values1.size() * element_size(indtype));
  for (size_t i = 0; i < values1.size(); ++i) store_index(bytes.data(), indtype, i, values1[i]);
  storage.write(path, bytes.data(), bytes.size());
}

// out (cols x rows, column-major) = transpose of in (rows x cols, column-major),
// in 64 x 64 blocks so both sides stay in cache.
void transpose(const unsigned char* in, unsigned char* out, uint64_t rows, uint64_t cols,
               size_t es) {
  constexpr uint64_t B = 64;
  for (uint64_t c0 = 0; c0 < cols; c0 += B)
    for (uint64_t r0 = 0; r0 < rows; r0 += B)
      for (uint64_t c = c0; c < std::min(cols, c0 + B); ++c)
        for (uint64_t r = r0; r < std::min(rows, r0 + B); ++r)
          std::memcpy(out + (c + r * cols) * es, in + (r + c * rows) * es, es);
}

}  // namespace

// ---- commit at close
// ------------------------------------------------------------------------------

void DafStore::commit_array(PendingArray& p) {
  // Files of another storage form go; a dense .data is replaced by the
  // publish below, not deleted first (a crash in between would leave no data).
  for (const std::string& suffix : property_suffixes())
    if (suffix != ".json" && (p.store_sparse || suffix != ".data"))
      remove_file(storage_, p.base + suffix);
  if (p.store_sparse)
    commit_as_sparse(p);
  else
    commit_dense(p);
}

// The staged .data file already holds the whole array (tiles never written
// are holes, which read as zeros): publishing it is all.
void DafStore::commit_dense(PendingArray& p) {
  storage_.publish(p.data);
  Descriptor d;
  d.eltype = p.eltype;
  write_descriptor(p.base, d, p.ref.kind == NodeRef::Matrix, 0, 0);
}

// Sparse storage asked for: only the non-zero elements. The staged .data is
// column-major, the order CSC wants, so it is read back in blocks of 1 MiB:
// memory holds the non-zeros (as it must, to write the index files) and one block.
void DafStore::commit_as_sparse(PendingArray& p) {
  const Tiling& g = p.tiling;
  bool matrix = p.ref.kind == NodeRef::Matrix;
  size_t es = element_size(p.eltype);
  uint64_t rows = g.rows, cols = g.cols, n = rows * cols;
  std::vector<uint64_t> positions;  // column-major positions of the non-zeros
  std::vector<unsigned char> nzval;
  const uint64_t block_elements = std::max<uint64_t>((1 << 20) / es, 1);
  std::vector<unsigned char> block(block_elements * es);
  std::vector<uint64_t> in_block;
  for (uint64_t first = 0; first < n; first += block_elements) {
    uint64_t count = std::min(block_elements, n - first);
    if (p.data.read_at(first * es, block.data(), count * es) != count * es)
      sdk::fail(STOWAGE_IO, p.base + ".data: the staged file is shorter than the array");
    in_block.clear();
    if (is_float(p.eltype))
      gather_nonzeros_float(block.data(), count, p.eltype, in_block);
    else
      gather_nonzeros(block.data(), count, es, in_block);
    for (uint64_t k : in_block) {
      positions.push_back(first + k);
      nzval.insert(nzval.end(), block.data() + k * es, block.data() + (k + 1) * es);
    }
  }
  Descriptor d;
  d.eltype = p.eltype;
  d.sparse = true;
  d.indtype = indtype_for_size(std::max(rows, static_cast<uint64_t>(positions.size()) + 1));
  std::vector<uint64_t> rowval1(positions.size()), colptr1(cols + 1, 1);
  for (size_t k = 0; k < positions.size(); ++k) {
    rowval1[k] = positions[k] % rows + 1;
    colptr1[positions[k] / rows + 1] += 1;
  }
  for (uint64_t c = 0; c < cols; ++c) colptr1[c + 1] += colptr1[c] - 1;
  if (matrix) {
    write_index_file(storage_, p.base + ".colptr", d.indtype, colptr1);
    write_index_file(storage_, p.base + ".rowval", d.indtype, rowval1);
  } else {
    write_index_file(storage_, p.base + ".nzind", d.indtype, rowval1);
  }
  storage_.write(p.base + ".nzval", nzval.data(), nzval.size());
  write_descriptor(p.base, d, matrix, positions.size(), cols + 1);
}

void DafStore::commit_sparse(PendingSparse& p) {
  uint64_t done = p.colptr.size() - 1;
  if (done != p.cols)
    invalid(p.base + ": only " + std::to_string(done) + " of " + std::to_string(p.cols) +
            " columns were appended before close");
  for (const std::string& suffix : property_suffixes())
    if (suffix != ".json") remove_file(storage_, p.base + suffix);
  std::vector<uint64_t> colptr1(p.colptr.size());
  for (size_t c = 0; c < p.colptr.size(); ++c) colptr1[c] = p.colptr[c] + 1;
  write_index_file(storage_, p.base + ".colptr", p.indtype, colptr1);
  storage_.publish(p.rowval);
  storage_.publish(p.nzval);
  Descriptor d;
  d.sparse = true;
  d.eltype = p.eltype;
  d.indtype = p.indtype;
  write_descriptor(p.base, d, true, p.colptr.back(), p.colptr.size());
}

// ---- relayout: the transposed copy Julia's set_matrix!(relayout=true) writes ----------------

void DafStore::write_relayout(const NodeRef& ref) {
  std::string node = "matrices/" + ref.rows + "/" + ref.cols + "/" + ref.name;
  auto p = load_property(host(), storage_, root_, ref, node, required_axis_length(ref.rows, node),
                         required_axis_length(ref.cols, node));
  NodeRef t = ref;
  std::swap(t.rows, t.cols);
  std::string base = property_base(t);
  storage_.make_directory(property_dir(t));
  delete_property_files(base);
  uint64_t rows = p->rows, cols = p->cols;
  Descriptor d = p->desc;
  d.v11_schema = v11(), d.packed.clear();
  if (p->is_string()) {
    std::vector<std::string_view> values(rows * cols);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c) values[c + r * cols] = p->strings[r + c * rows];
    storage_.write(base + ".txt", join_lines(values, node));
    d.sparse = false;
    return write_descriptor(base, d, true, 0, 0);
  }
  size_t es = element_size(d.eltype);
  if (!p->unreadable.empty()) sdk::unsupported(p->unreadable);
  if (!d.sparse) {
    const Mapped& in = *p->dense;  // the .data file mapped, or the decoded .zip
    std::vector<unsigned char> out(in.size());
    if (in.size()) transpose(in.data(), out.data(), rows, cols, es);
    storage_.write(base + ".data", out.data(), out.size());
    return write_descriptor(base, d, true, 0, 0);
  }
  // CSC of the transpose: count values per row, then place them column by column.
  std::vector<uint64_t> indptr(cols + 1);
  std::vector<uint32_t> row_of(p->nnz);
  std::vector<unsigned char> values(p->nnz * es);
  p->read_sparse(0, cols, indptr.data(), row_of.data(), values.data(), p->nnz);
  std::vector<uint64_t> colptr1(rows + 1, 0);
  for (uint32_t r : row_of) ++colptr1[r + 1];
  for (uint64_t r = 0; r < rows; ++r) colptr1[r + 1] += colptr1[r];
  std::vector<uint64_t> next(colptr1.begin(), colptr1.end() - 1), rowval1(p->nnz);
  std::vector<unsigned char> nzval(p->nnz * es);
  for (uint64_t c = 0; c < cols; ++c)
    for (uint64_t k = indptr[c]; k < indptr[c + 1]; ++k) {
      uint64_t at = next[row_of[k]]++;
      rowval1[at] = c + 1;
      std::memcpy(&nzval[at * es], &values[k * es], es);
    }
  for (uint64_t& v : colptr1) v += 1;
  if (max_index(d.indtype) < std::max(cols, p->nnz + 1))
    d.indtype = indtype_for_size(std::max(cols, p->nnz + 1));
  write_index_file(storage_, base + ".colptr", d.indtype, colptr1);
  write_index_file(storage_, base + ".rowval", d.indtype, rowval1);
  storage_.write(base + ".nzval", nzval.data(), nzval.size());
  write_descriptor(base, d, true, p->nnz, rows + 1);
}

// metadata.json (0.3.0): one line mapping every axis and property to its
// descriptor, rebuilt from a sorted walk like Julia does after a delete.
std::string DafStore::build_metadata() const {
  std::string out = "{";
  auto add = [&](const std::string& key, const std::string& value) {
    out += (out.size() > 1 ? "," : "") + Json(key).dump() + ":" + value;
  };
  auto add_file = [&](const std::string& key, const std::string& path) {
    std::string text = read_small_text(storage_, path, kMaxJsonBytes);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    add(key, text);
  };
  std::vector<std::string> axes = axis_names();
  for (const std::string& a : axes) {
    // Counted from the file, not the cache: other writers may have changed it.
    std::string file = axis_file(a);
    sdk::Bytes text = storage_.map(file);
    uint64_t entries =
        static_cast<uint64_t>(std::count(text.text().begin(), text.text().end(), '\n'));
    if (!text.text().empty() && text.text().back() != '\n')
      split_lines(std::string(text.text()), file);  // names the fault
    add("axes/" + a, "{\"format\":\"axis\",\"n_entries\":" + std::to_string(entries) + "}");
  }
  for (const std::string& s : names_in(root_ + "/scalars", ".json"))
    add_file("scalars/" + s, root_ + "/scalars/" + s + ".json");
  for (const std::string& a : axes)
    for (const std::string& v : names_in(root_ + "/vectors/" + a, ".json"))
      add_file("vectors/" + a + "/" + v, root_ + "/vectors/" + a + "/" + v + ".json");
  for (const std::string& r : axes)
    for (const std::string& c : axes)
      for (const std::string& m : names_in(root_ + "/matrices/" + r + "/" + c, ".json"))
        add_file("matrices/" + r + "/" + c + "/" + m,
                 root_ + "/matrices/" + r + "/" + c + "/" + m + ".json");
  return out + "}";
}

// metadata.json is rebuilt from the descriptors stored now; close() holds
// the repository's lock meanwhile, so concurrent writers' rebuilds take turns
// and the last one lists every property.
void DafStore::publish_metadata() {
  const std::string file = root_ + "/metadata.json";
  if (!v11() && !is_file(storage_, file)) return;
  storage_.write(file, build_metadata());
}

// Moves the repository built in a staged directory into place: a crash
// leaves the old or the new repository under the final name, never none
// (the file backend swaps directories with RENAME_EXCHANGE).
void DafStore::publish_built_repository() {
  storage_.move(root_, final_path_, STOWAGE_PUBLISH_REPLACE);
  building_ = false;
  root_ = final_path_;
}

void DafStore::close() {
  if (closed_ || mode_ == STOWAGE_MODE_READ) return void(closed_ = true);
  // Several processes may add properties to one repository at once: their
  // closes take turns, so each metadata.json rebuild sees every descriptor
  // published before it and the last one lists them all (a repository being
  // built is private until it is moved into place). Where the file system
  // refuses flock the lock holds nothing, as the old DirectoryLock did.
  std::optional<sdk::Lock> turn;
  if (!building_) turn.emplace(storage_.lock(root_));
  for (const auto& [axis, length] : declared_axes_)
    invalid(
        final_path_ + ": axis '" + axis + "' (" + std::to_string(length) +
        " entries) was used by a property but its entries were never written (write_strings axes/" +
        axis + ")");
  std::vector<NodeRef> written;
  for (auto& [node, p] : pending_arrays_) commit_array(p), written.push_back(p.ref), dirty_ = true;
  for (auto& [node, p] : pending_sparse_) commit_sparse(p), written.push_back(p.ref), dirty_ = true;
  forget_cached();
  // Transposed copies, unless the other orientation was itself written now.
  std::set<std::string> explicit_nodes;
  for (const NodeRef& ref : written)
    explicit_nodes.insert(ref.rows + "/" + ref.cols + "/" + ref.name);
  for (const NodeRef& ref : written)
    if (relayout_ && ref.kind == NodeRef::Matrix && ref.rows != ref.cols &&
        !explicit_nodes.count(ref.cols + "/" + ref.rows + "/" + ref.name))
      write_relayout(ref);
  pending_arrays_.clear();
  pending_sparse_.clear();
  if (dirty_) publish_metadata();
  if (building_) publish_built_repository();
  closed_ = true;
}

}  // namespace daf
