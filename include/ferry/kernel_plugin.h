/* ferry/kernel_plugin.h — the kernel plugin C ABI, version 1 (ferry_kernel_v1).
 *
 * A kernel plugin is a shared library that implements one ferry op (the names
 * of src/ir/ops.def, e.g. "Attention") for some dtypes. `ferry evaluate` loads
 * it into a child process (`ferry worker MODEL --plugin LIB`), where it
 * replaces ferry's kernel for every node of that op in the model's optimized
 * graph, so an operator submission runs inside a real model on ferry's CPU
 * backend. docs/evaluate.md is the full description.
 *
 * The library exports one function:
 *
 *   FERRY_KERNEL_EXPORT const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version);
 *
 * ferry calls it once with FERRY_KERNEL_ABI_VERSION and reads `abi_version`
 * first: a plugin built for another ABI version is refused with a message
 * naming both versions. Per node of the op, ferry calls
 *
 *   create(node, &state, msg, n)     once, with the node's name and attributes
 *   infer(state, inputs, ..., outs)  optional: the output dtypes and shapes the
 *                                    plugin will produce for these inputs; ferry
 *                                    compares them with its own shape inference
 *   run(state, inputs, ..., outputs) every time the node runs; the outputs are
 *                                    preallocated by ferry with the inferred
 *                                    shapes, dense row-major
 *   destroy(state)                   at the end
 *
 * Every function but destroy returns a ferry_kernel_status; anything else than
 * FERRY_KERNEL_OK fails the run with the NUL-terminated text the plugin wrote
 * into `message` (message_size bytes, at least 256). Inputs are read-only and,
 * like the node and its attributes in create(), valid only during the call. run() may use threads of its own; ferry calls
 * one node at a time. An omitted optional input is a ferry_tensor with dtype
 * FERRY_DTYPE_UNDEFINED, rank 0 and data NULL.
 *
 * This header is plain C (C99 or C++), depends on nothing but <stddef.h> and
 * <stdint.h>, and is installed with the Python package (ferry/include/).
 */
#ifndef FERRY_KERNEL_PLUGIN_H_
#define FERRY_KERNEL_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FERRY_KERNEL_ABI_VERSION 1u
#define FERRY_KERNEL_MAX_RANK 8
#define FERRY_KERNEL_ENTRY_SYMBOL "ferry_kernel_entry"

#if defined(_WIN32)
#define FERRY_KERNEL_EXPORT __declspec(dllexport)
#else
#define FERRY_KERNEL_EXPORT __attribute__((visibility("default")))
#endif

/* Element types: the numbers of ONNX's TensorProto.DataType. */
typedef enum ferry_kernel_dtype {
  FERRY_DTYPE_UNDEFINED = 0,
  FERRY_DTYPE_F32 = 1,
  FERRY_DTYPE_U8 = 2,
  FERRY_DTYPE_I8 = 3,
  FERRY_DTYPE_U16 = 4,
  FERRY_DTYPE_I16 = 5,
  FERRY_DTYPE_I32 = 6,
  FERRY_DTYPE_I64 = 7,
  FERRY_DTYPE_BOOL = 9,
  FERRY_DTYPE_F16 = 10,
  FERRY_DTYPE_F64 = 11,
  FERRY_DTYPE_U32 = 12,
  FERRY_DTYPE_U64 = 13,
  FERRY_DTYPE_BF16 = 16
} ferry_kernel_dtype;

typedef enum ferry_kernel_status {
  FERRY_KERNEL_OK = 0,
  FERRY_KERNEL_ERROR = 1,       /* the call failed; message says why */
  FERRY_KERNEL_UNSUPPORTED = 2  /* these inputs or attributes are not handled; message says which */
} ferry_kernel_status;

/* A dense row-major tensor. */
typedef struct ferry_tensor {
  int32_t dtype;        /* ferry_kernel_dtype */
  int32_t rank;         /* <= FERRY_KERNEL_MAX_RANK */
  const int64_t* dims;  /* rank entries */
  void* data;           /* inputs: read only */
} ferry_tensor;

/* What infer() fills in per output. */
typedef struct ferry_tensor_shape {
  int32_t dtype;
  int32_t rank;
  int64_t dims[FERRY_KERNEL_MAX_RANK];
} ferry_tensor_shape;

typedef enum ferry_attr_kind {
  FERRY_ATTR_INT = 1,
  FERRY_ATTR_FLOAT = 2,
  FERRY_ATTR_STRING = 3,
  FERRY_ATTR_INTS = 4,
  FERRY_ATTR_FLOATS = 5
} ferry_attr_kind;

/* One attribute of the node: the ones set on it and the schema defaults of
 * the rest (an optional attribute without a default is absent). Tensor and
 * string-list attributes are not passed. */
typedef struct ferry_attr {
  const char* name;
  int32_t kind;          /* ferry_attr_kind */
  int64_t i;             /* FERRY_ATTR_INT */
  double f;              /* FERRY_ATTR_FLOAT */
  const char* s;         /* FERRY_ATTR_STRING */
  const int64_t* ints;   /* FERRY_ATTR_INTS, `count` entries */
  const double* floats;  /* FERRY_ATTR_FLOATS, `count` entries */
  int64_t count;
} ferry_attr;

/* The graph node a kernel instance is created for. */
typedef struct ferry_kernel_node {
  const char* name;  /* node name ("" when unnamed) */
  const char* op;    /* the op, as in ferry_kernel_v1.op */
  int32_t num_inputs;
  int32_t num_outputs;
  const ferry_attr* attrs;
  int32_t num_attrs;
} ferry_kernel_node;

typedef struct ferry_kernel_v1 {
  uint32_t abi_version;  /* FERRY_KERNEL_ABI_VERSION the plugin was built with */
  uint32_t struct_size;  /* sizeof(ferry_kernel_v1) */
  const char* name;      /* kernel name, e.g. "attention_f32_flash__avx2" */
  const char* op;        /* ferry op it implements, e.g. "Attention" */
  const int32_t* dtypes; /* dtypes of input 0 it accepts, terminated by FERRY_DTYPE_UNDEFINED */
  int32_t (*create)(const ferry_kernel_node* node, void** state, char* message, size_t message_size);
  int32_t (*infer)(void* state, const ferry_tensor* inputs, int32_t num_inputs, ferry_tensor_shape* outputs,
                   int32_t num_outputs, char* message, size_t message_size); /* may be NULL */
  int32_t (*run)(void* state, const ferry_tensor* inputs, int32_t num_inputs, ferry_tensor* outputs,
                 int32_t num_outputs, char* message, size_t message_size);
  void (*destroy)(void* state);
} ferry_kernel_v1;

typedef const ferry_kernel_v1* (*ferry_kernel_entry_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FERRY_KERNEL_PLUGIN_H_ */
