#!/usr/bin/env python3
"""Quantized ONNX models as exporters write them, run by ONNX Runtime and by vkqc.

Builds (python3-onnx, fixed seeds, synthetic weights):
  mnv2   a MobileNetV2-shaped int8 QDQ CNN: 3x3 stem, inverted residual blocks (1x1 expand, 3x3
         depthwise, 1x1 project, residual add), relu6, global average pool, Gemm classifier;
  resnet a ResNet-shaped int8 QDQ CNN: 5x5 stride-2 stem + max pool, basic blocks with residual
         add + relu, a squeeze-excite block (global pool, 1x1 convs, hard-sigmoid, broadcast
         Mul), a hardswish, an upsample (Resize nearest 2x) + Concat branch, softmax output;
  nbits  an MLP of com.microsoft MatMulNBits layers (int4, block 32 with packed zero points,
         block 16 without, a bias), sigmoid between.
Weights are int8 per output channel (DequantizeLinear axis 0), biases int32 with scale
s_x * s_w, activations uint8 with ranges calibrated by ONNX Runtime on the float model.

Each model runs in ONNX Runtime twice (optimizations disabled: every QDQ pair computed as
written, the reference semantics; and all: ORT's fused QLinear kernels) and in vkqc on the
local device (lavapipe, validation on), both layouts (NCHW with the transpose dispatch, and
--input-layout nhwc with the input transposed by the caller). Compared per output: uint8
tensors within 1 LSB, logits within 2 output quantization steps and the same top-1 per image,
float outputs (nbits) within 1e-4 of max |ref|.

usage: onnx_models.py VKQC WORKDIR NODE_MODULES_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []


def ok(msg):
    print("ok   " + msg)


def fail(msg):
    print("FAIL " + msg)
    FAILS.append(msg)


class Net:
    """A float graph with layer metadata; qdq() rewrites it as an exporter's QDQ model."""

    def __init__(self, seed, name):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n, self.name = [], {}, 0, name
        self.outputs = []

    def t(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def node(self, op, ins, attrs=None, outs=1, domain=None):
        o = [self.t(op.lower()) for _ in range(outs)]
        self.nodes.append(helper.make_node(op, ins, o, name=self.t("n_" + op), domain=domain, **(attrs or {})))
        return o[0] if outs == 1 else o

    def const(self, arr, base="c"):
        name = self.t(base)
        self.inits[name] = arr
        return name

    def conv(self, x, cin, cout, k, stride=1, groups=1, act=None):
        fan = cin // groups * k * k
        w = (self.rng.standard_normal((cout, cin // groups, k, k)) * np.sqrt(2.0 / fan)).astype(np.float32)
        b = (self.rng.standard_normal(cout) * 0.1).astype(np.float32)
        y = self.node("Conv", [x, self.const(w, "w"), self.const(b, "b")],
                      {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [k // 2] * 4, "group": groups})
        if act == "relu":
            y = self.node("Relu", [y])
        elif act == "relu6":
            y = self.node("Clip", [y, self.const(np.array(0, np.float32), "lo"), self.const(np.array(6, np.float32), "hi")])
        return y

    def model(self, inp, shape):
        g = helper.make_graph(self.nodes, self.name, [helper.make_tensor_value_info(inp, TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in self.outputs],
                              [numpy_helper.from_array(v, k) for k, v in self.inits.items()])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
        m.ir_version = 7
        return m


def mnv2():
    n = Net(11, "mnv2")
    x = n.conv("input", 3, 16, 3, 2, act="relu6")
    cin = 16
    for exp, cout, stride in [(1, 16, 1), (4, 24, 2), (4, 24, 1), (4, 32, 2), (4, 32, 1), (6, 40, 1)]:
        h = n.conv(x, cin, cin * exp, 1, act="relu6") if exp != 1 else x
        h = n.conv(h, cin * exp, cin * exp, 3, stride, groups=cin * exp, act="relu6")
        h = n.conv(h, cin * exp, cout, 1)
        x = n.node("Add", [x, h]) if stride == 1 and cin == cout else h
        cin = cout
    x = n.conv(x, cin, 64, 1, act="relu6")
    x = n.node("GlobalAveragePool", [x])
    x = n.node("Flatten", [x])
    w = (n.rng.standard_normal((10, 64)) * 0.2).astype(np.float32)
    logits = n.node("Gemm", [x, n.const(w, "fcw"), n.const((n.rng.standard_normal(10) * 0.1).astype(np.float32), "fcb")],
                    {"transB": 1})
    n.outputs = [logits]
    return n, [2, 3, 48, 48]


def resnet():
    n = Net(23, "resnet_se")
    x = n.conv("input", 3, 16, 5, 2, act="relu")
    x = n.node("MaxPool", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    for c in (16, 16):
        h = n.conv(x, c, c, 3, act="relu")
        h = n.conv(h, c, c, 3)
        x = n.node("Relu", [n.node("Add", [x, h])])
    # Squeeze-excite.
    s = n.node("GlobalAveragePool", [x])
    s = n.conv(s, 16, 8, 1, act="relu")
    s = n.conv(s, 8, 16, 1)
    s = n.node("HardSigmoid", [s], {"alpha": 1.0 / 6, "beta": 0.5})
    x = n.node("Mul", [x, s])
    x = n.node("HardSwish", [n.conv(x, 16, 24, 3, 2)])
    # A downsampled branch brought back up and concatenated along channels.
    d = n.node("MaxPool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]})
    d = n.conv(d, 24, 8, 1, act="relu")
    u = n.node("Resize", [d, "", n.const(np.array([1, 1, 2, 2], np.float32), "scales")], {"mode": "nearest"})
    x = n.node("Concat", [x, u], {"axis": 1})
    x = n.node("Sigmoid", [n.conv(x, 32, 32, 1)])
    x = n.node("AveragePool", [x], {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]})
    x = n.node("Flatten", [n.node("GlobalAveragePool", [x])])
    w = (n.rng.standard_normal((10, 32)) * 0.5).astype(np.float32)
    logits = n.node("Gemm", [x, n.const(w, "fcw"), n.const(np.zeros(10, np.float32), "fcb")], {"transB": 1})
    probs = n.node("Softmax", [logits], {"axis": -1})
    n.outputs = [logits, probs]
    return n, [2, 3, 48, 48]


def run_ort(modules, model_path, io, feeds, level):
    os.makedirs(io, exist_ok=True)
    desc = []
    for name, a in feeds.items():
        f = f"in_{name}.bin"
        a.tofile(os.path.join(io, f))
        desc.append({"name": name, "dtype": {np.float32: "float32", np.uint8: "uint8"}[a.dtype.type], "shape": list(a.shape), "file": f})
    json.dump(desc, open(os.path.join(io, "inputs.json"), "w"))
    p = subprocess.run(["node", os.path.join(HERE, "onnx_ort.js"), modules, model_path, io, level],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode:
        raise RuntimeError(p.stdout)
    out = {}
    for d in json.load(open(os.path.join(io, "ort_outputs.json"))):
        dt = {"float32": np.float32, "uint8": np.uint8, "int8": np.int8}[d["type"] if "type" in d else d["dtype"]]
        out[d["name"]] = np.fromfile(os.path.join(io, d["file"]), dt).reshape(d["shape"])
    return out


def qparams(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = max((hi - lo) / 255.0, 1e-8)
    return np.float32(s), np.uint8(np.clip(round(-lo / s), 0, 255))


def qdq(net, shape, modules, work, calib):
    """The float model calibrated by ORT, rewritten with QDQ as an exporter does."""
    fm = net.model("input", shape)
    # Calibration: every intermediate tensor as an output.
    cal = onnx.ModelProto()
    cal.CopyFrom(fm)
    names = [o for nd in cal.graph.node for o in nd.output]
    del cal.graph.output[:]
    cal.graph.output.extend([helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in names])
    cp = os.path.join(work, net.name + "_calib.onnx")
    onnx.save(cal, cp)
    ranges = {k: (float(v.min()), float(v.max())) for k, v in run_ort(modules, cp, os.path.join(work, net.name + "_cal"),
                                                                      {"input": calib}, "disabled").items()}
    ranges["input"] = (float(calib.min()), float(calib.max()))
    consumers = {}
    for nd in fm.graph.node:
        for i in nd.input:
            consumers.setdefault(i, []).append(nd)
    inits = dict(net.inits)
    new_nodes, rename, qp = [], {}, {}

    def qdq_of(t):  # the dequantized name of activation t (a Q -> DQ pair after it)
        if t in rename:
            return rename[t]
        s, z = qparams(*ranges[t])
        qp[t] = (s, z)
        sn, zn = t + "_scale", t + "_zp"
        inits[sn], inits[zn] = np.array(s, np.float32), np.array(z, np.uint8)
        new_nodes.append(helper.make_node("QuantizeLinear", [t, sn, zn], [t + "_q"], name=t + "_Q"))
        new_nodes.append(helper.make_node("DequantizeLinear", [t + "_q", sn, zn], [t + "_dq"], name=t + "_DQ"))
        rename[t] = t + "_dq"
        return rename[t]

    qdq_of("input")
    for nd in fm.graph.node:
        ins = list(nd.input)
        if nd.op_type in ("Conv", "Gemm"):
            x = rename[ins[0]]
            w = inits.pop(ins[1])
            axis = 0
            wc = w.reshape(w.shape[0], -1)
            sw = np.maximum(np.abs(wc).max(axis=1) / 127.0, 1e-8).astype(np.float32)
            q = np.clip(np.round(wc / sw[:, None]), -127, 127).astype(np.int8).reshape(w.shape)
            inits[ins[1] + "_q"], inits[ins[1] + "_s"], inits[ins[1] + "_z"] = q, sw, np.zeros_like(sw, np.int8)
            new_nodes.append(helper.make_node("DequantizeLinear", [ins[1] + "_q", ins[1] + "_s", ins[1] + "_z"],
                                              [ins[1] + "_dq"], name=ins[1] + "_DQ", axis=axis))
            sx = qp[ins[0]][0]
            b = inits.pop(ins[2])
            bs = (sx * sw).astype(np.float32)
            inits[ins[2] + "_q"], inits[ins[2] + "_s"] = np.round(b / bs).astype(np.int32), bs
            inits[ins[2] + "_z"] = np.zeros_like(bs, np.int32)
            new_nodes.append(helper.make_node("DequantizeLinear", [ins[2] + "_q", ins[2] + "_s", ins[2] + "_z"],
                                              [ins[2] + "_dq"], name=ins[2] + "_DQ", axis=0))
            ins = [x, ins[1] + "_dq", ins[2] + "_dq"]
        else:
            ins = [rename.get(i, i) for i in ins]
        new_nodes.append(helper.make_node(nd.op_type, ins, list(nd.output), name=nd.name, **{
            a.name: helper.get_attribute_value(a) for a in nd.attribute}))
        out = nd.output[0]
        # Conv -> Relu/Clip: the pair shares one quantization after the activation (as exporters fuse it).
        nxt = consumers.get(out, [])
        if nd.op_type == "Conv" and len(nxt) == 1 and nxt[0].op_type in ("Relu", "Clip"):
            rename[out] = out
            continue
        qdq_of(out)
    outs = []
    for o in net.outputs:
        outs.append(helper.make_tensor_value_info(rename[o], TensorProto.FLOAT, None))
    # The first conv block's uint8 tensor as an extra output (int8 comparison within 1 LSB).
    first_q = next(n.output[0] for n in new_nodes if n.op_type == "QuantizeLinear" and n.input[0] != "input")
    outs.append(helper.make_tensor_value_info(first_q, TensorProto.UINT8, None))
    g = helper.make_graph(new_nodes, net.name + "_qdq", [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                          outs, [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="vkqc-tests")
    m.ir_version = 7

    return m


def nbits_model(rng):
    nodes, inits = [], []

    def layer(x, k, n, bs, zp, bias, name):
        q = rng.integers(0, 16, (n, k), dtype=np.uint8)
        packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(n, k // bs, bs // 2)
        scales = (rng.random(n * (k // bs)) * 0.02 + 0.005).astype(np.float32)
        ins = [x, name + "_B", name + "_scales"]
        inits.extend([numpy_helper.from_array(packed, name + "_B"), numpy_helper.from_array(scales, name + "_scales")])
        if zp:
            nb = k // bs
            z = rng.integers(0, 16, (n, nb), dtype=np.uint8)
            if nb % 2:
                z = np.concatenate([z, np.zeros((n, 1), np.uint8)], 1)
            zpk = (z[:, 0::2] | (z[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
            inits.append(numpy_helper.from_array(zpk, name + "_zp"))
            ins.append(name + "_zp")
        if bias:
            while len(ins) < 5:
                ins.append("")
            inits.append(numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), name + "_bias"))
            ins.append(name + "_bias")
        nodes.append(helper.make_node("MatMulNBits", ins, [name + "_y"], name=name, domain="com.microsoft",
                                      K=k, N=n, bits=4, block_size=bs))
        return name + "_y"

    h = layer("x", 128, 96, 32, True, False, "fc1")
    nodes.append(helper.make_node("Sigmoid", [h], ["act"]))
    y = layer("act", 96, 24, 16, False, True, "fc2")
    g = helper.make_graph(nodes, "nbits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 128])],
                          [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 7
    return m


def vkqc_run(vkqc, model_path, work, feeds, extra=()):
    os.makedirs(work, exist_ok=True)
    b = os.path.join(work, "m.vkqb")
    p = subprocess.run([vkqc, "compile", model_path, "--target", "lavapipe", "-o", b] + list(extra),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        raise RuntimeError("compile: " + p.stdout[-2000:])
    args = [vkqc, "run", b, "--validation", "--output-dir", os.path.join(work, "out")]
    for k, v in feeds.items():
        np.save(os.path.join(work, k + ".npy"), v)
        args += ["--input", f"{k}={os.path.join(work, k + '.npy')}"]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        raise RuntimeError("run: " + p.stdout[-2000:])
    out = {}
    for f in os.listdir(os.path.join(work, "out")):
        out[f[:-4]] = np.load(os.path.join(work, "out", f))
    return out


def compare_cnn(tag, got, ref, model, nhwc_out=False, strict=True):
    qparams_of = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for o in model.graph.output:
        r, g = ref[o.name], got.get(o.name)
        if g is None:
            fail(f"{tag}: vkqc wrote no output {o.name}")
            continue
        if o.type.tensor_type.elem_type == TensorProto.UINT8:
            g = g.astype(np.int16) + 128
            if nhwc_out and g.ndim == 4:
                g = g.transpose(0, 3, 1, 2)
            d = int(np.abs(g - r.astype(np.int16)).max())
            frac = float((np.abs(g - r.astype(np.int16)) > 0).mean())
            (ok if d <= 1 or not strict else fail)(f"{tag}: uint8 {o.name} {list(r.shape)} max |diff| {d} LSB (<= 1), {frac:.2%} differ")
        else:
            base = o.name[:-3] if o.name.endswith("_dq") else o.name
            step = float(qparams_of.get(base + "_scale", np.float32(0)))
            d = float(np.abs(g - r).max())
            top = bool((g.argmax(-1) == r.argmax(-1)).all())
            tol = 2 * step if step else 1e-5
            (ok if (d <= tol or not strict) and top else fail)(
                f"{tag}: {o.name} {list(r.shape)} max |diff| {d:.4g} (tolerance {tol:.4g} = 2 output steps), "
                f"top-1 {'identical' if top else 'DIFFERENT'}")


def main():
    vkqc, work, modules = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    for build in (mnv2, resnet):
        net, shape = build()
        calib = rng.standard_normal(shape).astype(np.float32)
        m = qdq(net, shape, modules, work, calib)
        path = os.path.join(work, net.name + "_qdq.onnx")
        onnx.save(m, path)
        x = rng.standard_normal(shape).astype(np.float32)
        np.save(os.path.join(work, net.name + "_input.npy"), x)
        ref = run_ort(modules, path, os.path.join(work, net.name + "_ref"), {"input": x}, "disabled")
        fused = run_ort(modules, path, os.path.join(work, net.name + "_fused"), {"input": x}, "all")
        try:
            got = vkqc_run(vkqc, path, os.path.join(work, net.name + "_vk"), {"input": x})
            compare_cnn(f"{net.name} vs ORT (QDQ as written)", got, ref, m)
            # ORT's fused QLinear kernels are an optimization of the graph, not its semantics: they
            # may drop a Clip the output range makes redundant and requantize in fixed point, so
            # only the top-1 is required there; the differences are reported.
            compare_cnn(f"{net.name} vs ORT (fused QLinear kernels, informational)", got, fused, m, strict=False)
            got = vkqc_run(vkqc, path, os.path.join(work, net.name + "_nhwc"), {"input": x.transpose(0, 2, 3, 1).copy()},
                           ["--input-layout", "nhwc", "--output-layout", "nhwc"])
            compare_cnn(f"{net.name} --input-layout nhwc vs ORT", got, ref, m, nhwc_out=True)
        except RuntimeError as e:
            fail(f"{net.name}: {e}")
    m = nbits_model(np.random.default_rng(9))
    path = os.path.join(work, "nbits.onnx")
    onnx.save(m, path)
    x = rng.standard_normal((3, 128)).astype(np.float32)
    ref = run_ort(modules, path, os.path.join(work, "nbits_ref"), {"x": x}, "all")
    try:
        got = vkqc_run(vkqc, path, os.path.join(work, "nbits_vk"), {"x": x})
        r, g = ref["fc2_y"], got.get("fc2_y")
        d = float(np.abs(g - r).max()) if g is not None else float("inf")
        tol = 1e-4 * float(np.abs(r).max())
        (ok if d <= tol else fail)(f"MatMulNBits MLP (q4gaw g32 + q4gsw g16 + bias) vs ORT: max |diff| {d:.3g} (tolerance {tol:.3g})")
    except RuntimeError as e:
        fail(f"nbits: {e}")
    print(f"{len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
