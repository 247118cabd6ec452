#!/usr/bin/env node
// interleave.js - times our generated model (a harness child process in
// --serve mode) and onnxruntime-node on the same inputs, alternating batches.
//
// Usage: node interleave.js SPEC.json
// SPEC: { model, inputs: [{name, dtype, dims, file}], harness: [argv...],
//         threads, warmup, runs, batch, dumpdir, gapms }
// Prints one JSON line: {ours_ms, ort_ms, ours_min_ms, ort_min_ms, maxdiff,
//                        ours_runs, ort_runs, ours_cpu_ms, ort_cpu_ms,
//                        ours_first_ms, ort_first_ms, ours_rest_ms, ort_rest_ms}
// (medians in ms). Both sides are timed in-process: the harness around
// NAME_run with clock_gettime, onnxruntime here around session.run with
// process.hrtime. *_cpu_ms: the median CPU time of each side's process per
// run (every thread; the harness's CLOCK_PROCESS_CPUTIME_ID, here
// process.cpuUsage), read outside the timed interval: wall above CPU is
// time the process did not run. *_first_ms: the median of each batch's
// first run (after the pause, the caches holding the other side's data),
// *_rest_ms of the others.
// Per round: `batch` runs of ours, pause gapms, `batch` runs of ORT, pause.
// After each pause the driver also waits (at most QUIET_MAX_MS) until no
// thread of either process but this one's main thread is runnable:
// onnxruntime's intra-op workers spin on a core for 20-35 ms after a run
// (allow_spinning, its default), longer than the pause under load, and a
// batch of ours started beside that spinner measured a core shared with
// onnxruntime, not what a user of either sees. (A spinner is runnable even
// while other load keeps it off the CPU, so the test does not depend on
// the load; without /proc there is no wait.)
'use strict';
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const ORT_DIR = process.env.ORT_NODE_MODULES || path.join(__dirname, '..', '..', 'runtime', 'ort', 'node_modules');
const ort = require(path.join(ORT_DIR, 'onnxruntime-node'));

const CTORS = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array, float64: Float64Array,
  uint8: Uint8Array, int8: Int8Array, bool: Uint8Array };

