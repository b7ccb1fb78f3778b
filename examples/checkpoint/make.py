"""Writes model.safetensors: a tiny Llama-shaped checkpoint (two layers, hidden size 64) of
bf16 weights with seeded normal values, for the documentation's examples. Rerun to
regenerate it (numpy and ml_dtypes; the file is committed, so the examples need neither)."""

import json
import struct
from pathlib import Path

import ml_dtypes
import numpy as np

rng = np.random.default_rng(2026)
hidden, inter, vocab = 64, 128, 256
tensors = {"model.embed_tokens.weight": rng.normal(0, 0.02, (vocab, hidden))}
for layer in range(2):
    p = f"model.layers.{layer}."
    for name, shape in [
        ("self_attn.q_proj", (hidden, hidden)),
        ("self_attn.k_proj", (hidden, hidden)),
        ("self_attn.v_proj", (hidden, hidden)),
        ("self_attn.o_proj", (hidden, hidden)),
        ("mlp.gate_proj", (inter, hidden)),
        ("mlp.up_proj", (inter, hidden)),
        ("mlp.down_proj", (hidden, inter)),
    ]:
        tensors[p + name + ".weight"] = rng.normal(0, 0.05, shape)
    tensors[p + "input_layernorm.weight"] = 1 + rng.normal(0, 0.01, hidden)
    tensors[p + "post_attention_layernorm.weight"] = 1 + rng.normal(0, 0.01, hidden)
tensors["model.norm.weight"] = 1 + rng.normal(0, 0.01, hidden)
tensors["lm_head.weight"] = rng.normal(0, 0.02, (vocab, hidden))

header, blobs, at = {}, [], 0
for name, t in tensors.items():
    b = t.astype(ml_dtypes.bfloat16).tobytes()
    header[name] = {"dtype": "BF16", "shape": list(t.shape), "data_offsets": [at, at + len(b)]}
    blobs.append(b)
    at += len(b)
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
out = Path(__file__).with_name("model.safetensors")
out.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))
print(f"{out}: {len(tensors)} tensors, {out.stat().st_size} bytes")
