#!/usr/bin/env node
// ort_run.js - onnxruntime reference runner for onnx2c-caten.
//
// Usage:
//   node ort_run.js [--threads N] [--time RUNS] MODEL.onnx OUTDIR [IN.pb ...]
//
// Each IN.pb is an ONNX TensorProto (protobuf binary). Inputs are bound to the
// session's inputs by the TensorProto name when it is non-empty and matches an
// input name, otherwise by position. The model is run once with onnxruntime-node
// (intraOpNumThreads = N, default 1; graphOptimizationLevel 'all') and every
// output K (position in session.outputNames) is written to OUTDIR/output_K.pb as
// a TensorProto with name, dims, data_type and little-endian raw_data (strings
// use string_data). OUTDIR is created if missing.
// The session computes what the graph says: onnxruntime (1.30) rewrites
// DequantizeLinear(int8 weight) -> MatMul into its MatMulNBits with bits 8 and
// accuracy_level 4 by default, which quantizes A to int8 per block of 32 (8e-3
// away from the exact product on a 64 x 32 weight); ORT_EXACT sets that
// rewrite's accuracy level to 0 (float A: the same kernel, exact within float
// rounding). It also removes the middle pair of Q -> DQ -> Q -> DQ
// (DoubleQDQPairsRemover), so the input is quantized once, not twice: a value
// rounded to the first scale and then to the second can land one or two steps
// of the second away (-3.8 to 0.125, then to 0.0521: -3.755 as written, -3.807
// once the first rounding is gone); ORT_EXACT disables that optimizer too,
// and MatMulScaleFusion, which folds a constant scalar Mul into FusedMatMul's
// float alpha: a float64 graph's scale rounded to float32 moves its product
// by 2e-8 of its scale (the list is ';'-separated).
// With --time RUNS: RUNS warm-up runs plus RUNS timed runs follow, and one line
// `ort_median_ms <value>` is printed to stdout.
// On error: one line `ort_run: <message>` on stderr, exit status 1.
//
// Setup: cd runtime/ort && ONNXRUNTIME_NODE_INSTALL=skip npm install
// The protobuf wire format is decoded/encoded by hand below (no extra deps).
'use strict';
const fs = require('fs');
const ORT_EXACT = {
  session: { qdq_matmulnbits_accuracy_level: '0' },
  optimization: { disable_specified_optimizers: 'DoubleQDQPairsRemover;MatMulScaleFusion' },
};
const path = require('path');

// ONNX TensorProto.DataType -> [ort type name, typed array constructor]
const DTYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 8: ['string', Array], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array],
  12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};
