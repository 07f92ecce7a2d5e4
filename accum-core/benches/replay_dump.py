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

A run with a batch ramp-up changes A from stage to stage: the manifest
lists the stages, and each attempt's `stats.json` names its stage and
accumulation. The replay checks that every attempt's group fits its stage
(at most A microbatches per replica, the stage's update range) and reports
the agreement per stage as well.

    accum run examples/rampup.toml --dump /tmp/dump
    python3 accum-core/benches/replay_dump.py /tmp/dump

Prints the largest relative difference per parameter, per stage and over
the dump, `max |g_accum − g_torch| / max |g_torch|`, and exits 1 when it is
above --rtol (default 1e-5) or a group does not fit its stage. With --floor
it also evaluates every group in PyTorch float32 and prints that error
against float64, per stage: the floor of any float32 implementation on the
same groups, to judge a difference above --rtol by. Needs numpy and torch.
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


def group_gradient(params, names, batches, ignore, norm, denominator, dtype):
    """The gradient of the group's normalized loss, evaluated in `dtype`."""
    leaves = {n: params[n].to(dtype).clone().requires_grad_(True) for n in names}
    total = sum(
        model_loss(leaves, t, l, ignore, norm, float(denominator)) for t, l in batches
    )
    total.backward()
    return {n: leaves[n].grad.to(torch.float64) for n in names}


def relative(got, ref):
    """max |got − ref| / max |ref|."""
    scale = ref.abs().max().item()
    diff = (got - ref).abs().max().item()
    return diff / scale if scale > 0 else diff


def replay(dump, rtol, floor):
    manifest = json.loads((dump / "manifest.json").read_text())
    if manifest.get("format") != "accum-dump/1":
        sys.exit(f"{dump}: not an accum-dump/1 folder")
    names = manifest["params"]
    norm = manifest["loss"]["normalization"]
    ignore = manifest["loss"]["ignore_index"]
    replicas = manifest["plan"]["replicas"]
    # Dumps written before stages existed have one stage: the plan.
    stages = manifest.get("stages") or [
        {
            "accumulation": manifest["plan"]["accumulation"],
            "global_batch": None,
            "first_update": 1,
            "last_update": None,
        }
    ]
    params = {n: load(dump / "init" / f"{n}.npy") for n in names}
    worst = {n: 0.0 for n in names}
    per_stage = [
        {"worst": 0.0, "floor": 0.0, "attempts": 0, "compared": 0} for _ in stages
    ]
    misfits = []
    compared = 0
    applied = 0
    for attempt in range(1, manifest["updates"] + 1):
        folder = dump / f"update-{attempt:06d}"
        stats = json.loads((folder / "stats.json").read_text())
        index = stats.get("stage", 0)
        stage = stages[index]
        parts = sorted(folder.glob("r*-m*-tokens.npy"))
        # The group fits its stage: the update it produces lies in the
        # stage's range, and no replica runs more than the stage's A.
        update = applied + 1
        last = stage["last_update"]
        if stats.get("accumulation", stage["accumulation"]) != stage["accumulation"]:
            misfits.append(f"attempt {attempt}: accumulation {stats['accumulation']} is not stage {index + 1}'s")
        if update < stage["first_update"] or (last is not None and update > last):
            misfits.append(f"attempt {attempt}: update {update} is outside stage {index + 1}")
        for r in range(replicas):
            count = len(list(folder.glob(f"r{r}-m*-tokens.npy")))
            if count > stage["accumulation"]:
                misfits.append(
                    f"attempt {attempt}: replica {r} runs {count} microbatches, "
                    f"more than stage {index + 1}'s A = {stage['accumulation']}"
                )
        applied += 1 if stats["applied"] else 0
        per_stage[index]["attempts"] += 1
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
        args = (params, names, batches, ignore, norm, denominator)
        reference = group_gradient(*args, torch.float64)
        grads = {n: load(folder / "grad" / f"{n}.npy") for n in names}
        if all(torch.isfinite(g).all() for g in grads.values()):
            compared += 1
            per_stage[index]["compared"] += 1
            for n in names:
                rel = relative(grads[n], reference[n])
                worst[n] = max(worst[n], rel)
                per_stage[index]["worst"] = max(per_stage[index]["worst"], rel)
            if floor:
                single = group_gradient(*args, torch.float32)
                per_stage[index]["floor"] = max(
                    [per_stage[index]["floor"]]
                    + [relative(single[n], reference[n]) for n in names]
                )
        params = {n: load(folder / "param" / f"{n}.npy") for n in names}
    overall = max(worst.values())
    precision = manifest["precision"]["mode"]
    print(
        f"{dump}: {norm}, D={replicas}, {precision}, {compared} of "
        f"{manifest['updates']} attempts compared"
    )
    for n in names:
        print(f"  {n:<6} max relative gradient difference {worst[n]:.2e}")
    if len(stages) > 1:
        for i, (stage, seen) in enumerate(zip(stages, per_stage)):
            last = stage["last_update"]
            span = f"updates {stage['first_update']}–{last if last is not None else ''}"
            print(
                f"  stage {i + 1} (A {stage['accumulation']}, B {stage['global_batch']}, {span}): "
                f"{seen['compared']} of {seen['attempts']} attempts compared, "
                f"max relative gradient difference {seen['worst']:.2e}"
                + (f" (PyTorch float32: {seen['floor']:.2e})" if floor else "")
            )
    elif floor:
        print(f"  PyTorch float32 against float64: {per_stage[0]['floor']:.2e}")
    for misfit in misfits:
        print(f"  MISFIT {misfit}")
    print(f"  overall {overall:.2e} (rtol {rtol:g})")
    return overall <= rtol and not misfits


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dumps", nargs="+", type=pathlib.Path)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also report PyTorch float32's own error against float64",
    )
    args = parser.parse_args()
    ok = all([replay(d, args.rtol, args.floor) for d in args.dumps])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
