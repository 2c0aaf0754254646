#include "frontends/onnx/onnx_reader.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <functional>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "frontends/onnx/onnx_lowering.h"
#include "frontends/onnx/onnx_tensors.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "support/error.h"

namespace aotc {
namespace {

using onnx_frontend::kMaxOpset;
using onnx_frontend::kMinOpset;

// Quantized operators aotc does not read, refused as one group (QuantizeLinear, DequantizeLinear,
// QLinearConv and QLinearMatMul are read, docs/int8.md): int32 outputs (ConvInteger,
// MatMulInteger) and scales computed at run time (DynamicQuantizeLinear).
const std::set<std::string> kQuantizedOps = {"DynamicQuantizeLinear", "ConvInteger", "MatMulInteger"};

// ONNX's messages span lines (they print the node); aotc's errors are one line.
std::string one_line(const std::string& message) {
  std::string out;
  bool space = false;
  for (const char c : message) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

void write_all(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return bytes;
    bytes.append(buffer, static_cast<size_t>(n));
  }
}

// Runs one of ONNX's passes over `model` (the checker, shape inference) in a
// child process, and takes back what it leaves in the graph's value_info and
// outputs (all the two passes write), or its error. libonnx 1.12 dereferences
// null on some malformed graphs (aotc's fuzzer found a Conv over a 2-D input
// crashing convPoolShapeInference): a crash there is the file's fault, reported
// as such, and must not take aotc down. Only the value infos travel back, not
// the initializers: a ResNet-50 would otherwise be serialized and parsed again
// (a third of its load time).
void isolated(onnx::ModelProto& model, const std::string& path, const char* pass,
              const std::function<void(onnx::ModelProto&)>& run) {
  int fds[2];
  if (::pipe(fds) != 0) fail(ExitCode::kInternal, "cannot create a pipe for ONNX's ", pass);
  std::cout << std::flush;
  std::cerr << std::flush;
  const pid_t pid = ::fork();
  if (pid < 0) fail(ExitCode::kInternal, "cannot start a process for ONNX's ", pass);
  if (pid == 0) {
    ::close(fds[0]);
    // A crash ends the child quietly: no sanitizer's or fuzzer's handler reports
    // it as aotc's own; the parent does, as the file's fault.
    for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(signal, SIG_DFL);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    std::string reply;
    try {
      run(model);
      onnx::GraphProto infos;
      *infos.mutable_value_info() = model.graph().value_info();
      *infos.mutable_output() = model.graph().output();
      reply = "M" + infos.SerializeAsString();
    } catch (const std::exception& e) {
      reply = "E" + one_line(e.what());
    }
    write_all(fds[1], reply);
    ::_exit(0);
  }
  ::close(fds[1]);
  const std::string reply = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty())
    fail(ExitCode::kInvalidModel, path, ": ONNX's ", pass, " crashed on the model (libonnx 1.12 does on some "
         "malformed graphs)");
  if (reply[0] == 'E') fail(ExitCode::kInvalidModel, path, ": ONNX's ", pass, " refuses the model: ", reply.substr(1));
  onnx::GraphProto infos;
  AOTC_CHECK(infos.ParseFromArray(reply.data() + 1, static_cast<int>(reply.size() - 1)), "the value infos ONNX's ",
             pass, " returned do not parse");
  model.mutable_graph()->mutable_value_info()->Swap(infos.mutable_value_info());
  model.mutable_graph()->mutable_output()->Swap(infos.mutable_output());
}

// The version of the default domain ("" or "ai.onnx") the model imports.
int default_opset(const onnx::ModelProto& model, const std::string& path) {
  int opset = -1;
  std::string others;
  for (const auto& import : model.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") opset = static_cast<int>(import.version());
    else others += (others.empty() ? "" : ", ") + import.domain();
  }
  if (opset < 0 && !others.empty())
    fail(ExitCode::kUnsupported, path, ": the model imports no opset of the default ONNX domain, only ", others,
         "; aotc reads the default domain's operators");
  if (opset < 0) fail(ExitCode::kInvalidModel, path, ": the model imports no opset of the default ONNX domain");
  if (opset < kMinOpset || opset > kMaxOpset)
    fail(ExitCode::kUnsupported, path, ": opset ", opset, " of the default domain; aotc reads opsets ", kMinOpset,
         " to ", kMaxOpset);
  return opset;
}

onnx::ValueInfoProto* graph_input(onnx::GraphProto& graph, const std::string& name) {
  for (onnx::ValueInfoProto& input : *graph.mutable_input())
    if (input.name() == name) return &input;
  return nullptr;
}

std::string input_names(const onnx::GraphProto& graph) {
  std::string names;
  for (const onnx::ValueInfoProto& input : graph.input()) names += (names.empty() ? "'" : ", '") + input.name() + "'";
  return names.empty() ? "none" : names;
}

// --input-shape: the input's dims become these numbers.
void bind_input_shape(onnx::GraphProto& graph, const std::string& name, const Shape& shape, const std::string& path) {
  onnx::ValueInfoProto* input = graph_input(graph, name);
  if (!input)
    fail(ExitCode::kUsage, "--input-shape ", name, ": ", path, " has no graph input of that name (its inputs: ",
         input_names(graph), ")");
  onnx::TensorShapeProto* dims = input->mutable_type()->mutable_tensor_type()->mutable_shape();
  if (dims->dim_size() != 0 && dims->dim_size() != static_cast<int>(shape.size()))
    fail(ExitCode::kUsage, "--input-shape ", name, ": the input has ", dims->dim_size(), " dims, not ", shape.size());
  for (int i = 0; i < dims->dim_size(); ++i) {
    const onnx::TensorShapeProto::Dimension& d = dims->dim(i);
    if (d.has_dim_value() && d.dim_value() != shape[static_cast<size_t>(i)])
      fail(ExitCode::kUsage, "--input-shape ", name, ": dim ", i, " is fixed at ", d.dim_value(), " in the model, not ",
           shape[static_cast<size_t>(i)]);
  }
  dims->clear_dim();
  for (const int64_t d : shape) dims->add_dim()->set_dim_value(d);
}

// --constant: the tensor in `file` becomes an initializer, and the input is no
// longer one the library takes.
void bind_constant(onnx::GraphProto& graph, const std::string& name, const std::string& file, const std::string& path) {
  const onnx::ValueInfoProto* input = graph_input(graph, name);
  if (!input)
    fail(ExitCode::kUsage, "--constant ", name, ": ", path, " has no graph input of that name (its inputs: ",
         input_names(graph), ")");
  if (!input->type().has_tensor_type())
    fail(ExitCode::kUnsupported, path, ": graph input '", name, "' is not a tensor (a sequence, map or optional); "
         "aotc reads tensors");
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ExitCode::kIo, "--constant ", name, ": cannot open ", file);
  onnx::TensorProto tensor;
  if (!tensor.ParseFromIstream(&in))
    fail(ExitCode::kInvalidModel, "--constant ", name, ": ", file, " is not a serialized ONNX TensorProto");
  tensor.set_name(name);
  const int32_t declared = input->type().tensor_type().elem_type();
  if (tensor.data_type() != declared)
    fail(ExitCode::kUsage, "--constant ", name, ": ", file, " holds ", onnx_frontend::elem_type_name(tensor.data_type()),
         " but the graph input is ", onnx_frontend::elem_type_name(declared));
  for (onnx::TensorProto& t : *graph.mutable_initializer())
    if (t.name() == name) {
      t = tensor;
      return;
    }
  *graph.add_initializer() = tensor;
}