const ORT_TO_ONNX = {};
for (const [k, [name]] of Object.entries(DTYPES)) ORT_TO_ONNX[name] = Number(k);

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// ---------- protobuf wire format: decoding ----------
class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  eof() { return this.pos >= this.buf.length; }
  varint() { // unsigned 64-bit value as BigInt
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  }
  bytes(n) {
    if (this.pos + n > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  lenDelimited() { return this.bytes(Number(this.varint())); }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.bytes(8);
    else if (wire === 2) this.lenDelimited();
    else if (wire === 5) this.bytes(4);
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

// Read a repeated scalar field in either packed (wire 2) or unpacked encoding.
// kind: 'varint' | 'f32' | 'f64'; values are appended to `out`.
function readRepeated(r, wire, kind, out) {
  const one = (rd) => {
    if (kind === 'varint') return rd.varint();
    const b = rd.bytes(kind === 'f32' ? 4 : 8);
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    return kind === 'f32' ? dv.getFloat32(0, true) : dv.getFloat64(0, true);
  };
  if (wire === 2) {
    const sub = new Reader(r.lenDelimited());
    while (!sub.eof()) out.push(one(sub));
  } else {
    out.push(one(r));
  }
}

function decodeTensorProto(buf) {
  const t = { dims: [], dataType: 0, name: '', raw: null, floats: [], int32s: [],
    strings: [], int64s: [], doubles: [], uint64s: [] };
  const r = new Reader(buf);
  while (!r.eof()) {
    const key = Number(r.varint());
    const field = key >>> 3, wire = key & 7;
    switch (field) {
      case 1: readRepeated(r, wire, 'varint', t.dims); break;
      case 2: t.dataType = Number(BigInt.asIntN(32, r.varint())); break;
      case 4: readRepeated(r, wire, 'f32', t.floats); break;
      case 5: readRepeated(r, wire, 'varint', t.int32s); break;
      case 6: t.strings.push(Buffer.from(r.lenDelimited()).toString('utf8')); break;
      case 7: readRepeated(r, wire, 'varint', t.int64s); break;
      case 8: t.name = Buffer.from(r.lenDelimited()).toString('utf8'); break;
      case 9: t.raw = r.lenDelimited(); break;
      case 10: readRepeated(r, wire, 'f64', t.doubles); break;
      case 11: readRepeated(r, wire, 'varint', t.uint64s); break;
      default: r.skip(wire);
    }
  }
  t.dims = t.dims.map((d) => Number(BigInt.asIntN(64, d)));
  return t;
}

// Build an ort.Tensor from a decoded TensorProto.
function toOrtTensor(ort, t, file) {
  const entry = DTYPES[t.dataType];
  if (!entry) throw new Error(`${file}: unsupported data_type ${t.dataType}`);
  const [type, Ctor] = entry;
  const count = t.dims.reduce((a, b) => a * b, 1);
  if (t.dims.some((d) => d < 0) || !Number.isSafeInteger(count))
    throw new Error(`${file}: bad dims [${t.dims}] (not a TensorProto?)`);
  let data;
  if (type === 'string') {
    data = t.strings;
  } else if (t.raw) {
    if (!LITTLE_ENDIAN) throw new Error('raw_data needs a little-endian host');
    const bytes = new Uint8Array(t.raw); // copy: aligned, owns its buffer
    if (bytes.length !== count * Ctor.BYTES_PER_ELEMENT)
      throw new Error(`${file}: raw_data size ${bytes.length} does not match dims`);
    data = new Ctor(bytes.buffer);
  } else {
    const src = { 1: t.floats, 11: t.doubles, 7: t.int64s, 12: t.uint64s, 13: t.uint64s }[t.dataType] || t.int32s;
    if (src.length !== count) throw new Error(`${file}: ${src.length} values for ${count} elements`);
    data = new Ctor(count);
    for (let i = 0; i < count; i++) {
      const v = src[i];
      if (t.dataType === 7) data[i] = BigInt.asIntN(64, v);
      else if (t.dataType === 13) data[i] = BigInt.asUintN(64, v);
      else if (typeof v === 'bigint') data[i] = Number(BigInt.asIntN(64, v)); // typed array wraps
      else data[i] = v;
    }
  }
  return new ort.Tensor(type, data, t.dims);
}

// ---------- protobuf wire format: encoding ----------
function varintBytes(v) { // v: BigInt or number, encoded as unsigned 64-bit
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  while (x >= 0x80n) { out.push(Number(x & 0x7fn) | 0x80); x >>= 7n; }
  out.push(Number(x));
  return out;
}
function lenField(field, bytes) {
  return [Buffer.from(varintBytes((field << 3) | 2)), Buffer.from(varintBytes(bytes.length)), Buffer.from(bytes)];
}

function encodeTensorProto(name, tensor) {
  const dataType = ORT_TO_ONNX[tensor.type];
  if (!dataType) throw new Error(`output '${name}': unsupported type ${tensor.type}`);
  const parts = [];
  for (const d of tensor.dims) parts.push(Buffer.from([0x08, ...varintBytes(d)])); // dims = 1
  parts.push(Buffer.from([0x10, ...varintBytes(dataType)])); // data_type = 2
  let data = tensor.data;
  if (tensor.type === 'string') {
    for (const s of data) parts.push(...lenField(6, Buffer.from(s, 'utf8')));
  }
  parts.push(...lenField(8, Buffer.from(name, 'utf8')));
  if (tensor.type !== 'string') {
    if (!LITTLE_ENDIAN) throw new Error('raw_data needs a little-endian host');
    if (Array.isArray(data)) data = Uint8Array.from(data, (v) => (v ? 1 : 0)); // bool as JS array
    parts.push(...lenField(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
  }
  return Buffer.concat(parts);
}

// ---------- command line ----------
function parseArgs(argv) {
  const opts = { threads: 1, time: 0, positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--threads' || a === '--time') {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < (a === '--threads' ? 1 : 0))
        throw new Error(`bad value for ${a}: ${argv[i]}`);
      opts[a.slice(2)] = v;
    } else if (a.startsWith('--')) {
      throw new Error(`unknown option ${a}`);
    } else {
      opts.positional.push(a);
    }
  }
  if (opts.positional.length < 2)
    throw new Error('usage: node ort_run.js [--threads N] [--time RUNS] MODEL.onnx OUTDIR [IN.pb ...]');
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const [model, outdir, ...inputs] = opts.positional;
  const ort = require('onnxruntime-node');
  ort.env.logLevel = 'fatal'; // errors reach the user as our one-line message
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: opts.threads, interOpNumThreads: 1, logSeverityLevel: 4,
    graphOptimizationLevel: 'all', executionMode: 'sequential', extra: ORT_EXACT,
  });

  const feeds = {};
  inputs.forEach((file, i) => {
    const t = decodeTensorProto(fs.readFileSync(file));
    let name = t.name && session.inputNames.includes(t.name) && !(t.name in feeds) ? t.name : session.inputNames[i];
    if (name === undefined) throw new Error(`${file}: model has only ${session.inputNames.length} inputs`);
    if (name in feeds) throw new Error(`${file}: input '${name}' given twice`);
    feeds[name] = toOrtTensor(ort, t, file);
  });

  const results = await session.run(feeds);
  fs.mkdirSync(outdir, { recursive: true });
  session.outputNames.forEach((name, k) => {
    fs.writeFileSync(path.join(outdir, `output_${k}.pb`), encodeTensorProto(name, results[name]));
  });

  if (opts.time > 0) {
    for (let i = 0; i < opts.time; i++) await session.run(feeds);
    const times = [];
    for (let i = 0; i < opts.time; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const n = times.length;
    const median = n % 2 ? times[(n - 1) >> 1] : (times[n / 2 - 1] + times[n / 2]) / 2;
    process.stdout.write(`ort_median_ms ${median.toFixed(4)}\n`);
  }
  await session.release();
}

// Used as a module (scripts/llama_demo.js), it only lends its codec.
module.exports = { decodeTensorProto, encodeTensorProto, toOrtTensor, DTYPES, ORT_EXACT };

if (require.main === module) {
  main().catch((e) => {
    const msg = String((e && e.message) || e).replace(/\s*\n\s*/g, ' ').trim();
    process.stderr.write(`ort_run: ${msg}\n`);
    process.exit(1);
  });
}
