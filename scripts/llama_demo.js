#!/usr/bin/env node
// llama_demo.js — `make demo`: the tiny LLaMA of models/llama compiled to C by
// onnx2c-caten, run side by side with onnxruntime on the same prompt, then
// greedy generation of N tokens by both.
//
// Usage: node scripts/llama_demo.js ONNX2C [TOKENS]
//
// Our side runs through `onnx2c-caten run -v` (compile, build with the C
// compiler, load, run; the time reported is the call into the generated
// code). Each `run` is a process of its own, so each new token compiles the
// dynamic export again (pinned with --dim to the current length) and re-runs
// the prefill. The symbolic build (no --dim) serves every length from one
// shared object, but driving the KV-cache decode loop from it needs a host
// that keeps it loaded, which this script does not do.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const root = path.resolve(__dirname, '..');
const { decodeTensorProto, encodeTensorProto, toOrtTensor } = require(path.join(root, 'runtime/ort/ort_run.js'));
const ort = require(path.join(root, 'runtime/ort/node_modules/onnxruntime-node'));

const exe = process.argv[2];
const ntokens = Number(process.argv[3] || 32);
const model = path.join(root, 'models/llama/tiny_dynamic/model.onnx');
const prompt = decodeTensorProto(fs.readFileSync(path.join(root, 'models/llama/tiny_static/test_data_set_0/input_0.pb')));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'llama-demo-'));

function idsTensor(ids) {
  return new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
}

function lastRow(data, seq, vocab) {
  return Array.from(data.subarray((seq - 1) * vocab, seq * vocab));
}

function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

function top5(row) {
  return row.map((v, i) => [v, i]).sort((a, b) => b[0] - a[0]).slice(0, 5);
}

async function main() {
  const ids = Array.from(toOrtTensor(ort, prompt, 'prompt').data, Number);
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, graphOptimizationLevel: 'all' });
  const vocab = 256;
  console.log(`prompt (${ids.length} token ids): ${ids.join(' ')}`);
  const oursIds = ids.slice(), ortIds = ids.slice();
  let maxdiff = 0, oursMs = 0, ortMs = 0, steps = 0;
  for (let step = 0; step < ntokens; step++) {
    // onnxruntime
    const t0 = process.hrtime.bigint();
    const r = await session.run({ ids: idsTensor(ortIds) });
    ortMs += Number(process.hrtime.bigint() - t0) / 1e6;
    const ortRow = lastRow(r.logits.data, ortIds.length, vocab);
    // onnx2c-caten (same sequence as long as both agree)
    const out = path.join(tmp, `out_${oursIds.length}`);
    const child = spawnSync(exe, ['run', model, '--dim', 'batch=1', '--dim',
      `seq=${oursIds.length}`, '-i', writeIds(oursIds), '-o', out, '-v', '--cflags', '-O2 -march=native -fno-math-errno'],
    { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`onnx2c-caten failed: ${child.stderr}`);
    const m = /run\s+([0-9.]+) ms/.exec(child.stderr);
    oursMs += m ? Number(m[1]) : NaN;
    const t = decodeTensorProto(fs.readFileSync(path.join(out, 'output_0.pb')));
    const oursRow = lastRow(toOrtTensor(ort, t, 'logits').data, oursIds.length, vocab);
    for (let i = 0; i < vocab; i++) maxdiff = Math.max(maxdiff, Math.abs(oursRow[i] - ortRow[i]));
    if (step === 0) {
      console.log('\ntop-5 logits of the first step:   onnx2c-caten          |  onnxruntime');
      const a = top5(oursRow), b = top5(ortRow);
      for (let i = 0; i < 5; i++)
        console.log(`   #${i + 1}   token ${String(a[i][1]).padStart(3)}  ${a[i][0].toFixed(6).padStart(11)}   |  token ${String(b[i][1]).padStart(3)}  ${b[i][0].toFixed(6).padStart(11)}`);
    }
    oursIds.push(argmax(oursRow));
    ortIds.push(argmax(ortRow));
    steps++;
  }
  const gOurs = oursIds.slice(ids.length), gOrt = ortIds.slice(ids.length);
  console.log(`\ngenerated (${steps} tokens, greedy):`);
  console.log(`  onnx2c-caten: ${gOurs.join(' ')}`);
  console.log(`  onnxruntime:  ${gOrt.join(' ')}`);
  const same = gOurs.every((v, i) => v === gOrt[i]);
  console.log(`  identical: ${same ? 'yes' : 'NO'}`);
  console.log(`max |logits difference| over all steps: ${maxdiff.toExponential(2)}`);
  console.log(`time per token (prefill of the whole sequence, 1 thread, model call only):`);
  console.log(`  onnx2c-caten ${(oursMs / steps).toFixed(3)} ms   onnxruntime ${(ortMs / steps).toFixed(3)} ms`);
  await session.release();
  fs.rmSync(tmp, { recursive: true, force: true });
  if (!same || !(maxdiff <= 1e-4)) process.exit(1);
}

function writeIds(ids) {
  const f = path.join(tmp, `ids_${ids.length}.pb`);
  fs.writeFileSync(f, encodeTensorProto('ids', idsTensor(ids)));
  return f;
}

main().catch((e) => {
  process.stderr.write(`llama_demo: ${(e && e.message) || e}\n`);
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
});