const QUIET_MAX_MS = 500;
// Is a thread of `pids` other than this process's main thread runnable
// (state R in /proc)? null without /proc.
function busy(pids) {
  for (const pid of pids) {
    let tasks;
    try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch (e) { return null; }
    for (const t of tasks) {
      if (pid === process.pid && Number(t) === pid) continue;
      try {
        const st = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
        if (st[st.lastIndexOf(')') + 2] === 'R') return true;
      } catch (e) { /* exited */ }
    }
  }
  return false;
}
// Waits until no thread of `pids` but this one is runnable; ms waited.
async function quiet(pids) {
  const t0 = Date.now();
  while (busy(pids) && Date.now() - t0 < QUIET_MAX_MS) await sleep(1);
  return Date.now() - t0;
}
function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
function median(a) { const s = [...a].sort((x, y) => x - y); const n = s.length; return n % 2 ? s[(n - 1) >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2; }

class Child {
  constructor(argv, env) {
    this.p = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env });
    this.buf = ''; this.waiters = []; this.lines = []; this.err = '';
    this.p.stdout.on('data', (d) => {
      this.buf += d.toString();
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i); this.buf = this.buf.slice(i + 1);
        if (this.waiters.length) this.waiters.shift().resolve(line); else this.lines.push(line);
      }
    });
    this.p.stderr.on('data', (d) => { this.err += d.toString(); });
    this.p.on('exit', (code) => {
      const e = new Error(`harness exited (${code}): ${this.err.trim()}`);
      for (const w of this.waiters) w.reject(e);
      this.waiters = []; this.dead = e;
    });
  }
  cmd(s) {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      if (this.lines.length) { resolve(this.lines.shift()); } else this.waiters.push({ resolve, reject });
      this.p.stdin.write(s + '\n');
    });
  }
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const threads = spec.threads || 1;
  ort.env.logLevel = 'fatal';
  const session = await ort.InferenceSession.create(spec.model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, logSeverityLevel: 4,
    graphOptimizationLevel: 'all', executionMode: 'sequential',
    ...(spec.ort_extra ? { extra: spec.ort_extra } : {}),
  });
  const feeds = {};
  for (const inp of spec.inputs) {
    const bytes = new Uint8Array(fs.readFileSync(inp.file));
    const C = CTORS[inp.dtype];
    feeds[inp.name] = new ort.Tensor(inp.dtype, new C(bytes.buffer, bytes.byteOffset, bytes.byteLength / C.BYTES_PER_ELEMENT), inp.dims);
  }
  const env = { ...process.env, ...(spec.env || {}), OMP_NUM_THREADS: String(threads) };
  const child = new Child(spec.harness, env);
  const gap = spec.gapms ?? 30;

  // warm-up both
  let r = await child.cmd(`warm ${spec.warmup}`);
  if (r !== 'ok') throw new Error(`harness: ${r}`);
  let results;
  for (let i = 0; i < spec.warmup; i++) results = await session.run(feeds);
  const ours = [], theirs = [], waits = [];
  const oursCpu = [], ortCpu = [], oursFirst = [], ortFirst = [], oursRest = [], ortRest = [];
  const pids = [process.pid, child.p.pid];
  const rounds = Math.ceil(spec.runs / spec.batch);
  for (let k = 0; k < rounds; k++) {
    await sleep(gap);
    waits.push(await quiet(pids));
    r = await child.cmd(`timec ${spec.batch}`);
    if (!r.startsWith('times')) throw new Error(`harness: ${r}`);
    r.split(/\s+/).slice(1).forEach((x, i) => {
      const [wall, cpu] = x.split(',').map(Number);
      ours.push(wall); oursCpu.push(cpu); (i ? oursRest : oursFirst).push(wall);
    });
    await sleep(gap);
    waits.push(await quiet(pids));
    for (let i = 0; i < spec.batch; i++) {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      results = await session.run(feeds);
      const wall = Number(process.hrtime.bigint() - t0) / 1e6;
      const c1 = process.cpuUsage(c0);
      theirs.push(wall); ortCpu.push((c1.user + c1.system) / 1e3); (i ? ortRest : ortFirst).push(wall);
    }
  }
  // correctness: our outputs vs onnxruntime's
  fs.mkdirSync(spec.dumpdir, { recursive: true });
  r = await child.cmd(`dump ${spec.dumpdir}`);
  if (r !== 'ok') throw new Error(`harness: ${r}`);
  child.p.stdin.write('quit\n');
  let maxdiff = 0;
  session.outputNames.forEach((name, k) => {
    const ref = results[name];
    const C = CTORS[ref.type];
    const bytes = new Uint8Array(fs.readFileSync(path.join(spec.dumpdir, `out_${k}.bin`)));
    const got = new C(bytes.buffer, bytes.byteOffset, bytes.byteLength / C.BYTES_PER_ELEMENT);
    if (got.length !== ref.data.length) { maxdiff = Infinity; return; }
    for (let i = 0; i < got.length; i++) {
      const d = Math.abs(Number(got[i]) - Number(ref.data[i]));
      if (!(d <= maxdiff)) maxdiff = Number.isNaN(d) ? Infinity : Math.max(maxdiff, d);
    }
  });
  await session.release();
  process.stdout.write(JSON.stringify({ ours_ms: median(ours), ort_ms: median(theirs),
    ours_min_ms: Math.min(...ours), ort_min_ms: Math.min(...theirs), maxdiff,
    ours_runs: ours.length, ort_runs: theirs.length, quiet_max_ms: Math.max(...waits),
    ours_cpu_ms: median(oursCpu), ort_cpu_ms: median(ortCpu), ours_first_ms: median(oursFirst),
    ort_first_ms: median(ortFirst), ours_rest_ms: oursRest.length ? median(oursRest) : null,
    ort_rest_ms: ortRest.length ? median(ortRest) : null }) + '\n');
}

main().catch((e) => { process.stderr.write(`interleave: ${String(e && e.message || e)}\n`); process.exit(1); });
