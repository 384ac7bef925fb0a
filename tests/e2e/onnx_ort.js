// Runs an ONNX model with ONNX Runtime's CPU build (npm onnxruntime-node) for the vkqc tests.
// usage: node onnx_ort.js MODULES_DIR MODEL.onnx IO_DIR [all|disabled]
// IO_DIR/inputs.json lists {name, dtype, shape, file} (raw little-endian files); every output is
// written to IO_DIR/ort_<name>.bin with IO_DIR/ort_outputs.json describing them.
const fs = require('fs');
const path = require('path');
const [modules, model, io, level] = process.argv.slice(2);
const ort = require(path.join(modules, 'onnxruntime-node'));
const kinds = {float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int64: BigInt64Array, int32: Int32Array};
(async () => {
  const opts = {graphOptimizationLevel: level || 'all', executionProviders: ['cpu'], intraOpNumThreads: 1};
  const session = await ort.InferenceSession.create(model, opts);
  const feeds = {};
  for (const i of JSON.parse(fs.readFileSync(path.join(io, 'inputs.json')))) {
    const buf = fs.readFileSync(path.join(io, i.file));
    const T = kinds[i.dtype];
    const data = new T(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    feeds[i.name] = new ort.Tensor(i.dtype, data, i.shape);
  }
  const out = await session.run(feeds);
  const desc = [];
  for (const [name, t] of Object.entries(out)) {
    const file = 'ort_' + name.replace(/[^A-Za-z0-9_.-]/g, '_') + '.bin';
    fs.writeFileSync(path.join(io, file), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    desc.push({name, dtype: t.type, shape: t.dims, file});
  }
  fs.writeFileSync(path.join(io, 'ort_outputs.json'), JSON.stringify(desc));
})().catch((e) => {
  console.error('onnxruntime: ' + e.message);
  process.exit(3);
});
