// Record sets (N5 object datasets, datadings samples).
#include "internal.hpp"

namespace stowage::copying {

void Converter::copy_records(const Store& src, const std::string& src_node, const NodeInfo& info,
                             Store& dst, const std::string& dst_node, Progress& progress) {
  ++nodes_;
  if (filling_part()) return;
  json desc = {
      {"kind", "records"}, {"count", info.count}, {"attributes", attributes_for(info, src_node)}};
  if (same_format(src, dst) && info.raw.contains("shape")) desc["shape"] = info.raw["shape"];
  add_layout(desc, src, dst, info);
  if (!format_has(dst, STOWAGE_CAP_RECORDS))
    throw Error(ErrorCode::invalid_argument,
                dst.path() + ": format " + dst.format() + " cannot hold a record set (" +
                    spec_of(src, src_node) + ")",
                dst.path());
  create_node(dst, dst_node, desc, "a record set");
  Records in = src.records(src_node);
  Records out = dst.records(dst_node);
  uint64_t n = in.size();
  const uint64_t batch = 4096;
  std::vector<std::string> records;
  for (uint64_t i = 0; i < n; i += batch) {
    progress.check_cancel();
    records.clear();
    uint64_t bytes = 0;
    in.read_range(i, std::min(n, i + batch), [&](std::string_view r) {
      records.emplace_back(r);
      bytes += r.size();
    });
    out.append(records);  // bytes unchanged
    progress.add(bytes, 1);
  }
}

}  // namespace stowage::copying