// The graph outputs: float32 tensors, as the library writes them, or the int8 and
// uint8 ones the IR has (a QuantizeLinear's; the lowering checks which).
void check_output_types(const onnx::GraphProto& graph, const std::string& path) {
  for (const onnx::ValueInfoProto& output : graph.output()) {
    const int32_t type = output.type().has_tensor_type() ? output.type().tensor_type().elem_type() : -1;
    if (type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::UINT8 && type != onnx::TensorProto::INT8)
      fail(ExitCode::kUnsupported, path, ": graph output '", output.name(), "' is ",
           type < 0 ? std::string("not a tensor") : "of element type " + onnx_frontend::elem_type_name(type),
           "; aotc's libraries output float32 tensors");
  }
}

// The graph inputs the library takes at run time: float32 tensors, or int8 and uint8
// ones that a DequantizeLinear, QLinearConv or QLinearMatMul reads (the lowering checks it). Checked before shape
// inference, which has its own opinions of other types.
void check_input_types(const onnx::GraphProto& graph, const std::string& path) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : graph.initializer()) initializers.insert(t.name());
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.count(input.name())) continue;
    if (!input.type().has_tensor_type())
      fail(ExitCode::kUnsupported, path, ": graph input '", input.name(), "' is not a tensor (a sequence, map or "
           "optional); aotc compiles float32 tensor inputs");
    const int32_t type = input.type().tensor_type().elem_type();
    if (type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::UINT8 && type != onnx::TensorProto::INT8)
      fail(ExitCode::kUnsupported, path, ": graph input '", input.name(), "' has element type ",
           onnx_frontend::elem_type_name(type), "; aotc compiles float32 inputs (bind an input that holds weights "
           "or shapes with --constant NAME=FILE.pb)");
  }
}

