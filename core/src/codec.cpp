// stowage::Codec: a thin owner of one codec plugin instance.
#include "internal.hpp"

namespace stowage {


namespace {
const std::string kNoId;
void require(const void* state) {
  if (!state) throw Error(ErrorCode::invalid_argument, "use of an empty stowage::Codec");
}
}  // namespace

const std::string& Codec::id() const { return state_ ? state_->id : kNoId; }
bool Codec::thread_safe() const { return state_ && (state_->capabilities & STOWAGE_CAP_THREADSAFE); }
const stowage_codec_vtable* Codec::vtable() const { return state_ ? state_->vt : nullptr; }
stowage_codec_handle Codec::handle() const { return state_ ? state_->handle : nullptr; }

std::string Codec::canonical_config() const {
  require(state_.get());
  std::string out;
  stowage_sink sink = detail::string_sink(&out);
  detail::CallError err;
  state_->check(state_->vt->canonical_config(state_->handle, &sink, &err), err);
  return out;
}

json Codec::config() const { return json::parse(canonical_config()); }

uint64_t Codec::bound(uint64_t n) const {
  require(state_.get());
  return state_->vt->bound(state_->handle, n);
}

size_t Codec::encode(const void* in, size_t n, void* out, size_t capacity) const {
  require(state_.get());
  size_t written = 0;
  detail::CallError err;
  state_->check(state_->vt->encode(state_->handle, in, n, out, capacity, &written, &err), err);
  return written;
}

size_t Codec::decode(const void* in, size_t n, void* out, size_t capacity) const {
  require(state_.get());
  size_t written = 0;
  detail::CallError err;
  state_->check(state_->vt->decode(state_->handle, in, n, out, capacity, &written, &err), err);
  return written;
}

std::vector<uint8_t> Codec::encode(const void* in, size_t n) const {
  std::vector<uint8_t> out(bound(n));
  out.resize(encode(in, n, out.data(), out.size()));
  return out;
}

std::vector<uint8_t> Codec::decode(const void* in, size_t n, size_t decoded_size) const {
  std::vector<uint8_t> out(decoded_size);
  size_t got = decode(in, n, out.data(), out.size());
  if (got != decoded_size)
    throw Error(ErrorCode::corrupt,
                "codec " + id() + ": decoded " + std::to_string(got) + " bytes, expected " +
                    std::to_string(decoded_size),
                "", "codec " + id());
  return out;
}

}  // namespace stowage
