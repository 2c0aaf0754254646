// One convolution layer (NCHW, KxK, padding K/2, bias, relu) scheduled by one of
// Halide 14's autoschedulers, JIT-compiled and timed on one thread:
//
//   autoschedulers PLUGIN_DIR SCHEDULER C O H K     SCHEDULER: Mullapudi2016, Li2018, Adams2019
//
// prints "<us per run>". The algorithm is the plain definition (an RDom over
// taps and input channels), as an autoscheduler expects it; the estimates are
// the layer's exact extents, and the machine parameters one core, 1 MiB of
// last-level cache per core and Halide's default balance of 40. Adams2019 runs
// with the cost model weights Debian ships with it (not retrained here).
#include <Halide.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace Halide;

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: autoschedulers PLUGIN_DIR SCHEDULER C O H K\n");
    return 1;
  }
  setenv("HL_NUM_THREADS", "1", 1);
  const std::string plugin_dir = argv[1], scheduler = argv[2];
  const int c = std::atoi(argv[3]), o = std::atoi(argv[4]), h = std::atoi(argv[5]), k = std::atoi(argv[6]);
  ImageParam in(Float(32), 4, "in"), w(Float(32), 4, "w"), b(Float(32), 1, "b");
  Var x("x"), y("y"), oc("oc"), n("n");
  Func padded = BoundaryConditions::constant_exterior(in, 0.0f, {{0, h}, {0, h}});
  RDom r(0, k, 0, k, 0, c);
  Func conv("conv"), out("out");
  conv(x, y, oc, n) = b(oc);
  conv(x, y, oc, n) += padded(x + r.x - k / 2, y + r.y - k / 2, r.z, n) * w(r.x, r.y, r.z, oc);
  out(x, y, oc, n) = max(conv(x, y, oc, n), 0.0f);
  in.dim(0).set_estimate(0, h).dim(1).set_estimate(0, h).dim(2).set_estimate(0, c).dim(3).set_estimate(0, 1);
  w.dim(0).set_estimate(0, k).dim(1).set_estimate(0, k).dim(2).set_estimate(0, c).dim(3).set_estimate(0, o);
  b.dim(0).set_estimate(0, o);
  out.set_estimate(x, 0, h).set_estimate(y, 0, h).set_estimate(oc, 0, o).set_estimate(n, 0, 1);

  const std::string lower = scheduler == "Mullapudi2016" ? "mullapudi2016" : scheduler == "Li2018" ? "li2018" : "adams2019";
  load_plugin(plugin_dir + "/libautoschedule_" + lower + ".so");
  const Target target = get_host_target();
  Pipeline pipeline(out);
  pipeline.auto_schedule(scheduler, target, MachineParams(1, 1024 * 1024, 40));

  Buffer<float> bi(h, h, c, 1), bw(k, k, c, o), bb(o), bo(h, h, o, 1);
  bi.fill(1.0f);
  bw.fill(0.01f);
  bb.fill(0.0f);
  in.set(bi);
  w.set(bw);
  b.set(bb);
  pipeline.realize(bo, target);  // compiles
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) pipeline.realize(bo, target);
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / 5);
  }
  const float expected = std::max(0.0f, 0.01f * static_cast<float>(c * k * k));  // an interior output
  if (std::abs(bo(h / 2, h / 2, 0, 0) - expected) > 1e-3f * expected) {
    std::fprintf(stderr, "wrong output: %g, expected %g\n", bo(h / 2, h / 2, 0, 0), expected);
    return 1;
  }
  std::printf("%.1f\n", best);
  return 0;
}
