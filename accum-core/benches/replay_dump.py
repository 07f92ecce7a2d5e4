#!/usr/bin/env python3
"""Replays an accum dump (format accum-dump/1, DUMP.md) in PyTorch and
compares gradients.

For every update attempt of the dump it takes the parameters before the
attempt (`init/` for the first, the previous attempt's `param/` after), runs
the reference model on every replica's microbatches exactly as stored
(`r<replica>-m<index>-tokens.npy`, `-labels.npy`, padding and ignored
positions labelled with the ignore index), weights the token losses by the
manifest's normalization over the whole group (per_token: ÷ supervised
tokens of the group; per_example: each example's mean ÷ examples of the
group; sum: no division), and compares the gradient of that loss, in
float64, with the dump's `grad/<param>.npy` (reduced over replicas,
normalized, unscaled, before clipping).

    accum run examples/tiny.toml --dump /tmp/dump
    python3 accum-core/benches/replay_dump.py /tmp/dump

Prints the largest relative difference per parameter and over the dump,
`max |g_accum − g_torch| / max |g_torch|`, and exits 1 when it is above
--rtol (default 1e-5). Needs numpy and torch.
"""

import argparse
import json
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F


def load(path):
    return torch.from_numpy(np.load(path)).to(torch.float64)


def model_loss(params, tokens, labels, ignore_index, normalization, denominator):
    """The group's share of this microbatch: Σ weighted token losses."""
    mask = labels != ignore_index
    x = params["embed"][tokens]  # [m, L, H]
    h = torch.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]  # [m, L, V]
    safe = torch.where(mask, labels, torch.zeros_like(labels))
    token_loss = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), safe.reshape(-1), reduction="none"
    ).reshape(labels.shape)
    token_loss = token_loss * mask
    if normalization == "per_token":
        return token_loss.sum() / denominator
    if normalization == "per_example":
        counts = mask.sum(dim=1)
        keep = counts > 0
        means = token_loss.sum(dim=1)[keep] / counts[keep]
        return means.sum() / denominator
    if normalization == "sum":
        return token_loss.sum()
    raise ValueError(f"unknown normalization {normalization!r}")


def replay(dump, rtol):
    manifest = json.loads((dump / "manifest.json").read_text())
    if manifest.get("format") != "accum-dump/1":
        sys.exit(f"{dump}: not an accum-dump/1 folder")
    names = manifest["params"]
    norm = manifest["loss"]["normalization"]
    ignore = manifest["loss"]["ignore_index"]
    params = {n: load(dump / "init" / f"{n}.npy") for n in names}
    worst = {n: 0.0 for n in names}
    compared = 0
    for attempt in range(1, manifest["updates"] + 1):
        folder = dump / f"update-{attempt:06d}"
        parts = sorted(folder.glob("r*-m*-tokens.npy"))
        batches = []
        for p in parts:
            stem = p.name[: -len("-tokens.npy")]
            tokens = torch.from_numpy(np.load(p)).long()
            labels = torch.from_numpy(np.load(folder / f"{stem}-labels.npy")).long()
            batches.append((tokens, labels))
        mask_counts = [(l != ignore).sum().item() for _, l in batches]
        examples = sum(((l != ignore).sum(dim=1) > 0).sum().item() for _, l in batches)
        denominator = {
            "per_token": max(sum(mask_counts), 1),
            "per_example": max(examples, 1),
            "sum": 1,
        }[norm]
        leaves = {n: params[n].clone().requires_grad_(True) for n in names}
        total = sum(
            model_loss(leaves, t, l, ignore, norm, float(denominator))
            for t, l in batches
        )
        total.backward()
        grads = {n: load(folder / "grad" / f"{n}.npy") for n in names}
        if all(torch.isfinite(g).all() for g in grads.values()):
            compared += 1
            for n in names:
                ref = leaves[n].grad
                scale = ref.abs().max().item()
                diff = (grads[n] - ref).abs().max().item()
                worst[n] = max(worst[n], diff / scale if scale > 0 else diff)
        params = {n: load(folder / "param" / f"{n}.npy") for n in names}
    overall = max(worst.values())
    precision = manifest["precision"]["mode"]
    replicas = manifest["plan"]["replicas"]
    print(
        f"{dump}: {norm}, D={replicas}, {precision}, {compared} of "
        f"{manifest['updates']} attempts compared"
    )
    for n in names:
        print(f"  {n:<6} max relative gradient difference {worst[n]:.2e}")
    print(f"  overall {overall:.2e} (rtol {rtol:g})")
    return overall <= rtol


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dumps", nargs="+", type=pathlib.Path)
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    ok = all([replay(d, args.rtol) for d in args.dumps])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
