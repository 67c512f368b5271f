#!/usr/bin/env python3
"""An exported kept model (bin/repro export-model RUN --format safetensors) loaded and run
outside the suite: NumPy only, no code of the suite.  It reads DIR/model.safetensors (an
8-byte little-endian header length N, N bytes of JSON: each tensor's dtype, shape and
data_offsets into the data that follows) and DIR/config.json, builds the validation split
of the corpus from the vocabulary config.json gives (the last 10 % of the corpus's bytes,
the first floor(9 n / 10) being training), and computes the mean next-character NLL over
the first WINDOWS non-overlapping windows of block_size (all of them by default), the
forward pass that docs/DESIGN.md states:

  x = wte[t] + wpe[p]; x = embed_norm(x) (none, LayerNorm, RMSNorm, or x * embed_scale);
  per block: x = x + c_proj(attention(ln_1(x))); x = x + mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x))));
  logits = ln_f(x) @ W^T, W = lm_head.weight when untied, else wte.weight.

usage: safetensors_forward.py DIR CORPUS [WINDOWS]
prints one JSON line: {"windows": W, "positions": P, "val_loss": L}
"""
import json
import struct
import sys

import numpy as np


def load_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        a, b = info["data_offsets"]
        tensors[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(info["shape"])
    return tensors


def layernorm(x, w, b, eps):
    mean = x.mean(axis=-1, keepdims=True, dtype=np.float64)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (((x - mean) / np.sqrt(var + eps)) * w + b).astype(np.float32)


def rmsnorm(x, w, eps):
    ms = (x.astype(np.float64) ** 2).mean(axis=-1, keepdims=True)
    return (x / np.sqrt(ms + eps) * w).astype(np.float32)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def forward_nll(t, cfg, inputs, targets):
    """Per-position NLL (float64) of a batch of windows (B, T)."""
    B, T = inputs.shape
    C, H = cfg["n_embd"], cfg["n_head"]
    hd = C // H
    x = t["transformer.wte.weight"][inputs] + t["transformer.wpe.weight"][:T][None]
    en = cfg["embed_norm"]
    if en["kind"] in ("layernorm", "layernorm_matched"):
        x = layernorm(x, t["transformer.embed_norm.weight"], t["transformer.embed_norm.bias"],
                      en["epsilon"])
    elif en["kind"] == "rmsnorm":
        x = rmsnorm(x, t["transformer.embed_norm.weight"], en["epsilon"])
    elif en["kind"] == "scale":
        x = (x * np.float32(en["embed_scale"])).astype(np.float32)
    eps = cfg["layer_norm_epsilon"]
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    for l in range(cfg["n_layer"]):
        p = "transformer.h.%d." % l
        h = layernorm(x, t[p + "ln_1.weight"], t[p + "ln_1.bias"], eps)
        qkv = h @ t[p + "attn.c_attn.weight"].T + t[p + "attn.c_attn.bias"]
        q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]
        q = q.reshape(B, T, H, hd).transpose(0, 2, 1, 3)
        k = k.reshape(B, T, H, hd).transpose(0, 2, 1, 3)
        v = v.reshape(B, T, H, hd).transpose(0, 2, 1, 3)
        att = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(hd))
        att = np.where(mask, -np.inf, att)
        att = np.exp(att - att.max(axis=-1, keepdims=True))
        att = att / att.sum(axis=-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
        x = x + (y @ t[p + "attn.c_proj.weight"].T + t[p + "attn.c_proj.bias"])
        h = layernorm(x, t[p + "ln_2.weight"], t[p + "ln_2.bias"], eps)
        h = gelu_tanh(h @ t[p + "mlp.c_fc.weight"].T + t[p + "mlp.c_fc.bias"])
        x = x + (h @ t[p + "mlp.c_proj.weight"].T + t[p + "mlp.c_proj.bias"])
    x = layernorm(x, t["transformer.ln_f.weight"], t["transformer.ln_f.bias"], eps)
    w = t["lm_head.weight"] if not cfg["tie_word_embeddings"] else t["transformer.wte.weight"]
    logits = (x @ w.T).astype(np.float64)
    m = logits.max(axis=-1, keepdims=True)
    lse = m[..., 0] + np.log(np.exp(logits - m).sum(axis=-1))
    picked = np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return lse - picked


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    folder, corpus = sys.argv[1], sys.argv[2]
    with open(folder + "/config.json") as f:
        cfg = json.load(f)
    t = load_safetensors(folder + "/model.safetensors")
    with open(corpus, "rb") as f:
        text = f.read()
    stoi = {b: i for i, b in enumerate(cfg["vocab_bytes"])}
    n_train = len(text) * 9 // 10
    val = np.array([stoi[b] for b in text[n_train:]], dtype=np.int64)
    T = cfg["block_size"]
    n_win = (len(val) - 1) // T
    if len(sys.argv) == 4:
        n_win = min(n_win, int(sys.argv[3]))
    total, count = 0.0, 0
    for w0 in range(0, n_win, 64):
        w1 = min(n_win, w0 + 64)
        idx = np.arange(w0 * T, w1 * T).reshape(w1 - w0, T)
        nll = forward_nll(t, cfg, val[idx], val[idx + 1])
        total += float(nll.sum())
        count += nll.size
    print(json.dumps({"windows": n_win, "positions": count, "val_loss": total / count}))


if __name__ == "__main__":
    main()
