#!/usr/bin/env node
// llama_demo.js — `make demo`: greedy generation with the tiny LLaMA of
// models/llama, by onnx2c-caten and by onnxruntime, side by side.
//
// Usage: node scripts/llama_demo.js ONNX2C [TOKENS [PREFILL.onnx DECODE.onnx [ATOL]]]
//
// PREFILL/DECODE default to the tiny float exports; the quantized tests pass
// the models of models/make_llama_quant.py (same weights, same prompt) and
// ATOL 1e-3 (default 1e-4) for the logits; `make demo-large` passes the 1.1B
// model (models/make_llama_large.py). The sizes (vocab, layers, KV heads,
// head size) are read off onnxruntime's prefill outputs, which runs first.
//
// Ours: the prefill export (models/llama/tiny_prefill: logits and the KV
// cache, dynamic batch and seq) and the decode-step export (tiny_decode:
// dynamic past) are each compiled ONCE by onnx2c-caten with symbolic
// dimensions, built with the system compiler into one host program
// (scripts/llama_host.c) that runs the prompt through prefill and then
// TOKENS decode steps, each continuing from the cache the step before
// returned. onnxruntime-node runs the same two models the same way. Both
// choose each next token greedily from their own logits; the report prints
// the tokens, the first step's top-5 logits, the largest logits difference
// and the time per token (the model call only, in-process on both sides).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const root = path.resolve(__dirname, '..');
const { decodeTensorProto, toOrtTensor, ORT_EXACT } = require(path.join(root, 'runtime/ort/ort_run.js'));
const ort = require(path.join(root, 'runtime/ort/node_modules/onnxruntime-node'));

const exe = path.resolve(process.argv[2] || path.join(root, 'build/onnx2c-caten'));
const ntokens = Number(process.argv[3] || 32);
const llama = path.join(root, 'models/llama');
const prefillModel = path.resolve(process.argv[4] || path.join(llama, 'tiny_prefill/model.onnx'));
const decodeModel = path.resolve(process.argv[5] || path.join(llama, 'tiny_decode/model.onnx'));
const atol = Number(process.argv[6] || 1e-4);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'llama-demo-'));
const CFLAGS = ['-O3', '-march=native', '-fno-math-errno', '-fopenmp-simd', '-DONNX2C_OMP_SIMD'];
// more flags for the host program, after these (the ASan build's generate
// tests pass -O1 -fsanitize=address,undefined: tests/CMakeLists.txt)
CFLAGS.push(...(process.env.ONNX2C_DEMO_CFLAGS || '').split(' ').filter((f) => f));

function tensorAt(file) {
  return toOrtTensor(ort, decodeTensorProto(fs.readFileSync(file)), file);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')}\n${r.stderr || r.error}`);
  return r;
}

function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

function top5(row) {
  return Array.from(row, (v, i) => [v, i]).sort((a, b) => b[0] - a[0]).slice(0, 5);
}

