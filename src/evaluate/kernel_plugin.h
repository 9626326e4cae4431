// evaluate/kernel_plugin.h — loading a ferry_kernel_v1 shared library
// (include/ferry/kernel_plugin.h) and running it as ferry's kernel for one op.
//
//   auto plugin = KernelPlugin::load("build/libmy_attention.so");   // checks the ABI
//   FERRY_TRY((*plugin)->install());     // an override in the kernel registry (ops/registry.h)
//   auto session = model.compile({});    // every Attention node now runs the plugin
//
// install() registers one KernelEntry per supported dtype with `overrides`
// set, so the CPU backend picks the plugin wherever it would run a kernel of
// its table (select_kernel); ops the CPU backend gives to oneDNN primitives
// (Conv, MatMul, pooling, Softmax, LayerNormalization) are not replaced.
// The registry holds plain function pointers, so one plugin can be installed
// per process: `ferry worker` is that process, a child of `ferry evaluate`,
// and a plugin that crashes or hangs takes only the worker down.
//
// Per node the adapter creates one plugin state (create, with the node's
// attributes) on first run, calls infer (when the plugin has it) once per
// input-shape signature and checks its answer against ferry's shape
// inference, then calls run on ferry's preallocated outputs. Every plugin
// failure comes back as a Status naming the plugin, the node and the reason.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ferry/kernel_plugin.h"
#include "ferry/status.h"
#include "ir/dtype.h"
#include "ir/op.h"

namespace ferry::evaluate {

/// ferry_kernel_dtype code -> DType; nullopt for an unknown code.
std::optional<DType> dtype_from_plugin_code(int32_t code);
/// DType -> ferry_kernel_dtype code (FERRY_DTYPE_UNDEFINED for undefined).
int32_t plugin_code_of(DType dtype);

class KernelPlugin {
 public:
  /// dlopen()s `path` and checks its ferry_kernel_v1 table: entry symbol,
  /// ABI version, struct size, name, a known op, known dtypes, the functions.
  /// Errors are invalid_argument and name the file.
  static Result<std::unique_ptr<KernelPlugin>> load(const std::string& path);
  ~KernelPlugin();
  KernelPlugin(const KernelPlugin&) = delete;
  KernelPlugin& operator=(const KernelPlugin&) = delete;

  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  Op op() const { return op_; }
  const std::vector<DType>& dtypes() const { return dtypes_; }
  bool has_infer() const { return table_->infer != nullptr; }

  /// Makes this plugin the kernel of op() for each of dtypes() in this
  /// process. Fails when another plugin is installed already.
  Status install();
  /// Times the plugin's run() was called (successfully or not) since load.
  int64_t calls() const;
  /// Destroys every per-node state (also done by the destructor).
  void destroy_states();

 private:
  KernelPlugin() = default;
  friend struct PluginAdapter;

  std::string path_, name_;
  Op op_{};
  std::vector<DType> dtypes_;
  void* handle_ = nullptr;
  const ferry_kernel_v1* table_ = nullptr;
  struct NodeStates;
  std::unique_ptr<NodeStates> states_;
};

}  // namespace ferry::evaluate
