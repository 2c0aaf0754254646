#include "frontends/tflite/tflite_constants.h"

#include <bit>
#include <cstring>
#include <functional>

#include "ir/graph.h"
#include "support/error.h"

namespace aotc::tflite {
namespace {

using flatbuffers::uoffset_t;
using tfl::TensorType;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Elements of a flat buffer of scalars of the tensor's type, decoded to float.
std::vector<float> floats_of(TensorType type, const uint8_t* data, size_t count, const std::string& what) {
  std::vector<float> out(count);
  switch (type) {
    case TensorType::FLOAT32:
      for (size_t i = 0; i < count; ++i) out[i] = load<float>(data + 4 * i);
      return out;
    case TensorType::FLOAT16:
      for (size_t i = 0; i < count; ++i) out[i] = half_to_float(load<uint16_t>(data + 2 * i));
      return out;
    default:
      fail(ExitCode::kUnsupported, what, " has type ", tfl::EnumNameTensorType(type),
           " where a float32 or float16 constant is needed");
  }
}

size_t float_size(TensorType type) { return type == TensorType::FLOAT16 ? 2 : 4; }

// The index vector of one sparse dimension, as integers.
std::vector<int64_t> index_vector(tfl::SparseIndexVector type, const void* table, const std::string& what) {
  // A union's type may be set with its table absent.
  if (!table) fail(ExitCode::kInvalidModel, what, ": a sparse dimension has no index vector");
  std::vector<int64_t> out;
  switch (type) {
    case tfl::SparseIndexVector::Int32Vector:
      if (const auto* v = static_cast<const tfl::Int32Vector*>(table)->values()) out.assign(v->begin(), v->end());
      break;
    case tfl::SparseIndexVector::Uint16Vector:
      if (const auto* v = static_cast<const tfl::Uint16Vector*>(table)->values()) out.assign(v->begin(), v->end());
      break;
    case tfl::SparseIndexVector::Uint8Vector:
      if (const auto* v = static_cast<const tfl::Uint8Vector*>(table)->values()) out.assign(v->begin(), v->end());
      break;
    default: fail(ExitCode::kInvalidModel, what, ": a sparse dimension has no index vector");
  }
  return out;
}

}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // 112 = 127 - 15
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal: normalise the mantissa.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

std::vector<int64_t> declared_shape(const tfl::Tensor& t) {
  std::vector<int64_t> shape;
  if (t.shape()) shape.assign(t.shape()->begin(), t.shape()->end());
  return shape;
}

const flatbuffers::Vector<uint8_t>* buffer_bytes(const tfl::Model& model, const tfl::Tensor& t) {
  if (!model.buffers() || t.buffer() >= model.buffers()->size()) return nullptr;
  const auto* data = model.buffers()->Get(t.buffer())->data();
  return data && data->size() > 0 ? data : nullptr;
}

std::vector<float> decode_float(const tfl::Tensor& t, const flatbuffers::Vector<uint8_t>& bytes,
                                const std::string& what) {
  // The reader has checked that a dense constant's size matches its shape and type.
  return floats_of(t.type(), bytes.data(), bytes.size() / float_size(t.type()), what);
}

std::vector<float> dequantize_int8(const tfl::Tensor& t, const flatbuffers::Vector<uint8_t>& bytes,
                                   const std::string& what) {
  const auto* q = t.quantization();
  if (!q || !q->scale() || q->scale()->size() == 0)
    fail(ExitCode::kUnsupported, what, ": DEQUANTIZE of an int8 constant without a scale");
  const Shape shape = declared_shape(t);
  const size_t channels = q->scale()->size();
  const std::vector<int64_t> zeros = zero_points(*q);
  const auto zero_point = [&](size_t c) -> int64_t { return c < zeros.size() ? zeros[c] : 0; };
  // Elements per step of the quantized dimension (1 channel: the whole tensor).
  int64_t inner = 1;
  const int axis = q->quantized_dimension();
  if (channels > 1) {
    if (axis < 0 || static_cast<size_t>(axis) >= shape.size() || shape[static_cast<size_t>(axis)] != static_cast<int64_t>(channels))
      fail(ExitCode::kInvalidModel, what, ": ", channels, " quantization scales do not match dimension ", axis,
           " of shape ", to_string(shape));
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  }
  std::vector<float> out(bytes.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t c = channels > 1 ? static_cast<size_t>(static_cast<int64_t>(i) / inner) % channels : 0;
    const int64_t value = t.type() == TensorType::INT8 ? static_cast<int8_t>(bytes[static_cast<uoffset_t>(i)])
                                                        : bytes[static_cast<uoffset_t>(i)];
    out[i] = q->scale()->Get(static_cast<uoffset_t>(c)) * static_cast<float>(value - zero_point(c));
  }
  return out;
}

std::vector<int64_t> zero_points(const tfl::QuantizationParameters& q) {
  std::vector<int64_t> out;
  if (const auto* v = q.zero_point()) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(v->Data());
    for (uoffset_t i = 0; i < v->size(); ++i) out.push_back(load<int64_t>(bytes + size_t{i} * sizeof(int64_t)));
  }
  return out;
}