// Every operator aotc does not lower, counted and named at once.
void take_census(const onnx::GraphProto& graph, int opset, const std::string& path) {
  std::map<std::string, std::vector<std::string>> unsupported, quantized;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    // Appended, not "#" + std::to_string(i): GCC 12 warns falsely (-Wrestrict) on that form.
    const std::string name = node.name().empty() ? std::string("#").append(std::to_string(i)) : node.name();
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    const std::string op = default_domain ? node.op_type() : node.domain() + "." + node.op_type();
    if (default_domain && kQuantizedOps.count(node.op_type())) quantized[op].push_back(name);
    else if (!default_domain || !onnx_frontend::is_supported_op(node.op_type()))
      unsupported[op].push_back(name);
  }
  const auto listing = [](const std::map<std::string, std::vector<std::string>>& ops) {
    std::ostringstream os;
    const char* separator = "";
    for (const auto& [op, nodes] : ops) {
      os << separator << op << " x" << nodes.size() << " (";
      for (size_t k = 0; k < nodes.size() && k < 3; ++k) os << (k ? ", " : "") << nodes[k];
      if (nodes.size() > 3) os << ", ...";
      os << ")";
      separator = "; ";
    }
    return os.str();
  };
  if (!quantized.empty()) {
    size_t count = 0;
    for (const auto& [op, nodes] : quantized) count += nodes.size();
    fail(ExitCode::kUnsupported, path, ": quantized model: ", count, " quantized operators (", listing(quantized),
         ") aotc does not read; it reads QDQ models (QuantizeLinear, DequantizeLinear), QLinearConv and "
         "QLinearMatMul");
  }
  if (!unsupported.empty())
    fail(ExitCode::kUnsupported, path, ": unsupported operators at opset ", opset, ": ", listing(unsupported),
         ". Supported: ", onnx_frontend::supported_op_list());
}

}  // namespace

Graph read_onnx_model(const uint8_t* data, size_t size, const std::string& path, const ModelBindings& bindings) {
  onnx::ModelProto model;
  if (size > static_cast<size_t>(INT32_MAX) || !model.ParseFromArray(data, static_cast<int>(size)))
    fail(ExitCode::kInvalidModel, path, ": not an ONNX model (its bytes do not parse as an ONNX ModelProto)");
  if (!model.has_graph()) fail(ExitCode::kInvalidModel, path, ": the ONNX model has no graph");
  const int opset = default_opset(model, path);
  onnx_frontend::load_external_data(model, path);
  onnx::GraphProto& graph = *model.mutable_graph();
  check_output_types(graph, path);
  for (const auto& [name, file] : bindings.constants) bind_constant(graph, name, file, path);
  for (const auto& [name, shape] : bindings.input_shapes) bind_input_shape(graph, name, shape, path);
  isolated(model, path, "checker", [](onnx::ModelProto& m) { onnx::checker::check_model(m); });
  take_census(graph, opset, path);
  check_input_types(graph, path);
  isolated(model, path, "shape inference", [](onnx::ModelProto& m) {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions{/*check_type=*/true, /*error_mode=*/1,
                                                                   /*enable_data_propagation=*/true});
  });
  Graph g = onnx_frontend::lower_graph(model, opset, path);
  // Exporters name every graph alike ("torch_jit", "main_graph"): the file names the model.
  g.name = std::filesystem::path(path).stem().string();
  if (g.name.empty()) g.name = "model";
  return g;
}

}  // namespace aotc
