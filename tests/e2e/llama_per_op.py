#!/usr/bin/env python3
"""Every op of a vkqc decoder run against the numpy decoder's own ops (llama_reference.py), each on
the GPU's inputs: the tensors the device computed are the op inputs, so a rounding difference in
one op cannot propagate. usage: llama_per_op.py VKQC MODEL_DIR IDS(comma list) WORK [--force-accum dot]

Exit 0 when every output is within TOL of max |numpy| per row (a dq8ca code may move one step when
the GPU's input sits on a rounding boundary: the tolerance covers one step of one code)."""
import json, os, subprocess, sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_reference as R  # noqa: E402

TOL = 2e-3


def main(argv):
    vkqc, model, ids, work = argv[1], argv[2], [int(t) for t in argv[3].split(",")], argv[4]
    extra = argv[5:]
    os.makedirs(work, exist_ok=True)
    g = json.load(open(os.path.join(model, "graph.json")))
    g["weights"] = os.path.abspath(os.path.join(model, g["weights"]))
    g["outputs"] = [o["outputs"][0] for o in g["ops"]]
    gpath, bpath, out = (os.path.join(work, n) for n in ("all.json", "all.vkqb", "out"))
    json.dump(g, open(gpath, "w"))
    np.save(os.path.join(work, "ids.npy"), np.array(ids, dtype=np.int32))
    subprocess.run([vkqc, "compile", gpath, "--target", "lavapipe", "--tokens", str(len(ids)), "-o", bpath] + extra,
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([vkqc, "run", bpath, "--input", "ids=" + os.path.join(work, "ids.npy"), "--output-dir", out,
                    "--validation"], check=True, stdout=subprocess.DEVNULL)
    gpu = {n: np.load(os.path.join(out, n + ".npy")) for n in g["outputs"]}
    m = R.Llama(model)
    m.reset()
    w = lambda n: np.asarray(m.w[n], R.F32)  # noqa: E731
    worst, checked, bad = 0.0, 0, []
    for op in g["ops"]:
        t, ins, name = op["type"], op["inputs"], op["outputs"][0]
        x = lambda i: gpu[ins[i]]  # noqa: E731
        if t == "embedding":
            want = m.embed(ids)
        elif t == "rms_norm":
            want = R.rms_norm(x(0), w(ins[1]), m.eps)
        elif t == "linear":
            lin = m.lm_head() if ins[1] in ("lm_head.weight", "model.embed_tokens.weight") else m.int4_linear(ins[1])
            want = lin.linear_dq8ca(x(0))
        elif t == "rope":
            want = R.rope(x(0), 0, x(0).shape[1] // m.d, m.d, m.freqs, m.layout)
        elif t == "attention":
            layer = int(ins[3].split(".")[1])
            want = R.attention(x(0), x(1), x(2), m.kc[layer], m.vc[layer], 0, m.hq, m.hkv, m.d)
        elif t == "add":
            want = (x(0) + x(1)).astype(R.F32)
        elif t == "silu":
            want = R.silu(x(0))
        elif t == "mul":
            want = (x(0) * x(1)).astype(R.F32)
        elif t == "argmax":
            want = x(0).argmax(axis=1).astype(np.int32)
            if not (gpu[name] == want).all():
                bad.append(f"{op['name']}: argmax differs")
            checked += 1
            continue
        else:
            bad.append(f"{op['name']}: op type {t} unknown to this check")
            continue
        rel = (np.abs(gpu[name] - want).max(axis=-1) / np.maximum(np.abs(want).max(axis=-1), 1e-30)).max()
        worst = max(worst, float(rel))
        checked += 1
        if rel > TOL:
            bad.append(f"{op['name']} ({t}): max |diff| / max |numpy| {rel:.3g}")
    print(f"numpy per-op check: {checked} ops on the GPU's inputs, worst {worst:.3g} of max |value| per row "
          f"(tolerance {TOL:g}), {len(bad)} over")
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