std::vector<int64_t> decode_integers(const tfl::Tensor& t, const flatbuffers::Vector<uint8_t>& bytes,
                                     const std::string& what) {
  std::vector<int64_t> out;
  if (t.type() == TensorType::INT32) {
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) out.push_back(load<int32_t>(bytes.data() + i));
  } else if (t.type() == TensorType::INT64) {
    for (size_t i = 0; i + 8 <= bytes.size(); i += 8) out.push_back(load<int64_t>(bytes.data() + i));
  } else if (t.type() == TensorType::INT8) {
    for (const uint8_t b : bytes) out.push_back(static_cast<int8_t>(b));
  } else if (t.type() == TensorType::UINT8) {
    out.assign(bytes.begin(), bytes.end());
  } else {
    fail(ExitCode::kUnsupported, what, " has type ", tfl::EnumNameTensorType(t.type()),
         " where an integer constant is needed");
  }
  return out;
}

std::vector<float> densify(const tfl::Tensor& t, const flatbuffers::Vector<uint8_t>& bytes,
                           const std::string& what) {
  const tfl::SparsityParameters* sparsity = t.sparsity();
  if (!sparsity || !sparsity->dim_metadata() || !sparsity->traversal_order())
    fail(ExitCode::kInvalidModel, what, ": DENSIFY of a tensor without sparsity parameters");
  if (sparsity->block_map() && sparsity->block_map()->size() > 0)
    fail(ExitCode::kUnsupported, what, ": block-sparse constants are not supported (only per-element sparsity)");
  const Shape shape = declared_shape(t);
  const size_t rank = shape.size();
  const auto& order = *sparsity->traversal_order();
  const auto& dims = *sparsity->dim_metadata();
  if (order.size() != rank || dims.size() != rank)
    fail(ExitCode::kInvalidModel, what, ": sparsity parameters describe ", dims.size(), " dimensions but the shape ",
         to_string(shape), " has ", rank);
  std::vector<bool> seen(rank, false);
  for (const int32_t d : order) {
    if (d < 0 || static_cast<size_t>(d) >= rank || seen[static_cast<size_t>(d)])
      fail(ExitCode::kInvalidModel, what, ": traversal_order is not a permutation of the dimensions");
    seen[static_cast<size_t>(d)] = true;
  }
  const std::vector<float> values =
      floats_of(t.type(), bytes.data(), bytes.size() / float_size(t.type()), what);
  std::vector<float> dense(static_cast<size_t>(num_elements(shape)), 0.0f);
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shape[d];

  // The index vectors of the SPARSE_CSR levels, decoded once.
  std::vector<std::vector<int64_t>> segments(rank), indices(rank);
  for (size_t level = 0; level < rank; ++level) {
    const tfl::DimensionMetadata& meta = *dims.Get(static_cast<uoffset_t>(level));
    if (meta.format() == tfl::DimensionType::DENSE) continue;
    segments[level] = index_vector(meta.array_segments_type(), meta.array_segments(), what);
    indices[level] = index_vector(meta.array_indices_type(), meta.array_indices(), what);
  }

  // Walks level `level` (the dimension order[level]) below position `parent`
  // of the level above, as TFLite's format converter does.
  std::function<void(size_t, int64_t)> walk = [&](size_t level, int64_t parent) {
    const tfl::DimensionMetadata& meta = *dims.Get(static_cast<uoffset_t>(level));
    const size_t dim = static_cast<size_t>(order.Get(static_cast<uoffset_t>(level)));
    const auto visit = [&](int64_t i, int64_t position) {
      if (i < 0 || i >= shape[dim])
        fail(ExitCode::kInvalidModel, what, ": sparse index ", i, " is outside dimension ", dim, " of ", to_string(shape));
      index[dim] = i;
      if (level + 1 < rank) return walk(level + 1, position);
      if (position < 0 || static_cast<size_t>(position) >= values.size())
        fail(ExitCode::kInvalidModel, what, ": the sparse structure addresses value ", position, " but the tensor holds ",
             values.size());
      int64_t flat = 0;
      for (size_t d = 0; d < rank; ++d) flat += index[d] * strides[d];
      dense[static_cast<size_t>(flat)] = values[static_cast<size_t>(position)];
    };
    if (meta.format() == tfl::DimensionType::DENSE) {
      const int64_t size = meta.dense_size();
      if (size != shape[dim])
        fail(ExitCode::kInvalidModel, what, ": dense_size ", size, " of dimension ", dim, " does not match shape ",
             to_string(shape));
      for (int64_t i = 0; i < size; ++i) visit(i, parent * size + i);
      return;
    }
    const std::vector<int64_t>& segs = segments[level];
    const std::vector<int64_t>& idx = indices[level];
    if (parent < 0 || static_cast<size_t>(parent) + 1 >= segs.size())
      fail(ExitCode::kInvalidModel, what, ": sparse segment ", parent, " is outside array_segments (", segs.size(),
           " entries)");
    const int64_t begin = segs[static_cast<size_t>(parent)], end = segs[static_cast<size_t>(parent) + 1];
    if (begin < 0 || begin > end || static_cast<size_t>(end) > idx.size())
      fail(ExitCode::kInvalidModel, what, ": sparse segment [", begin, ", ", end, ") is outside array_indices (",
           idx.size(), " entries)");
    for (int64_t k = begin; k < end; ++k) visit(idx[static_cast<size_t>(k)], k);
  };
  if (rank == 0) fail(ExitCode::kInvalidModel, what, ": a sparse scalar");
  walk(0, 0);
  return dense;
}

}  // namespace aotc::tflite
