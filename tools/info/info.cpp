// stowage-info: what is in a dataset. Detects the format through the format
// plugins, then prints the tree of groups and arrays with dtype, shape,
// chunking, codec, labels and attributes. Knows no format itself.
#include "tool.hpp"

namespace {

using stowage::json;
using stowage::NodeInfo;
using stowage::NodeKind;
using stowage::Store;

std::string join_path(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "/" + child;
}

std::string shape_text(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

struct Walker {
  const Store& store;
  size_t max_labels;
  bool as_json;

  // A few labels of a dimension, for the reader to recognise them.
  json label_preview(const stowage::Dim& dim) const {
    json j = {{"name", dim.name}};
    if (dim.labels.empty()) return j;
    j["labels"] = dim.labels;
    NodeInfo li = store.describe(dim.labels);
    uint64_t n = li.element_count();
    j["count"] = n;
    j["first"] = store.read_strings(dim.labels, 0, std::min<uint64_t>(n, max_labels));
    return j;
  }

  json node_json(const std::string& path) const {
    NodeInfo info = store.describe(path);
    json j = info.raw;
    j["path"] = path.empty() ? "/" : path;
    if (!info.dims.empty()) {
      j["dims"] = json::array();
      for (const auto& d : info.dims) j["dims"].push_back(label_preview(d));
    }
    if (info.kind == NodeKind::group) {
      j["children"] = json::array();
      for (const std::string& child : store.list(path))
        j["children"].push_back(node_json(join_path(path, child)));
    }
    return j;
  }

  void print(const json& j, int depth) const {
    std::string indent(depth * 2, ' ');
    std::string kind = j.value("kind", "group");
    std::cout << indent << j["path"].get<std::string>() << "  " << kind;
    if (kind == "array" || kind == "sparse") {
      std::cout << " " << j.value("dtype", "?") << " "
                << shape_text(j.value("shape", std::vector<uint64_t>{}));
      if (j.contains("chunks"))
        std::cout << " chunks " << shape_text(j["chunks"].get<std::vector<uint64_t>>());
      if (kind == "sparse")
        std::cout << " " << j.value("layout", "csc") << " nnz " << j.value("nnz", uint64_t{0});
      if (j.contains("codec") && !j["codec"].is_null()) std::cout << " codec " << j["codec"].dump();
      if (j.value("order", "C") == "F") std::cout << " (stored column-major)";
    } else if (kind == "strings") {
      std::cout << " " << shape_text(j.value("shape", std::vector<uint64_t>{}));
    } else if (kind == "records") {
      std::cout << " " << j.value("count", uint64_t{0}) << " records";
    }
    std::cout << "\n";
    if (j.contains("dims"))
      for (const json& d : j["dims"]) {
        std::cout << indent << "    dim " << d.value("name", "");
        if (d.contains("count")) {
          std::cout << ": " << d["count"].get<uint64_t>() << " labels from "
                    << d["labels"].get<std::string>();
          std::string first;
          for (const json& l : d["first"])
            first += (first.empty() ? "" : ", ") + l.get<std::string>();
          std::cout << " (" << first
                    << (d["first"].size() < d["count"].get<uint64_t>() ? ", ..." : "") << ")";
        }
        std::cout << "\n";
      }
    if (j.contains("attributes") && !j["attributes"].empty())
      std::cout << indent << "    attributes " << j["attributes"].dump() << "\n";
    if (j.contains("storage") && !j["storage"].empty())
      std::cout << indent << "    storage " << j["storage"].dump() << "\n";
    if (j.contains("children"))
      for (const json& c : j["children"]) print(c, depth + 1);
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Show what is in a dataset: its format, and the tree of groups and arrays with\n"
      "dtype, shape (C order), chunking, codec, labels and attributes.\n"
      "PATH may name a node inside a container as PATH::inner/node.",
      "stowage-info"};
  stowage::tool::CommonOptions common;
  stowage::tool::add_common_options(app, common, false);
  std::string spec, format;
  bool as_json = false;
  size_t max_labels = 5;
  std::vector<std::string> storage_options;
  app.add_option("PATH", spec, "Dataset (PATH or PATH::inner/node)")->required();
  app.add_option("--format", format,
                 "Format id (n5, zarr, datg, daf, bpcells, datadings, npy); default: detect");
  app.add_flag("--json", as_json, "Machine-readable output (schema in README.md)");
  app.add_option("--labels", max_labels, "Labels shown per dimension (default 5)");
  stowage::tool::add_storage_option(app, "--storage-option", storage_options, "the dataset's");
  STOWAGE_TOOL_PARSE(app, argc, argv);

  return stowage::tool::run(app, [&] {
    stowage::Registry& registry = stowage::tool::make_registry(common);
    auto [path, node] = stowage::split_dataset_spec(spec);
    json options = json::object();
    for (const std::string& o : storage_options)
      stowage::parse_key_value(o, options["storage"], "--storage-option");
    Store store = Store::open(path, stowage::Mode::read, format, options, registry);
    Walker walker{store, max_labels, as_json};
    json tree = walker.node_json(node);
    if (as_json) {
      json out = {{"path", path}, {"format", store.format()}, {"root", tree}};
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << path << ": " << store.format() << "\n";
      walker.print(tree, 0);
    }
    return 0;
  });
}
