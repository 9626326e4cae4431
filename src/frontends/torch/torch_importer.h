// frontends/torch/torch_importer.h — a torch.export program (.pt2) -> ferry::Graph, never unpickling.
//
// import_torch_file reads the archive (pt2_archive.h), the program JSON
// (models/<model>.json, graph schema 8.x) and the weight payloads, then imports:
//   - graph inputs: the signature's user inputs (dtype and symbolic shape from
//     tensor_values; torch's size symbols, e.g. "s77", become ferry symbolic dims and
//     their range_constraints go into the report);
//   - parameters, buffers and tensor constants: constants read from data/weights and
//     data/constants (raw storage + tensor_meta);
//   - nodes, in the program's order, through the import table; in-place overloads as
//     their functional form when the mutated tensor (or a view of it) is not read later;
//   - outputs: the signature's user outputs, named "output" or "output_<i>".
// Every unsupported op is collected into the report before the import fails. A
// program that mutates inputs or buffers, holds custom objects or pickled payloads
// is refused with the way to re-save it.
#pragma once

#include <memory>
#include <string>

#include "frontends/frontend.h"
#include "frontends/torch/pt2_archive.h"

namespace ferry::torch_import {

/// Imports an opened archive; `source` names it in the graph info.
Result<std::unique_ptr<Graph>> import_pt2(const Pt2Archive& archive, const std::string& source, ImportReport& report);

/// Reads a .pt2 file; errors do not repeat the path.
Result<std::unique_ptr<Graph>> import_torch_file(const std::string& path, ImportReport* report);

/// The same over the bytes of an archive held in memory (ferry.from_torch, the fuzzer).
Result<std::unique_ptr<Graph>> import_torch_bytes(std::string bytes, ImportReport* report);

}  // namespace ferry::torch_import
