#include "backends/cpu/onednn/onednn_common.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace ferry::onednn {

const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

std::optional<memory::data_type> dnnl_type(DType t) {
  switch (t) {
    case DType::f32: return memory::data_type::f32;
    case DType::bf16: return memory::data_type::bf16;
    case DType::f16: return memory::data_type::f16;
    case DType::i32: return memory::data_type::s32;
    case DType::i8: return memory::data_type::s8;
    case DType::u8: return memory::data_type::u8;
    default: return std::nullopt;
  }
}

memory::dims to_dims(const std::vector<int64_t>& v) { return memory::dims(v.begin(), v.end()); }

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  return n;
}

memory::desc plain_desc(DType t, const std::vector<int64_t>& dims) {
  memory::dims d(dims.begin(), dims.end()), strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return memory::desc(d, *dnnl_type(t), strides);
}

memory::desc with_data_type(const memory::desc& md, memory::data_type t) {
  dnnl_memory_desc_t d = md.data;
  d.data_type = memory::convert_to_c(t);
  return memory::desc(d);
}

memory::desc channels_last_desc(memory::data_type t, const std::vector<int64_t>& dims) {
  using tag = memory::format_tag;
  return memory::desc(to_dims(dims), t, dims.size() == 4 ? tag::acdb : dims.size() == 5 ? tag::acdeb : tag::acb);
}

bool is_plain(const memory::desc& md) {
  const dnnl_memory_desc_t& c = md.data;
  if (c.format_kind != dnnl_blocked || c.format_desc.blocking.inner_nblks != 0) return false;
  for (int i = 0; i < c.ndims; ++i)
    if (c.padded_dims[i] != c.dims[i] || c.padded_offsets[i] != 0) return false;
  int64_t stride = 1;
  for (int i = c.ndims; i-- > 0;) {
    if (c.dims[i] != 1 && c.format_desc.blocking.strides[i] != stride) return false;
    stride *= c.dims[i];
  }
  return c.offset0 == 0;
}

std::optional<std::vector<int64_t>> dense_strides(const memory::desc& md) {
  const dnnl_memory_desc_t& c = md.data;
  if (c.format_kind != dnnl_blocked || c.format_desc.blocking.inner_nblks != 0 || c.offset0 != 0) return std::nullopt;
  int64_t numel = 1;
  std::vector<int64_t> strides(size_t(c.ndims));
  for (int i = 0; i < c.ndims; ++i) {
    if (c.padded_dims[i] != c.dims[i] || c.padded_offsets[i] != 0) return std::nullopt;
    numel *= c.dims[i];
    strides[size_t(i)] = c.format_desc.blocking.strides[i];
  }
  // Dense: the layout spans exactly numel elements (a permutation of the dims, no gaps).
  const size_t elem = memory::data_type_size(memory::data_type(c.data_type));
  if (elem == 0 || md.get_size() != size_t(numel) * elem) return std::nullopt;
  return strides;
}

Result<std::optional<ChannelPadding>> channel_padding(const memory::desc& md) {
  const dnnl_memory_desc_t& c = md.data;
  bool padded = false;
  for (int i = 0; i < c.ndims; ++i) padded |= c.padded_dims[i] != c.dims[i];
  if (!padded) return std::optional<ChannelPadding>();
  const auto& b = c.format_desc.blocking;
  if (c.format_kind != dnnl_blocked || c.ndims < 2 || b.inner_nblks != 1 || b.inner_idxs[0] != 1 || c.offset0 != 0)
    return unsupported("padding of layout " + layout_name(md) + " is not one channel block");
  for (int i = 0; i < c.ndims; ++i)
    if (i != 1 && c.padded_dims[i] != c.dims[i]) return unsupported("layout " + layout_name(md) + " pads dim " + std::to_string(i));
  ChannelPadding p;
  p.outer = c.dims[0];
  p.channels = c.dims[1];
  p.padded = c.padded_dims[1];
  p.block = b.inner_blks[0];
  p.outer_stride = b.strides[0];
  p.block_stride = b.strides[1];
  // The spatial dims must be dense among themselves (nChw8c: h stride = W * w stride).
  p.spatial = 1;
  p.spatial_stride = c.ndims > 2 ? b.strides[c.ndims - 1] : 0;
  for (int i = c.ndims - 1; i >= 2; --i) {
    if (b.strides[i] != p.spatial_stride * p.spatial) return unsupported("layout " + layout_name(md) + " is not dense over space");
    p.spatial *= c.dims[i];
  }
  return std::optional<ChannelPadding>(p);
}

