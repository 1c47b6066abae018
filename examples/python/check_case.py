#!/usr/bin/env python3
"""Read a lattn golden case with nothing but json + numpy, run a NumPy linear attention on its
inputs and compare with the golden outputs (relative RMS, the library's metric).

usage: python3 examples/python/check_case.py CASE.safetensors...
       (e.g. reference_outputs/linear_attn/*.safetensors; needs NumPy: apt-get install python3-numpy)

Exit status: 0 when every checked tensor passes, 1 on a failure, 2 on bad usage or an unreadable
file. Cases of other mixers are skipped and counted.
"""
import json
import struct
import sys

try:
    import numpy as np
except ImportError:
    print("check_case: needs NumPy (Debian: apt-get install python3-numpy)", file=sys.stderr)
    sys.exit(2)

DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I32": "<i4", "I64": "<i8"}


def load_case(path):
    """safetensors: u64 header length, JSON header, raw little-endian data."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = raw[8 + n:]
    tensors = {}
    for name, t in header.items():
        b, e = t["data_offsets"]
        if t["dtype"] == "BF16":  # bfloat16: the high half of a float32
            u = np.frombuffer(data[b:e], "<u2").astype(np.uint32) << 16
            arr = u.view("<f4")
        else:
            arr = np.frombuffer(data[b:e], DTYPES[t["dtype"]])
        tensors[name] = arr.reshape(t["shape"])
    return tensors, meta


def feature_map(x, name, w=None, b=None):
    if name == "identity":
        return x
    if name == "relu":
        return np.maximum(x, 0)
    if name == "elu1":
        return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))
    if name == "hedgehog":
        k = x.shape[-1]
        y = x @ w.reshape(k, k).T + b
        z = np.concatenate([2 * y, -2 * y], axis=-1)
        z = np.exp(z - z.max(-1, keepdims=True))
        return z / z.sum(-1, keepdims=True)
    raise ValueError(name)


def linear_attention(t, meta):
    """The recurrence of lattn_la_ref in float64: S += phi(k) v^T, o = s S^T phi(q) [/ (s phi(q).z + eps)]."""
    q, k, v = (t["in." + n].astype(np.float64) for n in "qkv")
    fm = meta.get("fmap", "identity")
    w, b = t.get("in.fmap_w"), t.get("in.fmap_b")
    wk, bk = t.get("in.fmap_wk", w), t.get("in.fmap_bk", b)       # untied maps: the key map's own weights
    fq, fk = feature_map(q, fm, w, b), feature_map(k, fm, wk, bk)
    B, T, H, Kf = fq.shape
    V = v.shape[-1]
    s = float(meta["scale"])
    norm = meta.get("normalize") == "1"
    eps = float(meta.get("eps", "1e-6"))
    offsets = t["in.offsets"].tolist() if "in.offsets" in t else None
    seqs = [(0, o0, o1) for o0, o1 in zip(offsets[:-1], offsets[1:])] if offsets else [(b_, 0, T) for b_ in range(B)]
    o = np.zeros((B, T, H, V))
    hts, zts = [], []
    for n, (bb, t0, t1) in enumerate(seqs):
        S = t["in.h0"][n].astype(np.float64).copy() if "in.h0" in t else np.zeros((H, Kf, V))
        z = t["in.z0"][n].astype(np.float64).copy() if "in.z0" in t else np.zeros((H, Kf))
        for tt in range(t0, t1):
            S += np.einsum("hk,hv->hkv", fk[bb, tt], v[bb, tt])
            z += fk[bb, tt]
            num = s * np.einsum("hk,hkv->hv", fq[bb, tt], S)
            o[bb, tt] = num / (s * np.einsum("hk,hk->h", fq[bb, tt], z)[:, None] + eps) if norm else num
        hts.append(S)
        zts.append(z)
    return {"out.o": o, "out.ht": np.array(hts), "out.zt": np.array(zts)}


def rel_rms(x, ref):
    ref = ref.astype(np.float64)
    d = np.sqrt(np.sum((x - ref) ** 2))
    n = np.sqrt(np.sum(ref ** 2))
    return d / n if n > 0 else d


def main(paths):
    if not paths:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    ok, checked, skipped = True, 0, {}
    for path in paths:
        try:
            t, meta = load_case(path)
        except (OSError, ValueError, KeyError, struct.error) as e:
            print("check_case: cannot read %s: %s" % (path, e), file=sys.stderr)
            return 2
        kind = meta.get("mixer") if meta.get("pass", "forward") == "forward" else "%s gradients" % meta.get("mixer")
        if kind != "linear_attn":
            skipped[kind] = skipped.get(kind, 0) + 1
            continue
        checked += 1
        got = linear_attention(t, meta)
        tol = float(meta.get("tol_fp32", "1e-5"))
        for name in sorted(k for k in t if k.startswith("out.")):
            e = rel_rms(got[name].reshape(t[name].shape), t[name])
            passed = e <= tol
            ok &= passed
            print("%s %-28s %-8s rel_rms %.3e" % ("PASS" if passed else "FAIL", path.split("/")[-1], name, e))
    why = ", ".join("%d %s" % (n, m) for m, n in sorted(skipped.items(), key=lambda x: str(x[0])))
    print("%d linear_attn cases checked, %d skipped%s" % (checked, sum(skipped.values()),
          " (other mixers and gradient cases, which this NumPy check does not implement: %s)" % why if skipped else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
