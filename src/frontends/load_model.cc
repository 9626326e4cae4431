// load_model: picks the frontend from what the path holds.
//
//   directory or *.pb      -> TensorFlow (SavedModel directory / frozen GraphDef)
//   *.pt2                  -> PyTorch: a torch.export archive (frontends/torch/, never unpickled)
//   *.pt, *.pth            -> refused: torch.save pickles, which ferry never opens
//   a zip archive          -> PyTorch (.pt2 under another name; named .onnx: an error)
//   text starting "graph " -> ferry text IR (ir/text_format.h)
//   anything else          -> ONNX
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontends/frontend.h"
#include "frontends/onnx/onnx_importer.h"
#include "frontends/tensorflow/tf_importer.h"
#include "frontends/torch/torch_importer.h"
#include "ir/text_format.h"

namespace ferry {
namespace {

/// True when the text, after blanks and `//` comment lines, starts with the word "graph".
bool looks_like_text_ir(const std::string& head) {
  size_t i = 0;
  while (i < head.size()) {
    char c = head[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (head.compare(i, 2, "//") == 0) {
      while (i < head.size() && head[i] != '\n') ++i;
    } else {
      break;
    }
  }
  return head.compare(i, 5, "graph") == 0 && i + 5 < head.size() &&
         (head[i + 5] == ' ' || head[i + 5] == '\t' || head[i + 5] == '\n');
}

Result<std::string> read_text(const std::string& path, size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return io_error(std::string("cannot open: ") + std::strerror(errno));
  std::string s(max_bytes, '\0');
  f.read(s.data(), std::streamsize(max_bytes));
  s.resize(size_t(f.gcount()));
  return s;
}

Result<std::unique_ptr<Graph>> load_text_ir(const std::string& path, uint64_t size) {
  FERRY_ASSIGN_OR_RETURN(std::string text, read_text(path, size_t(size)));
  FERRY_ASSIGN_OR_RETURN(auto g, parse_graph(text));
  g->info().source_path = path;
  if (g->info().format.empty()) g->info().format = "text";
  return g;
}

Result<std::unique_ptr<Graph>> load_any(const std::string& path, ImportReport* report,
                                        const ImportOptions& options) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return io_error(std::string("cannot open: ") + std::strerror(errno));
  std::string ext = std::filesystem::path(path).extension().string();
  if (S_ISDIR(st.st_mode) || ext == ".pb") return tf_import::import_tensorflow_path(path, report, options);
  if (!S_ISREG(st.st_mode)) return invalid_argument("is not a regular file");
  if (ext == ".pt2") return torch_import::import_torch_file(path, report);
  if (ext == ".pt" || ext == ".pth")
    return unsupported("is a torch.save pickle, which ferry never unpickles (loading one can run code); save the model "
                       "with torch.export instead: torch.export.save(torch.export.export(model.eval(), args), 'model.pt2')");
  FERRY_ASSIGN_OR_RETURN(std::string head, read_text(path, 4096));
  if (head.compare(0, 4, "PK\x03\x04") == 0) {
    // A zip named .onnx is a mistake, not a program: say what it is rather than judge it as a .pt2.
    if (ext == ".onnx")
      return invalid_argument("is a zip archive, not an ONNX protobuf (a torch.export program? name it .pt2)");
    return torch_import::import_torch_file(path, report);  // a zip under another name: .pt2
  }
  if (looks_like_text_ir(head)) {
    if (report) {
      *report = ImportReport{};
      report->format = "text";
    }
    return load_text_ir(path, uint64_t(st.st_size));
  }
  return onnx_import::import_onnx_file(path, report, options);
}

}  // namespace

Result<std::unique_ptr<Graph>> load_model(const std::string& path, ImportReport* report,
                                          const ImportOptions& options) {
  auto g = load_any(path, report, options);
  if (!g.ok()) return g.status().with_context("model '" + path + "'");
  return g;
}

}  // namespace ferry
