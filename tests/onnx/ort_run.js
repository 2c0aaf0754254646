// Runs an ONNX model with ONNX Runtime (onnxruntime-node, CPU, all graph optimisations: a QDQ
// model runs its fused integer kernels) on raw float32 input files of one [N, C, H, W] input,
// writing each output, raw float32, beside its input:
//
//   NODE_PATH=.../node_modules node ort_run.js MODEL.onnx N,C,H,W INPUT.bin...   (-> INPUT.bin.ort)
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [modelPath, shapeText, ...inputs] = process.argv.slice(2);
  const shape = shapeText.split(',').map(Number);
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: 1,
  });
  for (const path of inputs) {
    const bytes = fs.readFileSync(path);
    const data = Float32Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    const result = await session.run({[session.inputNames[0]]: new ort.Tensor('float32', data, shape)});
    const out = result[session.outputNames[0]].data;
    fs.writeFileSync(path + '.ort', Buffer.from(out.buffer, out.byteOffset, out.byteLength));
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