std::string layout_name(const memory::desc& md) {
  if (is_plain(md)) return "plain";
  const dnnl_memory_desc_t& c = md.data;
  if (c.format_kind != dnnl_blocked) return "opaque";
  const auto& b = c.format_desc.blocking;
  // Outer dims from the largest stride to the smallest (NHWC: "acdb"), then the inner blocks.
  std::vector<int> order(size_t(c.ndims));
  for (int i = 0; i < c.ndims; ++i) order[size_t(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    return c.format_desc.blocking.strides[x] > c.format_desc.blocking.strides[y];
  });
  std::string s;
  for (int i : order) s += char('a' + i);
  for (int i = 0; i < b.inner_nblks; ++i) s += std::to_string(b.inner_blks[i]) + char('a' + b.inner_idxs[i]);
  return s;
}

std::optional<memory::desc> same_format(const memory::desc& like, const std::vector<int64_t>& dims) {
  using tag = memory::format_tag;
  const dnnl_memory_desc_t& c = like.data;
  if (c.ndims != int(dims.size()) || c.format_kind != dnnl_blocked) return std::nullopt;
  const memory::data_type t = memory::data_type(c.data_type);
  if (is_plain(like)) {
    memory::dims d(dims.begin(), dims.end()), strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
    return memory::desc(d, t, strides);
  }
  static const std::vector<tag> tags[] = {
      {},
      {tag::a},
      {tag::ab, tag::ba},
      {tag::abc, tag::acb, tag::aBc4b, tag::aBc8b, tag::aBc16b},
      {tag::abcd, tag::acdb, tag::aBcd4b, tag::aBcd8b, tag::aBcd16b},
      {tag::abcde, tag::acdeb, tag::aBcde4b, tag::aBcde8b, tag::aBcde16b},
  };
  if (c.ndims < 1 || size_t(c.ndims) >= std::size(tags)) return std::nullopt;
  const memory::dims own(c.dims, c.dims + c.ndims);
  for (tag f : tags[c.ndims])
    if (memory::desc(own, t, f) == like) return memory::desc(memory::dims(dims.begin(), dims.end()), t, f);
  return std::nullopt;
}

bool is_reference_impl(const std::string& impl) { return impl.rfind("ref", 0) == 0; }

PrimitiveBoundStep::PrimitiveBoundStep(const dnnl::primitive& prim, const std::vector<ArgSource>& args, StepIO* io,
                                       int copy_input, size_t copy_bytes)
    : prim_(prim), stream_(engine()), sources_(args), io_(io), copy_input_(copy_input), copy_bytes_(copy_bytes) {
  for (const ArgSource& a : sources_) {
    void* handle = a.fixed ? const_cast<void*>(a.fixed) : (a.scratch ? io->scratch : nullptr);
    mems_.emplace_back(a.md, engine(), handle ? handle : DNNL_MEMORY_NONE);
  }
  for (size_t i = 0; i < sources_.size(); ++i) c_args_.push_back({sources_[i].arg, mems_[i].get()});
}

Status PrimitiveBoundStep::run() {
  for (size_t i = 0; i < sources_.size(); ++i) {
    const ArgSource& a = sources_[i];
    void* p = nullptr;
    if (a.input >= 0) p = const_cast<uint8_t*>(io_->inputs[size_t(a.input)]->raw());
    else if (a.output >= 0) p = io_->outputs[size_t(a.output)]->raw();
    else continue;
    if (dnnl_memory_set_data_handle_v2(c_args_[i].memory, p, stream_.get()) != dnnl_success)
      return internal_error("oneDNN: cannot set a data handle");
  }
  if (copy_input_ >= 0) {
    const uint8_t* from = io_->inputs[size_t(copy_input_)]->raw();
    uint8_t* to = io_->outputs[0]->raw();
    if (from != to) std::memcpy(to, from, copy_bytes_);
  }
  if (dnnl_primitive_execute(prim_.get(), stream_.get(), int(c_args_.size()), c_args_.data()) != dnnl_success)
    return internal_error("oneDNN: primitive execution failed");
  return Status::Ok();
}

AlignedBlock::AlignedBlock(size_t bytes) : size(bytes) {
  data = std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
  FERRY_CHECK(data != nullptr, "out of memory packing weights");
}
AlignedBlock::~AlignedBlock() { std::free(data); }

std::shared_ptr<AlignedBlock> reorder_to(const void* src, const memory::desc& src_md, const memory::desc& dst_md) {
  auto block = std::make_shared<AlignedBlock>(dst_md.get_size());
  std::memset(block->data, 0, block->size);  // padded channels must read as zeros
  memory s(src_md, engine(), const_cast<void*>(src)), d(dst_md, engine(), block->data);
  dnnl::stream st(engine());
  dnnl::reorder(s, d).execute(st, s, d);
  st.wait();
  return block;
}

std::string impl_name(const dnnl::primitive_desc_base& pd) { return pd.impl_info_str(); }

}  // namespace ferry::onednn
