#!/usr/bin/env python3
"""ONNX's own node tests (Debian libonnx-testdata) through vkqc on the local Vulkan device.

For each node test of an op vkqc imports: the model's parameter inputs (weights, scales, zero
points, shapes: every input but the data inputs) become initializers with the test's values, as
an exporter would store them; the model is compiled for lavapipe (`vkqc compile model.onnx`),
run with validation on the test's data inputs, and compared with the expected outputs: exact for
integer outputs where ONNX fixes the rounding, within 1 where it does not (QLinearConv and
QLinearMatMul rescale in float with unspecified rounding), float within 1e-5 of max |expected|
(+ 1e-6 absolute). uint8 tensors are fed as int8 (value - 128) and read back + 128 (DESIGN 4).

A test either passes, or is refused at import with a user error (never an internal error or a
crash). EXPECTED lists the tests that must pass; a listed test that fails, or an unlisted test
that passes (update the list), fails the run. The table of tests run, passed and refused (with
the reason) is printed; README.md keeps a copy.

usage: onnx_conformance.py VKQC WORKDIR [--print-readme]
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"

# Node tests considered: the quantized ops and the float tests of every op vkqc imports.
PREFIXES = [
    "test_qlinearconv", "test_qlinearmatmul", "test_quantizelinear", "test_dequantizelinear",
    "test_convinteger", "test_basic_convinteger", "test_matmulinteger", "test_dynamicquantizelinear",
    "test_conv_", "test_basic_conv_", "test_averagepool_2d", "test_globalaveragepool", "test_maxpool_2d",
    "test_globalmaxpool", "test_relu", "test_clip", "test_add", "test_mul", "test_concat", "test_sigmoid",
    "test_hardsigmoid", "test_hardswish", "test_softmax", "test_resize_upsample_scales_nearest",
    "test_resize_upsample_sizes_nearest", "test_flatten", "test_reshape", "test_squeeze", "test_unsqueeze",
    "test_transpose", "test_gemm", "test_matmul_",
]

# Inputs that stay run-time inputs (by op type); every other input becomes an initializer.
DATA_INPUTS = {"Add": {0, 1}, "Mul": {0, 1}, "Concat": None, "Sum": None}

# Tests that must pass on lavapipe (keep sorted).
EXPECTED = set("""
    test_add test_averagepool_2d_default test_averagepool_2d_pads test_averagepool_2d_precomputed_pads
    test_averagepool_2d_precomputed_same_upper test_averagepool_2d_precomputed_strides test_averagepool_2d_same_lower test_averagepool_2d_same_upper
    test_averagepool_2d_strides test_clip test_clip_default_inbounds test_clip_default_max
    test_clip_default_min test_clip_example test_clip_inbounds test_clip_outbounds
    test_clip_splitbounds test_concat_1d_axis_0 test_concat_1d_axis_negative_1 test_concat_2d_axis_0
    test_concat_2d_axis_1 test_concat_2d_axis_negative_1 test_concat_2d_axis_negative_2 test_concat_3d_axis_0
    test_concat_3d_axis_1 test_concat_3d_axis_2 test_concat_3d_axis_negative_1 test_concat_3d_axis_negative_2
    test_concat_3d_axis_negative_3 test_dequantizelinear test_dequantizelinear_axis test_flatten_axis0
    test_flatten_axis1 test_flatten_axis2 test_flatten_axis3 test_flatten_default_axis
    test_flatten_negative_axis1 test_flatten_negative_axis2 test_flatten_negative_axis3 test_flatten_negative_axis4
    test_globalaveragepool test_globalaveragepool_precomputed test_globalmaxpool test_globalmaxpool_precomputed
    test_hardsigmoid test_hardsigmoid_default test_hardsigmoid_example test_hardswish
    test_identity test_maxpool_2d_default test_maxpool_2d_pads test_maxpool_2d_precomputed_pads
    test_maxpool_2d_precomputed_same_upper test_maxpool_2d_precomputed_strides test_maxpool_2d_same_lower test_maxpool_2d_same_upper
    test_maxpool_2d_strides test_maxpool_2d_uint8 test_mul test_mul_bcast
    test_mul_example test_qlinearconv test_qlinearmatmul_2D test_quantizelinear
    test_quantizelinear_axis test_relu test_reshape_extended_dims test_reshape_negative_dim
    test_reshape_negative_extended_dims test_reshape_one_dim test_reshape_reduced_dims test_reshape_reordered_all_dims
    test_reshape_reordered_last_dims test_reshape_zero_and_negative_dim test_reshape_zero_dim test_resize_upsample_scales_nearest
    test_sigmoid test_sigmoid_example test_softmax_axis_2 test_softmax_default_axis
    test_softmax_example test_softmax_large_number test_softmax_negative_axis test_squeeze
    test_squeeze_negative_axes test_transpose_all_permutations_0 test_transpose_all_permutations_1 test_transpose_all_permutations_2
    test_transpose_all_permutations_3 test_transpose_all_permutations_4 test_transpose_all_permutations_5 test_transpose_default
    test_unsqueeze_axis_0 test_unsqueeze_axis_1 test_unsqueeze_axis_2 test_unsqueeze_axis_3
    test_unsqueeze_negative_axes test_unsqueeze_three_axes test_unsqueeze_two_axes test_unsqueeze_unsorted_axes
