// The typed entry points of a model whose inputs and outputs are quantized (typed_io.air:
// uint8 in, int8 and float32 out): the header states each one's dtype, scale and zero point;
// the C++ run takes exactly those element types (another does not compile, and the float
// entry points do not exist); the C entry point refuses a wrong or missing dtype with its
// own status and writes nothing; both compute the model's semantics (qconv2d, docs/int8.md).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "test_support.h"
#include "typed_io.h"

namespace {

template <typename M, typename In, typename Out>
concept RunsWith = requires(M m, const In* in, Out* out, float* f) { m.run(in, out, f); };

// The model's element types compile; float or signed input, or a uint8 output, does not.
static_assert(RunsWith<typed_io::Model, uint8_t, int8_t>);
static_assert(!RunsWith<typed_io::Model, float, int8_t>);
static_assert(!RunsWith<typed_io::Model, int8_t, int8_t>);
static_assert(!RunsWith<typed_io::Model, uint8_t, uint8_t>);
template <typename M>
concept RunsFloatArrays = requires(M m, const float* const* in, float* const* out) { m.run(in, out); };
static_assert(!RunsFloatArrays<typed_io::Model>);

// y[o] = clamp(round(sum_c (x[c] - 128) * w[o][c] * 0.5 * 0.25 / 1) - 3), z = (y + 3) * 1.
int8_t expected_y(const uint8_t* x, int o, int pixel) {
  static const int w[3][2] = {{1, -2}, {3, 4}, {-5, 6}};
  int acc = 0;
  for (int c = 0; c < 2; ++c) acc += (x[c * 16 + pixel] - 128) * w[o][c];
  const long v = std::lrint(static_cast<float>(acc) * 0.125f) - 3;  // ties to even (the default rounding mode)
  return static_cast<int8_t>(v < -128 ? -128 : v > 127 ? 127 : v);
}

}  // namespace

int main() {
  EXPECT(aotc_typed_io_inputs[0].dtype == AOTC_UINT8);
  EXPECT(aotc_typed_io_inputs[0].scale == 0.5f && aotc_typed_io_inputs[0].zero_point == 128);
  EXPECT(aotc_typed_io_outputs[0].dtype == AOTC_INT8);
  EXPECT(aotc_typed_io_outputs[0].scale == 1.0f && aotc_typed_io_outputs[0].zero_point == -3);
  EXPECT(aotc_typed_io_outputs[1].dtype == AOTC_FLOAT32 && aotc_typed_io_outputs[1].scale == 0.0f);

  alignas(64) static uint8_t arena[TYPED_IO_ARENA_BYTES + 64];
  uint8_t x[32];
  for (int i = 0; i < 32; ++i) x[i] = static_cast<uint8_t>(i * 37 % 256);  // 0..255, both sides of 128
  int8_t y[48];
  float z[48];
  typed_io::Model model(arena, sizeof arena);
  EXPECT(model.status() == aotc::Status::kOk);
  EXPECT(model.run(x, y, z) == aotc::Status::kOk);
  int saturated = 0;
  for (int o = 0; o < 3; ++o)
    for (int p = 0; p < 16; ++p) {
      const int i = o * 16 + p;
      EXPECT(y[i] == expected_y(x, o, p));
      EXPECT(z[i] == static_cast<float>(y[i] + 3));
      saturated += y[i] == -128 || y[i] == 127;
    }
  printf("typed run: %d of 48 outputs saturated\n", saturated);

  // The C entry point: the same outputs; a wrong or missing dtype refused before any write.
  int8_t y2[48];
  float z2[48];
  const void* inputs[1] = {x};
  void* outputs[2] = {y2, z2};
  const aotc_dtype in_types[1] = {AOTC_UINT8};
  const aotc_dtype out_types[2] = {AOTC_INT8, AOTC_FLOAT32};
  const aotc_dtype wrong_in[1] = {AOTC_FLOAT32};
  const aotc_dtype wrong_out[2] = {AOTC_UINT8, AOTC_FLOAT32};
  std::memset(y2, 0x5a, sizeof y2);
  int status = aotc_typed_io_run_typed(arena, sizeof arena, wrong_in, inputs, out_types, outputs);
  EXPECT(status == AOTC_ERROR_WRONG_DTYPE);
  status = aotc_typed_io_run_typed(arena, sizeof arena, in_types, inputs, wrong_out, outputs);
  EXPECT(status == AOTC_ERROR_WRONG_DTYPE);
  status = aotc_typed_io_run_typed(arena, sizeof arena, nullptr, inputs, out_types, outputs);
  EXPECT(status == AOTC_ERROR_INVALID_ARGUMENT);
  for (int8_t v : y2) EXPECT(v == 0x5a);
  printf("wrong dtype: %s\n", aotc_status_message(AOTC_ERROR_WRONG_DTYPE));
  EXPECT(aotc_typed_io_run_typed(arena, sizeof arena, in_types, inputs, out_types, outputs) == AOTC_OK);
  EXPECT(std::memcmp(y, y2, sizeof y) == 0 && std::memcmp(z, z2, sizeof z) == 0);
  if (test_failures == 0) printf("PASSED\n");
  return test_failures == 0 ? 0 : 1;
}