function ms(t0) {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

// onnxruntime: prefill, then decode steps fed with the presents of the step
// before; the model's sizes from the prefill's outputs
async function generateOrt(prompt) {
  const opts = { intraOpNumThreads: 1, graphOptimizationLevel: 'all', extra: ORT_EXACT };
  const pre = await ort.InferenceSession.create(prefillModel, opts);
  const dec = await ort.InferenceSession.create(decodeModel, opts);
  const ids = new ort.Tensor('int64', BigInt64Array.from(prompt.map(BigInt)), [1, prompt.length]);
  await pre.run({ ids }); // untimed, as on our side
  let t0 = process.hrtime.bigint();
  let r = await pre.run({ ids });
  const steps = [{ us: ms(t0) * 1e3 }];
  const vocab = r.logits.dims[2], layers = pre.outputNames.filter((n) => n.startsWith('present_k_')).length;
  const [, kvHeads, , headDim] = r.present_k_0.dims;
  let row = r.logits.data.slice((prompt.length - 1) * vocab, prompt.length * vocab);
  const rows = [row];
  let token = argmax(row);
  const tokens = [token];
  let cache = [];
  for (let i = 0; i < layers; i++) cache.push(r[`present_k_${i}`], r[`present_v_${i}`]);
  for (let step = 1; step <= ntokens; step++) {
    const past = prompt.length + step - 1;
    const feeds = {
      ids: new ort.Tensor('int64', BigInt64Array.from([BigInt(token)]), [1, 1]),
      position: new ort.Tensor('int64', BigInt64Array.from([BigInt(past)]), [1]),
    };
    for (let i = 0; i < layers; i++) feeds[`past_k_${i}`] = cache[2 * i], feeds[`past_v_${i}`] = cache[2 * i + 1];
    if (step === 1) await dec.run(feeds);
    t0 = process.hrtime.bigint();
    r = await dec.run(feeds);
    steps.push({ us: ms(t0) * 1e3 });
    row = r.logits.data.slice(0, vocab);
    rows.push(row);
    token = argmax(row);
    tokens.push(token);
    cache = [];
    for (let i = 0; i < layers; i++) cache.push(r[`present_k_${i}`], r[`present_v_${i}`]);
  }
  await pre.release();
  await dec.release();
  return { tokens, rows, steps, sizes: { vocab, kvHeads, headDim } };
}

// ours: compile each model once (symbolic), build the host, run it
function generateOurs(prompt, vocab, kvHeads, headDim) {
  const dirs = {};
  for (const [name, model] of [['prefill', prefillModel], ['decode', decodeModel]]) {
    dirs[name] = path.join(tmp, name);
    // the compile's time and peak RSS when GNU time is there
    const timed = fs.existsSync('/usr/bin/time');
    const r = timed ? run('/usr/bin/time', ['-f', '%e s, peak RSS %M KB', exe, model, '-o', dirs[name], '--name', name])
      : run(exe, [model, '-o', dirs[name], '--name', name]);
    console.log(`  ${r.stdout.trim()}${timed ? ` (${r.stderr.trim().split('\n').pop()})` : ''}`);
  }
  const host = path.join(tmp, 'llama_host');
  run('cc', [...CFLAGS, '-I', dirs.prefill, '-I', dirs.decode, path.join(root, 'scripts/llama_host.c'),
    path.join(dirs.prefill, 'prefill.c'), path.join(dirs.decode, 'decode.c'), '-lm', '-o', host]);
  console.log(`  built ${path.basename(host)}: scripts/llama_host.c + prefill.c + decode.c (cc ${CFLAGS.join(' ')})`);
  const logits = path.join(tmp, 'logits.bin');
  const r = run(host, [path.join(dirs.prefill, 'prefill.weights'), path.join(dirs.decode, 'decode.weights'),
    String(vocab), String(kvHeads), String(headDim), String(ntokens), logits, ...prompt.map(String)]);
  const steps = r.stdout.trim().split('\n').map((l) => {
    const f = l.split(/\s+/);
    return { token: Number(f[5]), us: Number(f[7]) };
  });
  const all = new Float32Array(fs.readFileSync(logits).buffer.slice(0));
  const rows = steps.map((_, i) => all.subarray(i * vocab, (i + 1) * vocab));
  return { tokens: steps.map((s) => s.token), rows, steps };
}

function mean(v) {
  return v.reduce((a, b) => a + b, 0) / v.length;
}

async function main() {
  const prompt = Array.from(tensorAt(path.join(llama, 'tiny_static/test_data_set_0/input_0.pb')).data, Number);
  console.log(`prompt (${prompt.length} token ids): ${prompt.join(' ')}`);
  const theirs = await generateOrt(prompt);
  const { vocab, kvHeads, headDim } = theirs.sizes;
  console.log(`onnx2c-caten: each model compiled once, symbolic dimensions:`);
  const ours = generateOurs(prompt, vocab, kvHeads, headDim);

  console.log('\ntop-5 logits of the first step (prefill):  onnx2c-caten          |  onnxruntime');
  const a = top5(ours.rows[0]), b = top5(theirs.rows[0]);
  for (let i = 0; i < 5; i++)
    console.log(`   #${i + 1}   token ${String(a[i][1]).padStart(3)}  ${a[i][0].toFixed(6).padStart(11)}   |  token ${String(b[i][1]).padStart(3)}  ${b[i][0].toFixed(6).padStart(11)}`);

  console.log('\nstep  past   onnx2c-caten  onnxruntime   ours µs   onnxruntime µs');
  let diverged = -1, maxdiff = 0;
  for (let s = 0; s <= ntokens; s++) {
    if (diverged < 0 && ours.tokens[s] !== theirs.tokens[s]) diverged = s;
    if (diverged < 0) // the same inputs so far: the logits must agree
      for (let i = 0; i < vocab; i++) maxdiff = Math.max(maxdiff, Math.abs(ours.rows[s][i] - theirs.rows[s][i]));
    const past = s === 0 ? 'pre' : String(prompt.length + s - 1);
    console.log(`${String(s).padStart(4)}  ${past.padStart(4)}   ${String(ours.tokens[s]).padStart(12)}  ${String(theirs.tokens[s]).padStart(11)}` +
      `   ${ours.steps[s].us.toFixed(1).padStart(7)}   ${theirs.steps[s].us.toFixed(1).padStart(14)}`);
  }
  const same = diverged < 0;
  console.log(`\ngenerated: 1 token from prefill + ${ntokens} from the KV-cache decode model, greedy`);
  console.log(`  onnx2c-caten: ${ours.tokens.join(' ')}`);
  console.log(`  onnxruntime:  ${theirs.tokens.join(' ')}`);
  console.log(`  identical: ${same ? 'yes' : `NO (from step ${diverged})`}`);
  console.log(`max |logits difference| over all ${ntokens + 1} steps: ${maxdiff.toExponential(2)}`);
  const od = mean(ours.steps.slice(1).map((s) => s.us)), td = mean(theirs.steps.slice(1).map((s) => s.us));
  console.log(`time per token (decode step, mean of ${ntokens}, 1 thread, model call only):`);
  console.log(`  onnx2c-caten ${(od / 1e3).toFixed(4)} ms   onnxruntime ${(td / 1e3).toFixed(4)} ms   (onnxruntime / ours ${(td / od).toFixed(1)}x;` +
    ' onnxruntime-node includes ~15 µs of Node call)');
  console.log(`prefill of ${prompt.length} tokens: onnx2c-caten ${(ours.steps[0].us / 1e3).toFixed(4)} ms   onnxruntime ${(theirs.steps[0].us / 1e3).toFixed(4)} ms`);
  fs.rmSync(tmp, { recursive: true, force: true });
  if (!same || !(maxdiff <= atol)) process.exit(1);
}

main().catch((e) => {
  process.stderr.write(`llama_demo: ${(e && e.message) || e}\n`);
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
});
