// python/src/ferry_ext.cc — ferry._ferry, the pybind11 layer over the public
// C++ API (include/ferry/model.h). The Python-facing names, docstrings and
// errors are documented in python/ferry/_ferry.pyi and docs/python.md.
//
// Memory:
//   inputs   a C-contiguous array of the model's dtype in native byte order is
//            lent to the run as is (a Buffer over its memory, no copy); others
//            are converted with numpy.ascontiguousarray first. Backends never
//            write into inputs (api/backend.h).
//   outputs  a tensor whose buffer nothing else holds is handed to numpy: the
//            array's base is a capsule owning the buffer, so it outlives the
//            Session and the Model. A tensor that shares its buffer (with an
//            input, a model constant, another output or a backend arena) is
//            copied first, so no output aliases anything.
// Errors: every failed Status raises ferry.errors.<class> (from_status), with
// ferry's message unchanged.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <vector>

#include "api/inspection_json.h"
#include "report/precision_report.h"
#include "ferry/model.h"

namespace py = pybind11;

namespace ferry::python {
namespace {

// --- errors ----------------------------------------------------------------

/// Raises the ferry.errors exception for `status` (which must not be ok).
[[noreturn]] void raise_status(const Status& status, py::object details = py::none()) {
  py::object exc = py::module_::import("ferry.errors")
                       .attr("from_status")(status_code_name(status.code()), status.message(), details);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

[[noreturn]] void raise_invalid_argument(const std::string& message) { raise_status(invalid_argument(message)); }

template <class T>
T value_or_raise(Result<T> r) {
  if (!r.ok()) raise_status(r.status());
  return std::move(r).value();
}

py::object json_to_python(const nlohmann::ordered_json& j) {
  return py::module_::import("json").attr("loads")(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

py::list unsupported_list(const ImportReport& report) {
  py::list out;
  for (const UnsupportedOp& u : report.unsupported) {
    py::dict d;
    d["node_name"] = u.node_name;
    d["op_type"] = u.op_type;
    d["domain"] = u.domain;
    d["opset"] = u.opset;
    d["reason"] = u.reason;
    d["proposed_repair"] = u.proposed_repair;
    out.append(d);
  }
  return out;
}

// --- dtypes ----------------------------------------------------------------

struct DTypeName {
  DType dtype;
  const char* numpy;
};
constexpr DTypeName kNumpyNames[] = {
    {DType::f32, "float32"}, {DType::f16, "float16"}, {DType::bf16, "bfloat16"}, {DType::f64, "float64"},
    {DType::i8, "int8"},     {DType::u8, "uint8"},    {DType::i16, "int16"},     {DType::u16, "uint16"},
    {DType::i32, "int32"},   {DType::u32, "uint32"},  {DType::i64, "int64"},     {DType::u64, "uint64"},
    {DType::boolean, "bool"},
};

const char* numpy_name(DType t) {
  for (const DTypeName& e : kNumpyNames)
    if (e.dtype == t) return e.numpy;
  return "undefined";
}

/// The ferry dtype of a numpy dtype (by name, so ml_dtypes.bfloat16 maps too); undefined if none.
DType from_numpy_dtype(const py::dtype& dt) {
  std::string name = py::str(dt.attr("name"));
  for (const DTypeName& e : kNumpyNames)
    if (name == e.numpy) return e.dtype;
  return DType::undefined;
}

/// numpy has no bfloat16: ml_dtypes (a dependency of onnx) provides one; None without it.
py::object bfloat16_dtype() {
  try {
    return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
  } catch (py::error_already_set&) {
    PyErr_Clear();
    return py::none();
  }
}

/// The numpy dtype for a ferry dtype; None for bf16 without ml_dtypes.
py::object numpy_dtype(DType t) {
  if (t == DType::bf16) return bfloat16_dtype();
  return py::dtype(numpy_name(t));
}

// --- tensors ---------------------------------------------------------------

/// Memory of a numpy array lent to one run. Holds no Python reference (it may
/// be released without the GIL); the caller keeps the array alive meanwhile.
class BorrowedBuffer final : public Buffer {
 public:
  BorrowedBuffer(void* data, size_t size) : data_(static_cast<uint8_t*>(data)), size_(size) {}
  uint8_t* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  uint8_t* data_;
  size_t size_;
};

std::string shape_text(const py::array& a) {
  std::string s = "[";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? "," : "") + std::to_string(a.shape(i));
  return s + "]";
}

/// Wraps `obj` (an array or anything numpy.asarray accepts) as a Tensor for input `spec`,
/// without copying when it is C-contiguous, native-endian and of the model's dtype.
/// `keep` holds the arrays lent to the run.
Tensor input_tensor(const TensorSpec& spec, py::handle obj, std::vector<py::array>* keep) {
  py::module_ np = py::module_::import("numpy");
  py::array arr = py::reinterpret_borrow<py::array>(np.attr("asarray")(obj));
  DType dt = from_numpy_dtype(arr.dtype());
  if (dt != spec.dtype) {
    std::string want = std::string(dtype_name(spec.dtype)) + " (numpy " + numpy_name(spec.dtype) + ")";
    raise_invalid_argument("input '" + spec.name + "' must be " + want + ", got numpy " +
                           std::string(py::str(arr.dtype().attr("name"))) + " " + shape_text(arr));
  }
  bool native = arr.dtype().attr("isnative").cast<bool>();
  if (!native) arr = py::reinterpret_borrow<py::array>(arr.attr("astype")(arr.dtype().attr("newbyteorder")("=")));
  if (!(arr.flags() & py::array::c_style)) arr = py::reinterpret_borrow<py::array>(np.attr("ascontiguousarray")(arr));
  keep->push_back(arr);
  std::vector<int64_t> dims(arr.shape(), arr.shape() + arr.ndim());
  auto buffer = std::make_shared<BorrowedBuffer>(const_cast<void*>(arr.data()), size_t(arr.nbytes()));
  return value_or_raise(Tensor::view(dt, std::move(dims), std::move(buffer)));
}

/// Hands `t` to numpy (see the file comment): zero-copy when nothing else holds its buffer.
py::object output_array(Tensor t) {
  const bool exclusive = t.buffer() && t.buffer().use_count() == 1 &&
                         dynamic_cast<const BorrowedBuffer*>(t.buffer().get()) == nullptr;
  if (!exclusive) t = t.clone();
  py::object dt = numpy_dtype(t.dtype());
  if (dt.is_none()) {  // bf16 without ml_dtypes: widen to f32 (exact)
    Tensor f = Tensor::empty(DType::f32, t.dims());
    for (int64_t i = 0; i < t.numel(); ++i) f.data<float>()[i] = bf16_to_f32(t.data<uint16_t>()[i]);
    t = std::move(f);
    dt = py::dtype("float32");
  }
  std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end());
  auto* owner = new std::shared_ptr<Buffer>(t.buffer());
  py::capsule base(owner, [](void* p) { delete static_cast<std::shared_ptr<Buffer>*>(p); });
  return py::array(py::reinterpret_borrow<py::dtype>(dt), shape, std::vector<py::ssize_t>{}, t.raw(), base);
}

// --- TensorSpec ------------------------------------------------------------

py::object shape_tuple(const Shape& s) {
  if (!s.rank_known()) return py::none();
  py::list dims;
  for (const Dim& d : s.dims()) {
    if (d.is_static()) dims.append(d.value());
    else if (d.is_symbol()) dims.append(d.symbol());
    else dims.append(py::none());
  }
  return py::tuple(dims);
}

std::string spec_repr(const TensorSpec& t) {
  return "TensorInfo(name='" + t.name + "', dtype='" + dtype_name(t.dtype) + "', shape=" + t.shape.to_string() + ")";
}

std::vector<TensorSpec> copy_specs(const std::vector<TensorSpec>& v) { return v; }

// --- compile options -------------------------------------------------------

CompileOptions parse_compile_options(const py::kwargs& kw) {
  CompileOptions o;
  for (const auto& [key, value] : kw) {
    std::string name = py::str(key);
    auto type_error = [&](const char* want) {
      throw py::type_error("compile(): option '" + name + "' must be " + want + ", got " +
                           std::string(py::str(py::type::of(value).attr("__name__"))));
    };
    if (name == "optimize") {
      if (!py::isinstance<py::bool_>(value)) type_error("a bool");
      o.optimize = value.cast<bool>();
    } else if (name == "backend") {
      if (!py::isinstance<py::str>(value)) type_error("a str");
      o.backend = value.cast<std::string>();
    } else if (name == "threads") {
      if (value.is_none()) continue;
      if (py::isinstance<py::bool_>(value) || !py::isinstance<py::int_>(value)) type_error("an int or None");
      o.threads = value.cast<int>();
    } else if (name == "isa") {
      if (value.is_none()) continue;
      if (!py::isinstance<py::str>(value)) type_error("a str or None");
      o.isa = value.cast<std::string>();
    } else if (name == "blocked_layouts" || name == "reference_kernels") {
      if (!py::isinstance<py::bool_>(value)) type_error("a bool");
      (name == "blocked_layouts" ? o.blocked_layouts : o.reference_kernels) = value.cast<bool>();
    } else if (name == "precision") {
      if (value.is_none()) continue;
      if (!py::isinstance<py::str>(value)) type_error("a str or None");
      o.precision = value.cast<std::string>();
    } else if (name == "conv_algorithm") {
      if (!py::isinstance<py::str>(value)) type_error("a str");
      o.conv_algorithm = value.cast<std::string>();
    } else if (name == "fp32_math") {
      if (!py::isinstance<py::str>(value)) type_error("a str");
      o.fp32_math = value.cast<std::string>();
    } else if (name == "int8_observer") {
      if (!py::isinstance<py::str>(value)) type_error("a str");
      o.int8_observer = value.cast<std::string>();
    } else if (name == "keep_fp32" || name == "force") {
      if (py::isinstance<py::str>(value)) type_error("a list of str");
      (name == "keep_fp32" ? o.keep_fp32 : o.force) = value.cast<std::vector<std::string>>();
    } else {
      throw py::type_error("compile() got an unknown option '" + name +
                           "' (options: optimize, backend, threads, isa, blocked_layouts, reference_kernels, "
                           "conv_algorithm, fp32_math, precision, keep_fp32, force, int8_observer)");
    }
  }
  return o;
}

py::dict options_dict(const CompileOptions& o) {
  py::dict d;
  d["optimize"] = o.optimize;
  d["backend"] = o.backend;
  d["threads"] = o.threads;
  d["isa"] = o.isa;
  d["blocked_layouts"] = o.blocked_layouts;
  d["reference_kernels"] = o.reference_kernels;
  d["conv_algorithm"] = o.conv_algorithm;
  d["fp32_math"] = o.fp32_math;
  d["precision"] = o.precision;
  return d;
}

// --- the module ------------------------------------------------------------

// What ferry.register_ops collected (python/ferry/op_library.py), as one library text.
std::string registered_op_library() {
  return py::module_::import("ferry.op_library").attr("registered_text")().cast<std::string>();
}

Model load(const std::string& path, const std::string& external_data_dir, bool repair,
           const std::vector<std::string>& op_library) {
  LoadOptions opts;
  opts.external_data_dir = external_data_dir;
  opts.repair = repair;
  opts.op_libraries = op_library;
  opts.op_library_text = registered_op_library();
  ImportReport report;
  Result<Model> model = internal_error("not loaded");
  {
    py::gil_scoped_release release;
    model = Model::load(path, opts, &report);
  }
  if (!model.ok()) raise_status(model.status(), report.unsupported.empty() ? py::object(py::none())
                                                                          : py::object(unsupported_list(report)));
  return std::move(model).value();
}

py::dict run_session(Session& session, const py::handle& feeds) {
  if (!py::isinstance(feeds, py::module_::import("collections.abc").attr("Mapping")))
    throw py::type_error("Session.run() takes a mapping {input name: array}, got " +
                         std::string(py::str(py::type::of(feeds).attr("__name__"))));
  std::vector<py::array> keep;  // lent to the run; released after it, with the GIL held
  std::map<std::string, Tensor> inputs;
  py::dict items = py::dict(py::reinterpret_borrow<py::object>(feeds));
  for (const auto& [key, value] : items) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error("Session.run(): input names must be str, got " +
                           std::string(py::str(py::type::of(key).attr("__name__"))));
    std::string name = key.cast<std::string>();
    const TensorSpec* spec = nullptr;
    for (const TensorSpec& s : session.inputs())
      if (s.name == name) spec = &s;
    if (!spec) {  // let the C++ check word the error (it lists the inputs)
      inputs[name] = Tensor::empty(DType::f32, {});
      continue;
    }
    inputs[name] = input_tensor(*spec, value, &keep);
  }
  Result<std::vector<Tensor>> outputs = internal_error("not run");
  {
    py::gil_scoped_release release;
    outputs = session.run(inputs);
    inputs.clear();  // drop the lent buffers before deciding which outputs are exclusive
  }
  if (!outputs.ok()) raise_status(outputs.status());
  py::dict result;
  std::vector<Tensor>& outs = *outputs;
  for (size_t i = 0; i < outs.size(); ++i) {
    Tensor t = std::move(outs[i]);
    outs[i] = Tensor();
    result[py::str(session.outputs()[i].name)] = output_array(std::move(t));
  }
  return result;
}

std::string model_repr(const Model& m) {
  auto list = [](const std::vector<TensorSpec>& v) {
    std::string s;
    for (const TensorSpec& t : v) s += (s.empty() ? "" : ", ") + t.name + ": " + dtype_name(t.dtype) + t.shape.to_string();
    return "[" + s + "]";
  };
  return "<ferry.Model '" + m.path() + "' inputs=" + list(m.inputs()) + " outputs=" + list(m.outputs()) + ">";
}

}  // namespace
}  // namespace ferry::python

