// backends/cpu/onednn/onednn_common.h — what every oneDNN step shares: the
// engine, dtype and layout mapping, and a BoundStep that executes one
// primitive through the C API with argument arrays built once at bind time
// (the C++ execute() builds a vector per call; run() must not allocate).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/cpu/native/activation.h"
#include "ferry/status.h"
#include "ir/dtype.h"
#include "runtime/step.h"

namespace ferry::onednn {

using dnnl::memory;

/// The process-wide CPU engine.
const dnnl::engine& engine();

std::optional<memory::data_type> dnnl_type(DType t);
/// `v` as oneDNN dims.
memory::dims to_dims(const std::vector<int64_t>& v);
/// The element count of a tensor of `dims`.
int64_t numel(const std::vector<int64_t>& dims);
/// Row-major ("abcd...") desc of `dims`.
memory::desc plain_desc(DType t, const std::vector<int64_t>& dims);
/// `md`'s layout with elements of type `t` (strides and blocks in elements stay as they are).
memory::desc with_data_type(const memory::desc& md, memory::data_type t);
/// Channels-last desc of 3-D to 5-D `dims` (acb, acdb, acdeb: channels innermost).
memory::desc channels_last_desc(memory::data_type t, const std::vector<int64_t>& dims);
/// True when `md` is the row-major layout of its dims.
bool is_plain(const memory::desc& md);
/// Element strides of a dense layout without inner blocks or padding (plain, NHWC, any
/// permutation), or nullopt (blocked, padded, opaque, offset).
std::optional<std::vector<int64_t>> dense_strides(const memory::desc& md);
/// Where `md` pads its channel axis (dim 1) to a whole block (nChw8c with 30 channels:
/// 32), as ChannelPadding::zero needs it; nullopt when it pads nothing; an error for
/// other paddings (several inner blocks, padding off the channel axis).
Result<std::optional<ChannelPadding>> channel_padding(const memory::desc& md);
/// "nChw16c"-like short text for reports ("plain" for row-major).
std::string layout_name(const memory::desc& md);
/// The layout of `like` (same format tag: plain, channels-last, nChw8c, nChw16c, ...)
/// for a tensor of `dims` of the same rank, or nullopt when `like` has no such tag.
std::optional<memory::desc> same_format(const memory::desc& like, const std::vector<int64_t>& dims);
/// True for oneDNN's reference implementations ("ref:any", "ref_fused:any"): correct but
/// slow (~35 ms for an elementwise op on a feature map); a maker declines them.
bool is_reference_impl(const std::string& impl);

/// One argument of a bound primitive: which StepIO tensor feeds it (or a fixed memory).
struct ArgSource {
  int arg;                 ///< DNNL_ARG_*
  memory::desc md;
  int input = -1;          ///< StepIO::inputs index
  int output = -1;         ///< StepIO::outputs index
  bool scratch = false;    ///< StepIO::scratch
  const void* fixed = nullptr;  ///< a buffer owned by the Step (packed weights, bias)
};

/// Executes `prim` with `args`; data handles are refreshed from the StepIO on every run.
class PrimitiveBoundStep : public BoundStep {
 public:
  /// `copy_input` >= 0: output 0 starts as a copy of that input (sum post-op), skipped when they alias.
  PrimitiveBoundStep(const dnnl::primitive& prim, const std::vector<ArgSource>& args, StepIO* io,
                     int copy_input = -1, size_t copy_bytes = 0);
  Status run() override;

 private:
  dnnl::primitive prim_;
  dnnl::stream stream_;
  std::vector<ArgSource> sources_;
  std::vector<memory> mems_;
  std::vector<dnnl_exec_arg_t> c_args_;
  StepIO* io_;
  int copy_input_;
  size_t copy_bytes_;
};

/// An owned, 64-byte aligned block (packed weights).
struct AlignedBlock {
  explicit AlignedBlock(size_t bytes);
  ~AlignedBlock();
  AlignedBlock(const AlignedBlock&) = delete;
  AlignedBlock& operator=(const AlignedBlock&) = delete;
  void* data = nullptr;
  size_t size = 0;
};

/// Reorders `src` (described by src_md) into a new block laid out as dst_md.
std::shared_ptr<AlignedBlock> reorder_to(const void* src, const memory::desc& src_md, const memory::desc& dst_md);

/// A Step that executes one oneDNN primitive (owning what its fixed arguments point at).
class PrimitiveStep : public Step {
 public:
  PrimitiveStep(std::string name, dnnl::primitive prim, std::vector<ArgSource> args, size_t scratch,
                std::vector<std::shared_ptr<AlignedBlock>> owned, bool in_place)
      : name_(std::move(name)), prim_(std::move(prim)), args_(std::move(args)), scratch_(scratch),
        owned_(std::move(owned)), in_place_(in_place ? 0 : -1) {}
  std::string kernel_name() const override { return name_; }
  size_t scratch_bytes() const override { return scratch_; }
  int in_place_input() const override { return in_place_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    return std::unique_ptr<BoundStep>(std::make_unique<PrimitiveBoundStep>(prim_, args_, io, sum_input_, sum_bytes_));
  }
  /// Output 0 accumulates onto input `k` (sum post-op).
  void set_sum_input(int k, size_t bytes) { in_place_ = sum_input_ = k, sum_bytes_ = bytes; }

 private:
  std::string name_;
  dnnl::primitive prim_;
  std::vector<ArgSource> args_;
  size_t scratch_;
  std::vector<std::shared_ptr<AlignedBlock>> owned_;
  int in_place_;
  int sum_input_ = -1;
  size_t sum_bytes_ = 0;
};

/// Runs `f`, turning a dnnl::error into an "unsupported" status (the maker declines).
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const dnnl::error& e) {
    return unsupported(std::string("oneDNN: ") + e.what());
  }
}

/// "jit:avx512_core" etc. from a primitive descriptor.
std::string impl_name(const dnnl::primitive_desc_base& pd);

}  // namespace ferry::onednn
