#include "ir/parser.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <unordered_map>

#include "ir/printer.h"
#include "ir/shape_rules.h"
#include "support/error.h"

namespace aotc {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
}

// An attribute value: a number, a bool, or a list of numbers.
struct AttrValue {
  std::vector<double> numbers;
  std::string word;  // a dtype name
  bool is_list = false;
  bool is_bool = false;
  bool is_word = false;
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& filename) : text_(text), filename_(filename) {}

  Graph parse() {
    expect_word("graph");
    graph_.name = name_token();
    expect('{');
    while (!try_consume('}')) {
      skip_space();
      if (peek() == '%') {
        parse_node();
      } else {
        std::string keyword = word();
        if (keyword == "input") parse_input();
        else if (keyword == "const") parse_const();
        else if (keyword == "output") graph_.outputs.push_back(use());
        else error("expected 'input', 'const', 'output', a node or '}', got '" + keyword + "'");
      }
    }
    skip_space();
    if (pos_ != text_.size()) error("unexpected text after the graph");
    if (graph_.outputs.empty()) error("the graph has no output");
    return std::move(graph_);
  }

 private:
  // ---- Lexing -------------------------------------------------------------
  [[noreturn]] void error(const std::string& message) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    fail(ExitCode::kInvalidModel, filename_, ":", line, ":", col, ": ", message);
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '#' || (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/')) {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool try_consume(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (!try_consume(c)) error(std::string("expected '") + c + "'");
  }

  std::string word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    if (start == pos_) error("expected a word");
    return text_.substr(start, pos_ - start);
  }

  void expect_word(const std::string& w) {
    size_t start = pos_;
    if (word() != w) {
      pos_ = start;
      error("expected '" + w + "'");
    }
  }

  std::string name_token() {
    skip_space();
    if (peek() == '"') {
      ++pos_;
      std::string s;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        s += text_[pos_++];
      }
      if (pos_ >= text_.size()) error("unterminated quoted name");
      ++pos_;
      return s;
    }
    size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    if (start == pos_) error("expected a name");
    return text_.substr(start, pos_ - start);
  }

  std::string tensor_ref() {
    expect('%');
    return name_token();
  }

  double number() {
    skip_space();
    const char* begin = text_.c_str() + pos_;
    char* end = nullptr;
    double v = std::strtod(begin, &end);  // accepts inf, -inf, nan, exponents
    if (end == begin) error("expected a number");
    pos_ += static_cast<size_t>(end - begin);
    return v;
  }

  int64_t integer() {
    double v = number();
    if (v != std::floor(v) || std::fabs(v) > 9.0e15) error("expected an integer");
    return static_cast<int64_t>(v);
  }

  std::vector<double> number_list() {
    expect('[');
    std::vector<double> values;
    if (try_consume(']')) return values;
    do values.push_back(number());
    while (try_consume(','));
    expect(']');
    return values;
  }

  // dtype, shape and, for an integer dtype, its quantization (printer.h).
  Tensor type() {
    Tensor t;
    skip_space();
    const size_t start = pos_;
    const std::string dtype = word();
    if (!dtype_from_name(dtype, &t.dtype)) {
      pos_ = start;
      error("unknown dtype '" + dtype + "' (f32, i8, u8, i32)");
    }
    t.shape = shape();
    if (is_integer(t.dtype)) {
      skip_space();
      if (peek() != '{') error(std::string(dtype_name(t.dtype)) + " needs its quantization: {scale=[...], zero_point=[...]}");
      AttrReader r(*this, attr_block());
      t.quant = std::make_shared<const Quantization>(r.quantization());
      r.finish();
    }
    return t;
  }

  Shape shape() {
    std::vector<double> dims = number_list();
    Shape shape;
    for (double d : dims) {
      if (d != std::floor(d) || d < 1 || d > 2147483647.0) error("a dimension must be a positive integer");
      shape.push_back(static_cast<int64_t>(d));
    }
    if (shape.size() > 8) error("rank above 8 is not supported");
    if (num_elements_checked(shape) < 0) error("tensor has more than 2^31 elements");
    return shape;
  }

  static int64_t num_elements_checked(const Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) {
      if (n > (int64_t{1} << 31) / d) return -1;
      n *= d;
    }
    return n;
  }

  // ---- Graph entities -------------------------------------------------------
  TensorId define(const std::string& name, Tensor t) {
    if (ids_.count(name)) error("tensor '%" + name + "' is defined twice");
    t.name = name;
    TensorId id = graph_.add_tensor(std::move(t));
    ids_[name] = id;
    return id;
  }

  // Reads a tensor reference and resolves it; errors point at the reference.
  TensorId use() {
    skip_space();
    const size_t start = pos_;
    std::string name = tensor_ref();
    auto it = ids_.find(name);
    if (it == ids_.end()) {
      pos_ = start;
      error("tensor '%" + name + "' is used before it is defined");
    }
    return it->second;
  }

  void parse_input() {
    std::string name = tensor_ref();
    expect(':');
    graph_.inputs.push_back(define(name, type()));
    check_type(graph_.inputs.back());
  }

  void check_type(TensorId id) {
    try {
      check_element_type(graph_.tensor(id), "");
    } catch (const UserError& e) {
      error(e.what());
    }
  }

  void parse_const() {
    std::string name = tensor_ref();
    expect(':');
    Tensor type_of = type();
    const auto count = static_cast<size_t>(num_elements(type_of.shape));
    if (!try_consume('=')) error("constant '%" + name + "' needs data: = [...], = splat(v) or = random(seed[, scale])");
    std::vector<float> data;
    skip_space();
    if (peek() == '[') {
      for (double v : number_list()) data.push_back(static_cast<float>(v));
      if (data.size() != count)
        error("constant '%" + name + "' has " + std::to_string(data.size()) + " values, its type needs " +
              std::to_string(count));
    } else {
      std::string fn = word();
      expect('(');
      if (fn == "splat") {
        data.assign(count, static_cast<float>(number()));
      } else if (fn == "random" && is_integer(type_of.dtype)) {
        // random(seed): uniform over the dtype's values (those a float holds exactly).
        std::mt19937 rng(static_cast<uint32_t>(integer()));
        std::uniform_int_distribution<int64_t> uniform(std::max(dtype_min(type_of.dtype), dtype_min(DType::F32)),
                                                       std::min(dtype_max(type_of.dtype), dtype_max(DType::F32)));
        data.resize(count);
        for (float& v : data) v = static_cast<float>(uniform(rng));
      } else if (fn == "random") {
        std::mt19937 rng(static_cast<uint32_t>(integer()));
        // random(seed, scale): uniform in [-scale, scale) (weights scaled by their fan-in).
        const float scale = try_consume(',') ? static_cast<float>(number()) : 1.0f;
        std::uniform_real_distribution<float> uniform(-scale, scale);
        data.resize(count);
        for (float& v : data) v = uniform(rng);
      } else {
        error("unknown constant initialiser '" + fn + "'");
      }
      expect(')');
    }
    type_of.data = std::make_shared<const std::vector<float>>(std::move(data));
    check_type(define(name, std::move(type_of)));
  }

  std::map<std::string, AttrValue> attr_block() {
    std::map<std::string, AttrValue> attrs;
    if (!try_consume('{')) return attrs;
    if (try_consume('}')) return attrs;
    do {
      std::string key = word();
      expect('=');
      AttrValue v;
      skip_space();
      if (peek() == '[') {
        v.is_list = true;
        v.numbers = number_list();
      } else if (std::isalpha(static_cast<unsigned char>(peek())) && text_.compare(pos_, 3, "inf") != 0) {
        std::string b = word();
        if (b == "true" || b == "false") {
          v.is_bool = true;
          v.numbers = {b == "true" ? 1.0 : 0.0};
        } else {
          v.is_word = true;
          v.word = b;
        }
      } else {
        v.numbers = {number()};
      }
      if (!attrs.emplace(key, v).second) error("attribute '" + key + "' given twice");
    } while (try_consume(','));
    expect('}');
    return attrs;
  }

  // Typed access to a parsed attribute block; every key must be consumed.
  class AttrReader {
   public:
    AttrReader(Parser& p, std::map<std::string, AttrValue> attrs) : p_(p), attrs_(std::move(attrs)) {}
    template <size_t N>
    std::array<int, N> ints(const std::string& key, std::array<int, N> fallback) {
      auto it = attrs_.find(key);
      if (it == attrs_.end()) return fallback;
      if (!it->second.is_list || it->second.numbers.size() != N)
        p_.error("attribute '" + key + "' must be a list of " + std::to_string(N) + " integers");
      std::array<int, N> out{};
      for (size_t i = 0; i < N; ++i) out[i] = to_int(key, it->second.numbers[i]);
      attrs_.erase(it);
      return out;
    }
    std::vector<double> list(const std::string& key) {
      auto it = attrs_.find(key);
      if (it == attrs_.end()) p_.error("missing attribute '" + key + "'");
      if (!it->second.is_list) p_.error("attribute '" + key + "' must be a list");
      std::vector<double> out = it->second.numbers;
      attrs_.erase(it);
      return out;
    }
    std::vector<int64_t> int_list(const std::string& key) {
      auto it = attrs_.find(key);
      if (it == attrs_.end()) p_.error("missing attribute '" + key + "'");
      if (!it->second.is_list) p_.error("attribute '" + key + "' must be a list");
      std::vector<int64_t> out;
      for (double v : it->second.numbers) out.push_back(to_int(key, v));
      attrs_.erase(it);
      return out;
    }
    std::string word(const std::string& key, const std::optional<std::string>& fallback = std::nullopt) {
      auto it = attrs_.find(key);
      if (it == attrs_.end() && fallback) return *fallback;
      if (it == attrs_.end()) p_.error("missing attribute '" + key + "'");
      if (!it->second.is_word) p_.error("attribute '" + key + "' must be a name");
      std::string v = it->second.word;
      attrs_.erase(it);
      return v;
    }
    double scalar(const std::string& key, double fallback) {
      auto it = attrs_.find(key);
      if (it == attrs_.end()) return fallback;
      if (it->second.is_list || it->second.is_bool || it->second.is_word) p_.error("attribute '" + key + "' must be a number");
      double v = it->second.numbers[0];
      attrs_.erase(it);
      return v;
    }
    int integer(const std::string& key, int fallback) {
      return to_int(key, scalar(key, fallback));
    }
    bool boolean(const std::string& key, bool fallback) {
      auto it = attrs_.find(key);
      if (it == attrs_.end()) return fallback;
      if (!it->second.is_bool) p_.error("attribute '" + key + "' must be true or false");
      bool v = it->second.numbers[0] != 0;
      attrs_.erase(it);
      return v;
    }
    // axis (default -1: per tensor), scale and zero_point, as a type or quantize writes them.
    Quantization quantization() {
      Quantization q;
      q.axis = integer("axis", -1);
      for (double v : list("scale")) q.scale.push_back(static_cast<float>(v));
      q.zero_point = int_list("zero_point");
      return q;
    }
    void finish() {
      if (!attrs_.empty()) p_.error("unknown attribute '" + attrs_.begin()->first + "'");
    }

   private:
    int to_int(const std::string& key, double v) {
      if (v != std::floor(v) || std::fabs(v) > 2147483647.0)
        p_.error("attribute '" + key + "' must be an integer");
      return static_cast<int>(v);
    }
    Parser& p_;
    std::map<std::string, AttrValue> attrs_;
  };

  static Conv2dAttrs conv2d_attrs(AttrReader& r) {
    Conv2dAttrs a;
    a.stride = r.ints<2>("stride", a.stride);
    a.pad = r.ints<4>("pad", a.pad);
    a.dilation = r.ints<2>("dilation", a.dilation);
    a.groups = r.integer("groups", a.groups);
    return a;
  }
  QuantizeAttrs quantize_attrs(AttrReader& r) {
    QuantizeAttrs a;
    const std::string dtype = r.word("dtype");
    if (!dtype_from_name(dtype, &a.dtype)) error("attribute 'dtype': unknown dtype '" + dtype + "'");
    a.quant = r.quantization();
    const std::string arithmetic = r.word("arithmetic", arithmetic_name(a.arithmetic));
    if (!arithmetic_from_name(arithmetic, &a.arithmetic))
      error("attribute 'arithmetic': unknown arithmetic '" + arithmetic + "' (onnx or tflite)");
    return a;
  }

  Attrs attrs_for(OpKind op, std::map<std::string, AttrValue> block) {
    AttrReader r(*this, std::move(block));
    Attrs attrs = NoAttrs{};
    switch (op) {
      case OpKind::Conv2d:
        attrs = conv2d_attrs(r);
        break;
      case OpKind::QConv2d: {
        QConv2dAttrs a;
        a.conv = conv2d_attrs(r);
        a.out = quantize_attrs(r);
        a.min = r.integer("min", 0);
        a.max = r.integer("max", 0);
        attrs = a;
        break;
      }
      case OpKind::QGlobalAvgPool:
        attrs = quantize_attrs(r);
        break;
      case OpKind::QLookup: {
        QLookupAttrs a;
        a.out = quantize_attrs(r);
        a.table = r.int_list("table");
        attrs = a;
        break;
      }
      case OpKind::QAdd: {
        QAddAttrs a;
        a.out = quantize_attrs(r);
        a.min = r.integer("min", 0);
        a.max = r.integer("max", 0);
        attrs = a;
        break;
      }
      case OpKind::BatchNorm:
        attrs = BatchNormAttrs{static_cast<float>(r.scalar("eps", 1e-5))};
        break;
      case OpKind::Clamp:
        attrs = ClampAttrs{static_cast<float>(r.scalar("min", 0)), static_cast<float>(r.scalar("max", 0))};
        break;
      case OpKind::Elu:
        attrs = EluAttrs{static_cast<float>(r.scalar("alpha", 1))};
        break;
      case OpKind::MaxPool2d:
      case OpKind::AvgPool2d: {
        Pool2dAttrs a;
        a.kernel = r.ints<2>("kernel", a.kernel);
        a.stride = r.ints<2>("stride", a.stride);
        a.pad = r.ints<4>("pad", a.pad);
        a.dilation = r.ints<2>("dilation", a.dilation);
        a.ceil_mode = r.boolean("ceil_mode", a.ceil_mode);
        a.count_include_pad = r.boolean("count_include_pad", a.count_include_pad);
        attrs = a;
        break;
      }
      case OpKind::AdaptiveAvgPool2d:
        attrs = AdaptiveAvgPool2dAttrs{r.ints<2>("output_size", {1, 1})};
        break;
      case OpKind::Flatten:
        attrs = FlattenAttrs{r.integer("start_dim", 1), r.integer("end_dim", -1)};
        break;
      case OpKind::Reshape:
        attrs = ReshapeAttrs{r.int_list("shape")};
        break;
      case OpKind::Concat:
      case OpKind::Softmax:
        attrs = AxisAttrs{r.integer("axis", 1)};
        break;
      case OpKind::Pad: {
        PadAttrs a;
        a.pads = r.int_list("pads");
        a.value = static_cast<float>(r.scalar("value", 0));
        attrs = a;
        break;
      }
      case OpKind::Transpose: {
        TransposeAttrs a;
        for (int64_t d : r.int_list("perm")) a.perm.push_back(static_cast<int>(d));
        attrs = a;
        break;
      }
      case OpKind::ResizeBilinear:
      case OpKind::ResizeNearest: {
        ResizeAttrs a;
        a.size = r.ints<2>("size", a.size);
        a.align_corners = r.boolean("align_corners", a.align_corners);
        a.half_pixel_centers = r.boolean("half_pixel_centers", a.half_pixel_centers);
        attrs = a;
        break;
      }
      case OpKind::ConvTranspose2d: {
        ConvTranspose2dAttrs a;
        a.stride = r.ints<2>("stride", a.stride);
        a.pad = r.ints<4>("pad", a.pad);
        attrs = a;
        break;
      }
      case OpKind::DepthToSpace:
        attrs = DepthToSpaceAttrs{r.integer("block", 2)};
        break;
      case OpKind::Quantize:
        attrs = quantize_attrs(r);
        break;
      default:
        break;
    }
    r.finish();
    return attrs;
  }

  // epilogue[relu, clamp{min=0, max=6}, affine(%s, %t), add(%r)]
  void parse_epilogue(Node& node) {
    expect('[');
    do {
      std::string name = word();
      PostOp p;
      if (name == "relu") p.kind = PostOpKind::kRelu;
      else if (name == "clamp") p.kind = PostOpKind::kClamp;
      else if (name == "hardswish") p.kind = PostOpKind::kHardSwish;
      else if (name == "sigmoid") p.kind = PostOpKind::kSigmoid;
      else if (name == "tanh") p.kind = PostOpKind::kTanh;
      else if (name == "prelu") p.kind = PostOpKind::kPRelu;
      else if (name == "affine") p.kind = PostOpKind::kAffine;
      else if (name == "add") p.kind = PostOpKind::kAdd;
      else if (name == "mul") p.kind = PostOpKind::kMul;
      else if (name == "elu") p.kind = PostOpKind::kElu;
      else if (name == "softplus") p.kind = PostOpKind::kSoftplus;
      else error("unknown post-op '" + name + "'");
      if (p.kind == PostOpKind::kClamp) {
        AttrReader r(*this, attr_block());
        p.min = static_cast<float>(r.scalar("min", 0));
        p.max = static_cast<float>(r.scalar("max", 0));
        r.finish();
      } else if (p.kind == PostOpKind::kElu) {
        AttrReader r(*this, attr_block());
        p.alpha = static_cast<float>(r.scalar("alpha", 1));
        r.finish();
      }
      std::vector<TensorId> operands;
      if (post_op_operand_count(p.kind) > 0) {
        expect('(');
        do operands.push_back(use());
        while (try_consume(','));
        expect(')');
        if (static_cast<int>(operands.size()) != post_op_operand_count(p.kind))
          error("post-op '" + name + "' takes " + std::to_string(post_op_operand_count(p.kind)) + " operands");
      }
      node.append_post_op(p, operands);
    } while (try_consume(','));
    expect(']');
  }

  void parse_node() {
    std::vector<std::string> out_names;
    do out_names.push_back(tensor_ref());
    while (try_consume(','));
    expect('=');
    Node node;
    node.name = out_names[0];
    std::string op_text = word();
    if (!op_from_name(op_text, &node.op)) error("unknown op '" + op_text + "'");
    expect('(');
    if (!try_consume(')')) {
      do node.inputs.push_back(use());
      while (try_consume(','));
      expect(')');
    }
    node.attrs = attrs_for(node.op, attr_block());
    skip_space();
    if (text_.compare(pos_, 8, "epilogue") == 0) {
      pos_ += 8;
      parse_epilogue(node);
    }
    expect(':');
    std::vector<Tensor> types;
    if (try_consume('(')) {
      do types.push_back(type());
      while (try_consume(','));
      expect(')');
    } else {
      types.push_back(type());
    }
    if (types.size() != out_names.size()) error("the node has " + std::to_string(out_names.size()) +
                                                " results but " + std::to_string(types.size()) + " types");
    for (size_t i = 0; i < out_names.size(); ++i) node.outputs.push_back(define(out_names[i], types[i]));

    std::vector<Shape> inferred;
    try {
      inferred = infer_node_shapes(graph_, node);
    } catch (const UserError& e) {
      error(e.what());
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const Tensor& declared = graph_.tensor(node.outputs[i]);
      Tensor expected;
      expected.shape = i < inferred.size() ? inferred[i] : Shape{};
      set_element_type(expected, infer_element_type(graph_, node));
      if (i >= inferred.size() || expected.shape != declared.shape || !same_element_type(expected, declared))
        error("declared type " + type_text(declared) + " of '%" + out_names[i] + "' does not match the inferred " +
              (i < inferred.size() ? type_text(expected) : "[?]"));
    }
    graph_.nodes.push_back(std::move(node));
  }

  const std::string& text_;
  const std::string& filename_;
  size_t pos_ = 0;
  Graph graph_;
  std::unordered_map<std::string, TensorId> ids_;
};

}  // namespace

Graph parse_graph(const std::string& text, const std::string& filename) {
  return Parser(text, filename).parse();
}

}  // namespace aotc
