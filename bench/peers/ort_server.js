// ONNX Runtime (onnxruntime-node, CPU execution provider) as a benchmark server, driven over
// stdin/stdout with the same protocol as aotc_server.c:
//
//   NODE_PATH=build/bench/node_modules node ort_server.js MODEL.onnx INPUT.bin
//
//   threads N     a new session with intraOpNumThreads = N     -> {"ok": true}
//   run K         one untimed run, then K timed session.run()s -> {"ms": [...], "cpu_ms": total}
//   output PATH   writes the output for INPUT.bin, raw float32 -> {"ok": true}
//   quit
//
// Session options: all graph optimisations, one inter-op thread, sequential execution: the
// settings for the lowest single-request latency on a CPU.
'use strict';

const fs = require('fs');
const readline = require('readline');
const ort = require('onnxruntime-node');

const INPUT_SHAPE = [1, 3, 224, 224];

async function createSession(modelPath, threads) {
  return ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
}

function readInput(path) {
  const bytes = fs.readFileSync(path);
  const data = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  return new ort.Tensor('float32', Float32Array.from(data), INPUT_SHAPE);
}

// Milliseconds of user plus system CPU time of this process (all threads).
function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function timedRuns(session, feeds, k) {
  await session.run(feeds);  // warms caches after another system ran
  const cpu0 = cpuMs();
  const ms = [];
  for (let i = 0; i < k; ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return {ms, cpu_ms: cpuMs() - cpu0};
}

async function main() {
  const [modelPath, inputPath] = process.argv.slice(2);
  const input = readInput(inputPath);
  let session = null;
  let feeds = null;
  const lines = readline.createInterface({input: process.stdin});
  for await (const line of lines) {
    const [cmd, arg] = line.trim().split(/\s+/);
    let answer;
    if (cmd === 'threads') {
      if (session) await session.release();
      session = await createSession(modelPath, Number(arg));
      feeds = {[session.inputNames[0]]: input};
      answer = {ok: true};
    } else if (cmd === 'run') {
      answer = await timedRuns(session, feeds, Number(arg));
    } else if (cmd === 'output') {
      const result = await session.run(feeds);
      const out = result[session.outputNames[0]].data;
      fs.writeFileSync(arg, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      answer = {ok: true};
    } else if (cmd === 'quit') {
      break;
    } else {
      throw new Error(`ort_server: unknown command ${line}`);
    }
    process.stdout.write(JSON.stringify(answer) + '\n');
  }
  if (session) await session.release();
}

main().catch((e) => {
  process.stderr.write(`ort_server: ${e.stack || e}\n`);
  process.exit(1);
});
