#include "evaluate/worker.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "validate/npy.h"
#include "evaluate/kernel_plugin.h"
#include "ferry/model.h"
#include "validate/npz.h"

namespace ferry::evaluate {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

/// The protocol's reply stream: a dup of the original stdout.
class ReplyStream {
 public:
  ReplyStream() {
    std::fflush(stdout);
    std::cout.flush();
    fd_ = ::dup(1);
    ::dup2(2, 1);  // from here on, anything printed to stdout lands in the log
  }
  ~ReplyStream() {
    if (fd_ >= 0) ::close(fd_);
  }
  void send(const Json& j) const {
    std::string line = j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    for (size_t done = 0; done < line.size();) {
      ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n <= 0) return;  // the parent is gone; nothing to tell it
      done += size_t(n);
    }
  }

 private:
  int fd_ = -1;
};

Json error_reply(const std::string& message) { return Json{{"ok", false}, {"error", message}}; }

Json shape_json(const Shape& s) {
  if (!s.rank_known()) return nullptr;
  Json dims = Json::array();
  for (const Dim& d : s.dims()) {
    if (d.is_static())
      dims.push_back(d.value());
    else
      dims.push_back(d.to_string());
  }
  return dims;
}

struct Worker {
  const WorkerOptions& o;
  std::unique_ptr<KernelPlugin> plugin;
  std::optional<Session> session;

  Result<Json> start() {
    if (!o.plugin.empty()) {
      FERRY_ASSIGN_OR_RETURN(plugin, KernelPlugin::load(o.plugin));
      FERRY_TRY(plugin->install());
    }
    LoadOptions load;
    load.signature = o.signature;
    FERRY_ASSIGN_OR_RETURN(Model model, Model::load(o.model, load));
    CompileOptions co;
    co.optimize = o.optimize;
    co.backend = "cpu";
    co.threads = o.threads;
    FERRY_ASSIGN_OR_RETURN(Session s, model.compile(co));
    session.emplace(std::move(s));

    Json ready = {{"ok", true}, {"ready", true}};
    ready["runtime"] = "ferry " + o.version + " (cpu backend" + std::string(o.optimize ? ", optimized" : "") + ")";
    Json ins = Json::array(), outs = Json::array();
    for (const TensorSpec& t : session->inputs())
      ins.push_back({{"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", shape_json(t.shape)}});
    for (const TensorSpec& t : session->outputs()) outs.push_back(t.name);
    ready["inputs"] = ins;
    ready["outputs"] = outs;
    if (plugin) {
      // The nodes the plugin can replace: its op, input 0 of a dtype it lists.
      int64_t nodes = 0;
      std::map<std::string, int64_t> ops;
      for (const Node* n : session->graph().nodes()) {
        ++ops[op_name(n->op())];
        if (n->op() != plugin->op() || n->num_inputs() == 0 || !n->input(0)) continue;
        for (DType dt : plugin->dtypes()) nodes += n->input(0)->dtype() == dt;
      }
      if (nodes == 0) {
        std::string list;
        for (const auto& [name, count] : ops) list += (list.empty() ? "" : ", ") + name + " x" + std::to_string(count);
        std::string dts;
        for (DType dt : plugin->dtypes()) dts += (dts.empty() ? "" : "/") + std::string(dtype_name(dt));
        return invalid_argument("kernel plugin '" + plugin->name() + "' (" + plugin->path() + ") implements " +
                                op_name(plugin->op()) + " for " + dts + ", but the " +
                                (o.optimize ? "optimized " : "") + "graph of " + o.model +
                                " has no such node (its ops: " + list + ")");
      }
      Json dts = Json::array();
      for (DType dt : plugin->dtypes()) dts.push_back(dtype_name(dt));
      ready["plugin"] = {{"name", plugin->name()}, {"path", plugin->path()}, {"op", op_name(plugin->op())},
                         {"dtypes", dts},          {"infer", plugin->has_infer()}, {"nodes", nodes}};
    }
    return ready;
  }

  Result<std::map<std::string, Tensor>> feeds(const Json& req) {
    if (!req.contains("inputs") || !req["inputs"].is_string()) return invalid_argument("request has no \"inputs\" file");
    const std::string path = req["inputs"];
    auto arrays = validate::read_npz(path);
    if (!arrays.ok()) return arrays.status().with_context(path);
    std::map<std::string, Tensor> out;
    for (const TensorSpec& t : session->inputs()) {
      auto it = arrays->find(t.name);
      if (it == arrays->end()) return invalid_argument(path + " has no array for the model input '" + t.name + "'");
      out.emplace(t.name, it->second);
    }
    return out;
  }