PYBIND11_MODULE(_ferry, m) {
  using namespace ferry;
  using namespace ferry::python;
  m.doc() = "ferry's compiled core: load, inspect, compile and run models (see the ferry package).";

  py::class_<TensorSpec>(m, "TensorInfo", "A model input or output: name, dtype and (possibly symbolic) shape.")
      .def_property_readonly("name", [](const TensorSpec& t) { return t.name; }, "The tensor's name in the model.")
      .def_property_readonly("dtype", [](const TensorSpec& t) { return std::string(dtype_name(t.dtype)); },
                             "ferry's dtype name: 'f32', 'f16', 'bf16', 'i64', 'bool', ...")
      .def_property_readonly("numpy_dtype", [](const TensorSpec& t) { return numpy_dtype(t.dtype); },
                             "The numpy dtype arrays for this tensor have (ml_dtypes.bfloat16 for bf16; None "
                             "without ml_dtypes).")
      .def_property_readonly("shape", [](const TensorSpec& t) { return shape_tuple(t.shape); },
                             "A tuple of dims: int for a static dim, str for a symbolic one ('N'), None for an "
                             "unknown one; None when even the rank is unknown.")
      .def("__repr__", &spec_repr)
      .def("__eq__", [](const TensorSpec& a, const TensorSpec& b) {
        return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape;
      });

  py::class_<Session>(m, "Session",
                      "A compiled model (Model.compile). run() takes and returns numpy arrays; one run at a time "
                      "(concurrent callers wait), the GIL is released while it runs.")
      .def_property_readonly("inputs", [](const Session& s) { return copy_specs(s.inputs()); },
                             "The model inputs (list of TensorInfo).")
      .def_property_readonly("outputs", [](const Session& s) { return copy_specs(s.outputs()); },
                             "The model outputs (list of TensorInfo), in the order run() returns them.")
      .def_property_readonly("backend", [](const Session& s) { return s.options().backend; },
                             "The backend this session runs on.")
      .def_property_readonly("options", [](const Session& s) { return options_dict(s.options()); },
                             "The compile options in effect, as a dict.")
      .def_property_readonly("precision",
                             [](const Session& s) { return json_to_python(precision_report_json(s.precision())); },
                             "Each floating node's precision and why: {'mode', 'summary', 'nodes': [{'node', 'op', "
                             "'precision', 'exec', 'sensitivity', 'reason'}]} (docs/precision.md).")
      .def("run", &run_session, py::arg("inputs"),
           "Runs the model on {input name: array} and returns {output name: array} in model order.\n\n"
           "Every input must be given, with the model's dtype (no implicit casts), its rank and static dims;\n"
           "a symbolic dim must have one value across inputs. A C-contiguous native-endian array of the\n"
           "right dtype is used without copying; others are converted. Outputs are fresh arrays owned by\n"
           "numpy (no copy is made), valid after the Session is gone.\n\n"
           "Raises InvalidArgumentError (a ValueError) for wrong names, dtypes or shapes, and the ferry\n"
           "error matching any failure while running.")
      .def("__repr__", [](const Session& s) {
        return "<ferry.Session backend='" + s.options().backend + "' optimize=" +
               (s.options().optimize ? "True" : "False") + ">";
      });

  py::class_<Model>(m, "Model", "A loaded model (ferry.load): its graph as imported, shapes inferred.")
      .def_property_readonly("path", &Model::path, "The file the model was loaded from.")
      .def_property_readonly("inputs", [](const Model& mo) { return copy_specs(mo.inputs()); },
                             "The model inputs (list of TensorInfo).")
      .def_property_readonly("outputs", [](const Model& mo) { return copy_specs(mo.outputs()); },
                             "The model outputs (list of TensorInfo).")
      .def("inspect",
           [](const Model& mo, bool optimized, const std::string& target) {
             CompileOptions t;
             t.backend = target;
             return json_to_python(inspection_json(mo.inspect(optimized, t)));
           },
           py::arg("optimized") = false, py::arg("target") = "cpu",
           "What `ferry inspect --json` reports, as a dict: format, producer, opsets, inputs/outputs\n"
           "(name, dtype, shape with symbolic dims as str), op histograms, parameters, FLOPs, shape\n"
           "inference, coverage (supported, unsupported ops with reason and proposed_repair) and error.\n"
           "With optimized=True, describes the graph after ferry's optimizer for `target`'s backend\n"
           "(as that backend runs it).")
      .def(
          "compile",
          [](const Model& mo, const py::kwargs& kw) {
            CompileOptions o = parse_compile_options(kw);
            Result<Session> s = internal_error("not compiled");
            {
              py::gil_scoped_release release;
              s = mo.compile(o);
            }
            return value_or_raise(std::move(s));
          },
          "compile(*, optimize=True, backend='cpu', threads=0, isa=None, blocked_layouts=True,\n"
          "        reference_kernels=False, conv_algorithm='auto', fp32_math='exact', precision=None,\n"
          "        keep_fp32=[], force=[], int8_observer='minmax') -> Session\n\n"
          "precision: 'fp32', 'bf16', 'fp16', 'int8' or 'auto' (None: the model's saved decisions, else fp32);\n"
          "without bf16/fp16 hardware the lowered nodes are emulated; int8 (Conv, MatMul, Gemm) is fake\n"
          "quantization, its inputs calibrated on 8 seeded random samples by int8_observer ('minmax',\n"
          "'percentile', 'entropy' or 'mse') unless the model holds saved decisions (docs/precision.md).\n"
          "Optimizes a copy of the graph for the backend's target (unless optimize=False) and compiles\n"
          "it for `backend` (ferry.backends() lists them). threads: worker threads, 0 or None for the\n"
          "backend's default. cpu backend: isa caps ferry's own kernels ('generic', 'avx2', 'avx512',\n"
          "'amx'; None: the host's); blocked_layouts=False keeps plain layouts; reference_kernels=True\n"
          "runs every step on its reference kernel (for bisecting a numeric difference); conv_algorithm:\n"
          "fp32 3x3 stride-1 convolutions on oneDNN's Winograd kernels where they gain ('auto', AVX-512\n"
          "only), always where oneDNN has them ('winograd') or never ('direct'); fp32_math='bf16x3' runs\n"
          "the fp32 Attention kernel as three bf16 products a product on AMX tiles (~1e-5 from fp64;\n"
          "PyTorch's float32 matmul precision 'high'; exact fp32 where AMX-BF16 is not usable).\n"
          "An unknown option raises TypeError naming it; an unknown backend InvalidArgumentError.")
      .def(
          "save",
          [](const Model& mo, const std::string& path, bool optimize, const std::string& target) {
            Status st;
            CompileOptions t;
            t.backend = target;
            {
              py::gil_scoped_release release;
              st = mo.save(path, optimize, t);
            }
            if (!st.ok()) raise_status(st);
          },
          py::arg("path"), py::arg("optimize") = true, py::arg("target") = "cpu",
          "Writes the model as ONNX (like `ferry convert --target`), optimized first for `target`'s\n"
          "backend unless optimize=False.")
      .def("__repr__", &model_repr);

  m.def("load", &load, py::arg("path"), py::arg("external_data_dir") = "", py::arg("repair") = false,
        py::arg("op_library") = std::vector<std::string>{},
        "load(path, external_data_dir='', repair=False, op_library=[]) -> Model\n\n"
        "Loads a model file (.onnx, a TensorFlow SavedModel or .pb, a torch.export .pt2, or ferry text\n"
        "IR; a .pt2 is read without unpickling anything). Raises FileError (an OSError) when it cannot be\n"
        "read, InvalidModelError when it is malformed, and UnsupportedError when it uses what ferry\n"
        "does not support; UnsupportedError.unsupported then lists every such node (node_name,\n"
        "op_type, domain, opset, reason, proposed_repair). repair=True rewrites ops ferry has no\n"
        "importer for (ONNX Runtime contrib ops, ...) by its repair rules (docs/repair.md);\n"
        "Model.inspect()['repairs'] lists each repair. op_library names op library files (text, or\n"
        ".py calling ferry.register_ops) whose decompositions replace custom ops; entries registered\n"
        "with ferry.register_ops apply too (docs/repair.md, \"Op libraries\").");
  m.def(
      "inspect",
      [](const std::string& path, bool optimized, bool repair, const std::vector<std::string>& op_library) {
        Inspection in;
        LoadOptions load;
        load.repair = repair;
        load.op_libraries = op_library;
        load.op_library_text = registered_op_library();
        {
          py::gil_scoped_release release;
          in = inspect_model(path, optimized, load);
        }
        if (!in.graph && in.error.code() == StatusCode::kIoError) raise_status(in.error);
        return json_to_python(inspection_json(in));
      },
      py::arg("path"), py::arg("optimized") = false, py::arg("repair") = false,
      py::arg("op_library") = std::vector<std::string>{},
      "inspect(path, optimized=False, repair=False, op_library=[]) -> dict\n\n"
      "Model.inspect() for a file, also when it does not load: then the dict holds what the\n"
      "frontend learned (source ops, every unsupported node) and 'error'. Raises FileError only\n"
      "when the file cannot be read.");
  m.def(
      "backends",
      [] {
        py::list out;
        for (const BackendInfo& b : available_backends()) {
          py::dict d;
          d["name"] = b.name;
          d["description"] = b.description;
          out.append(d);
        }
        return out;
      },
      "The backends Model.compile(backend=...) accepts: a list of {name, description}; the first is the default.");
}