""".split())


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return p.returncode, p.stdout


def freeze(model, inputs):
    """Moves every non-data input into the initializers; returns the data input names."""
    g = model.graph
    consumers = {}
    for node in g.node:
        for i, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node.op_type, i))
    keep = []
    for vi in list(g.input):
        uses = consumers.get(vi.name, [])
        data = any(i == 0 or (op in DATA_INPUTS and (DATA_INPUTS[op] is None or i in DATA_INPUTS[op]))
                   for op, i in uses)
        if data or vi.name not in inputs:
            keep.append(vi.name)
            continue
        t = numpy_helper.from_array(inputs[vi.name], vi.name)
        g.initializer.append(t)
        g.input.remove(vi)
    return keep


def to_vkqc(a):
    return (a.astype(np.int16) - 128).astype(np.int8) if a.dtype == np.uint8 else a


def compare(name, got, want, loose_int):
    if want.dtype == np.uint8:
        got = got.astype(np.int16) + 128
    if got.shape != want.shape:
        if got.size == want.size:
            got = got.reshape(want.shape)
        else:
            return f"{name}: shape {got.shape} != expected {want.shape}"
    if np.issubdtype(want.dtype, np.integer):
        d = np.abs(got.astype(np.int64) - want.astype(np.int64)).max() if want.size else 0
        lim = 1 if loose_int else 0
        return None if d <= lim else f"{name}: max |diff| {d} > {lim}"
    tol = 1e-5 * float(np.abs(want).max(initial=0)) + 1e-6
    d = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max(initial=0))
    return None if d <= tol else f"{name}: max |diff| {d:.3g} > {tol:.3g}"


def one(vkqc, test, work):
    src = os.path.join(DATA, test)
    model = onnx.load(os.path.join(src, "model.onnx"))
    ds = os.path.join(src, "test_data_set_0")
    ins, outs = {}, []
    for i, vi in enumerate(model.graph.input):
        p = os.path.join(ds, f"input_{i}.pb")
        if os.path.exists(p):
            t = onnx.TensorProto()
            t.ParseFromString(open(p, "rb").read())
            ins[vi.name] = numpy_helper.to_array(t)
    for i, vi in enumerate(model.graph.output):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(ds, f"output_{i}.pb"), "rb").read())
        outs.append((vi.name, numpy_helper.to_array(t)))
    data = freeze(model, ins)
    d = os.path.join(work, test)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    mp = os.path.join(d, "model.onnx")
    onnx.save(model, mp)
    shapes = [f"--input-shape={n}=" + ",".join(str(x) for x in ins[n].shape) for n in data if n in ins and ins[n].ndim]
    rc, out = run([vkqc, "compile", mp, "--target", "lavapipe", "-o", os.path.join(d, "m.vkqb")] + shapes)
    if rc != 0:
        last = [l for l in out.strip().splitlines() if l.strip()][-1:] or ["(no output)"]
        msg = last[0]
        if "internal error" in out or rc not in (1, 2):
            return "crash", f"rc {rc}: {msg}"
        # Keep the reason: the text after the node label.
        reason = msg.split("): ", 1)[-1] if "): " in msg else msg.split(": ", 1)[-1]
        return "refused", reason
    args = [vkqc, "run", os.path.join(d, "m.vkqb"), "--validation", "--output-dir", os.path.join(d, "out")]
    for n in data:
        np.save(os.path.join(d, n + ".npy"), to_vkqc(ins[n]))
        args += ["--input", f"{n}={os.path.join(d, n + '.npy')}"]
    rc, out = run(args)
    if rc != 0:
        return "fail", "run failed: " + out.strip().splitlines()[-1] if out.strip() else f"run rc {rc}"
    loose = any(n.op_type in ("QLinearConv", "QLinearMatMul") for n in model.graph.node)
    for name, want in outs:
        f = os.path.join(d, "out", name + ".npy")
        if not os.path.exists(f):
            return "fail", f"no output {name}"
        err = compare(name, np.load(f), want, loose)
        if err:
            return "fail", err
    return "pass", ""


def readme_block(rows):
    passed = [t for t, st, _ in rows if st == "pass"]
    refused = [(t, why) for t, st, why in rows if st == "refused"]
    lines = [f"{len(rows)} node tests run, {len(passed)} passed, {len(refused)} refused, "
             f"{len(rows) - len(passed) - len(refused)} failed.", "",
             f"Passed ({len(passed)}): " + ", ".join(t[5:] for t in passed) + ".", "",
             "| refused node test | reason |", "|---|---|"]
    for t, why in refused:
        lines.append(f"| {t[5:]} | {why.split('; vkqc imports')[0].replace('|', '/')} |")
    return "\n".join(lines) + "\n"


README_BEGIN, README_END = "<!-- onnx-conformance:begin -->\n", "<!-- onnx-conformance:end -->"


def main():
    vkqc, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    tests = sorted(t for t in os.listdir(DATA) if (any(t.startswith(p) for p in PREFIXES) or t == "test_identity")
                   and not t.endswith("_expanded"))
    rows, bad = [], []
    for t in tests:
        try:
            status, why = one(vkqc, t, work)
        except Exception as e:  # a harness problem is a failure too
            status, why = "fail", f"harness: {e}"
        rows.append((t, status, why))
        if status in ("fail", "crash"):
            bad.append(f"{t}: {status}: {why}")
        elif status == "pass" and EXPECTED and t not in EXPECTED:
            bad.append(f"{t}: passes but is not in EXPECTED (add it)")
        elif status != "pass" and t in EXPECTED:
            bad.append(f"{t}: expected to pass, {status}: {why}")
    passed = [r for r in rows if r[1] == "pass"]
    refused = [r for r in rows if r[1] == "refused"]
    print(f"ONNX node tests: {len(rows)} run, {len(passed)} passed, {len(refused)} refused, "
          f"{len(rows) - len(passed) - len(refused)} failed")
    print("| node test | result |")
    print("|---|---|")
    for t, s, why in rows:
        print(f"| {t} | {s}{': ' + why.replace('|', '/') if why else ''} |")
    if not EXPECTED:
        print("EXPECTED is empty; passing tests:\n" + "\n".join(r[0] for r in passed))
    block = readme_block(rows)
    if "--print-readme" in sys.argv:
        print(README_BEGIN + block + README_END)
    readme = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")).read()
    if README_BEGIN not in readme or README_BEGIN + block + README_END not in readme:
        bad.append("README.md's ONNX conformance list differs from this run; regenerate it with "
                   "onnx_conformance.py VKQC WORK --print-readme")
    for b in bad:
        print("FAIL " + b)
    return 1 if bad or not EXPECTED else 0


if __name__ == "__main__":
    sys.exit(main())