  Result<Json> run(const Json& req) {
    FERRY_ASSIGN_OR_RETURN(auto in, feeds(req));
    if (!req.contains("out") || !req["out"].is_string()) return invalid_argument("request has no \"out\" directory");
    const fs::path dir = std::string(req["out"]);
    std::error_code ec;
    fs::create_directories(dir, ec);
    const int64_t calls_before = plugin ? plugin->calls() : 0;
    FERRY_ASSIGN_OR_RETURN(std::vector<Tensor> outs, session->run(in));
    Json reply = {{"ok", true}};
    Json files = Json::array();
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string file = (dir / (std::to_string(i) + ".npy")).string();
      FERRY_TRY(write_npy(file, outs[i]).with_context(file));
      files.push_back({{"name", session->outputs()[i].name}, {"file", file}});
    }
    reply["outputs"] = files;
    if (plugin) {
      const int64_t calls = plugin->calls() - calls_before;
      if (calls == 0) return internal_error(never_called(in));
      reply["plugin_calls"] = calls;
      // The plan's steps the plugin runs (their PlanInfo kernel is "plugin:<name>").
      std::vector<std::vector<int64_t>> dims;
      for (const TensorSpec& t : session->inputs()) dims.push_back(in.at(t.name).dims());
      if (auto plan = session->plan(dims); plan.ok()) {
        Json steps = Json::array();
        for (const StepInfo& st : plan->steps)
          if (st.kernel == plugin_kernel_name()) steps.push_back({{"node", st.nodes}, {"shapes", st.shapes}});
        reply["plugin_steps"] = steps;
      }
    }
    return reply;
  }

  std::string plugin_kernel_name() const { return "plugin:" + plugin->name(); }

  /// Why a run did not reach the plugin: the interpreter fallback, or the kernel the plan gave its op.
  std::string never_called(const std::map<std::string, Tensor>& in) {
    std::string why = "kernel plugin '" + plugin->name() + "' was never called";
    if (std::string fb = session->fallback_reason(); !fb.empty())
      return why + ": the CPU backend runs this model in the reference interpreter (" + fb + ")";
    std::vector<std::vector<int64_t>> dims;
    for (const TensorSpec& t : session->inputs()) dims.push_back(in.at(t.name).dims());
    auto plan = session->plan(dims);
    if (!plan.ok()) return why;
    std::string kernels;
    for (const StepInfo& st : plan->steps)
      if (st.op == op_name(plugin->op())) kernels += (kernels.empty() ? "" : ", ") + st.nodes + ": " + st.kernel;
    return why + ": the CPU backend's plan runs " + op_name(plugin->op()) + " nodes on " +
           (kernels.empty() ? std::string("no step (none is left in the plan)") : kernels);
  }

  Result<Json> time(const Json& req) {
    FERRY_ASSIGN_OR_RETURN(auto in, feeds(req));
    const int64_t warmup = req.value("warmup", int64_t(1)), iters = req.value("iters", int64_t(10));
    if (warmup < 0 || iters < 1 || warmup > 1000000 || iters > 1000000)
      return invalid_argument("time: warmup must be >= 0 and iters >= 1");
    for (int64_t i = 0; i < warmup; ++i) FERRY_TRY(session->run(in).status());
    Json ns = Json::array();
    for (int64_t i = 0; i < iters; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      FERRY_TRY(session->run(in).status());
      auto t1 = std::chrono::steady_clock::now();
      ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    }
    return Json{{"ok", true}, {"ns", ns}};
  }
};

}  // namespace

int run_worker(const WorkerOptions& options) {
  ReplyStream reply;
  Worker w{options, nullptr, std::nullopt};
  auto ready = w.start();
  if (!ready.ok()) {
    reply.send(error_reply(ready.status().message()));
    return 2;
  }
  reply.send(*ready);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    Json req = Json::parse(line, nullptr, false);
    if (req.is_discarded() || !req.is_object() || !req.contains("cmd") || !req["cmd"].is_string()) {
      reply.send(error_reply("malformed request (expected a JSON object with \"cmd\"): " + line.substr(0, 200)));
      continue;
    }
    const std::string cmd = req["cmd"];
    if (cmd == "quit") break;
    Result<Json> r = cmd == "run"    ? w.run(req)
                     : cmd == "time" ? w.time(req)
                                     : Result<Json>(invalid_argument("unknown request '" + cmd + "'"));
    reply.send(r.ok() ? *r : error_reply(r.status().message()));
  }
  if (w.plugin) w.plugin->destroy_states();
  return 0;
}

}  // namespace ferry::evaluate
