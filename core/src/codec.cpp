// stowage::Codec: an owner of one codec configuration and its pool of
// contexts (the pool: detail::ContextPool in codec_state.hpp).
#include "codec_state.hpp"
#include "plugin_call.hpp"

namespace stowage {

namespace {
const std::string kNoId;
void require(const void* state) {
  if (!state) throw Error(ErrorCode::invalid_argument, "use of an empty stowage::Codec");
}
}  // namespace

const std::string& Codec::id() const { return state_ ? state_->id : kNoId; }
// Every configuration serves many threads: each call has a context of its own.
bool Codec::thread_safe() const { return state_ != nullptr; }
const stowage_codec_vtable* Codec::vtable() const { return state_ ? state_->vt : nullptr; }
stowage_codec_config Codec::handle() const { return state_ ? state_->config : nullptr; }

std::string Codec::canonical_config() const {
  require(state_.get());
  return state_->canonical;
}

json Codec::config() const { return json::parse(canonical_config()); }

json Codec::encoded_chunk() const {
  require(state_.get());
  return state_->encoded_chunk.empty() ? json() : json::parse(state_->encoded_chunk);
}

uint64_t Codec::bound(uint64_t n) const {
  require(state_.get());
  return state_->vt->bound(state_->config, n);
}

size_t Codec::encode(const void* in, size_t n, void* out, size_t capacity) const {
  require(state_.get());
  size_t written = 0;
  detail::CallError err;
  state_->check(state_->encode(in, n, out, capacity, &written, &err), err);
  return written;
}

size_t Codec::decode(const void* in, size_t n, void* out, size_t capacity) const {
  require(state_.get());
  size_t written = 0;
  detail::CallError err;
  state_->check(state_->decode(in, n, out, capacity, &written, &err), err);
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
