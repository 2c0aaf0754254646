// Runs an ONNX model with ONNX Runtime (onnxruntime-node, CPU, all graph optimisations: a QDQ
// model runs its fused integer kernels) on raw float32 input files of one [N, C, H, W] input,
// writing each output, raw float32, beside its input:
//
//   NODE_PATH=.../node_modules node ort_run.js MODEL.onnx N,C,H,W INPUT.bin...   (-> INPUT.bin.ort)
//
// With --unoptimised first, no graph optimisations (a QDQ model runs node by node, in float
// between its DequantizeLinear and QuantizeLinear nodes), writing INPUT.bin.ort-unoptimised.
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const args = process.argv.slice(2);
  const unoptimised = args[0] === '--unoptimised';
  const [modelPath, shapeText, ...inputs] = unoptimised ? args.slice(1) : args;
  const shape = shapeText.split(',').map(Number);
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'], graphOptimizationLevel: unoptimised ? 'disabled' : 'all', intraOpNumThreads: 1,
  });
  const suffix = unoptimised ? '.ort-unoptimised' : '.ort';
  for (const path of inputs) {
    const bytes = fs.readFileSync(path);
    const data = Float32Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    const result = await session.run({[session.inputNames[0]]: new ort.Tensor('float32', data, shape)});
    const out = result[session.outputNames[0]].data;
    fs.writeFileSync(path + suffix, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
