// Constant tensors of a TFLite model, decoded at compile time: float32 as is,
// float16 widened, int8/uint8 dequantized, sparse (DENSIFY) ones made dense,
// int32/int64 read as integers (shapes, paddings, axes). Only what the
// checked reader passes in is read; every index inside the sparse format is
// bounds-checked, since it comes from the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schemas/tflite_generated.h"

namespace aotc::tflite {

// The file's shape of `t` (empty for a scalar).
std::vector<int64_t> declared_shape(const tfl::Tensor& t);

// The raw bytes of a constant's buffer (empty if it has none).
const flatbuffers::Vector<uint8_t>* buffer_bytes(const tfl::Model& model, const tfl::Tensor& t);

// The values of a dense float32 / float16 constant as float32, in the file's
// (row-major, NHWC) order. `what` names the tensor in messages.
std::vector<float> decode_float(const tfl::Tensor& t, const flatbuffers::Vector<uint8_t>& bytes,
                                const std::string& what);

// DEQUANTIZE of an int8/uint8 constant: scale * (q - zero_point), per tensor or
// per `quantized_dimension`.
std::vector<float> dequantize_int8(const tfl::Tensor& t, const flatbuffers::Vector<uint8_t>& bytes,
                                   const std::string& what);

// A quantization's zero points (empty if it has none). The FlatBuffers verifier aligns a
// vector's length, not its 8-byte elements: they are copied out, not read in place.
std::vector<int64_t> zero_points(const tfl::QuantizationParameters& q);

// The values of an int8 / uint8 / int32 / int64 constant.
std::vector<int64_t> decode_integers(const tfl::Tensor& t, const flatbuffers::Vector<uint8_t>& bytes,
                                     const std::string& what);

// DENSIFY: the dense float32 values of a sparse float32/float16 constant
// (TFLite's sparse format: per-dimension DENSE or SPARSE_CSR in traversal
// order; block-sparse tensors are refused).
std::vector<float> densify(const tfl::Tensor& t, const flatbuffers::Vector<uint8_t>& bytes,
                           const std::string& what);

// IEEE 754 binary16 to binary32 (exact).
float half_to_float(uint16_t h);

}  // namespace aotc::tflite
