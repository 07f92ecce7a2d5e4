#!/usr/bin/env python3
"""PyTorch reference for the engine benchmark (accum-core/benches/engine.rs).

The same model, data lengths and plans as the benchmark, in PyTorch on the
CPU: TokenMlp with V=256, H=64, F=256 (embedding, tanh layer, output
projection, cross-entropy), 256 examples per update with lengths uniform in
16..=128, every position supervised, loss per token over the whole group,
AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01), gradient
clipping to norm 1.0, one optimizer step per group of A microbatches of m
examples. Like the engine, each microbatch is packed: its positions are
concatenated, so padding costs nothing here either.

Also times PyTorch's sgemm on one thread (torch.mm, whatever BLAS the
wheel links) on the six products of a microbatch of m=32, in the shapes
the engine runs them (the benchmark's sgemm table), and 512x512x512.

Prints a table and writes JSON (default pytorch_tokenmlp.json) that the
Rust benchmark reads when ACCUM_PYTORCH_JSON names it:

    python3 -m venv ~/venvs/torch && ~/venvs/torch/bin/pip install torch numpy
    ~/venvs/torch/bin/python accum-core/benches/pytorch_tokenmlp.py --out /tmp/torch.json
    ACCUM_PYTORCH_JSON=/tmp/torch.json cargo bench -p accum-core --bench engine

Neither CI nor the tests need torch.
"""

import argparse
import json
import platform
import re
import statistics
import time

import torch
import torch.nn.functional as F

V, H, FFN = 256, 64, 256
EXAMPLES = 256
MIN_LEN, MAX_LEN = 16, 128
PLANS = [(256, 1), (32, 8), (8, 32)]


class TokenMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(V, H)
        self.fc1 = torch.nn.Linear(H, FFN)
        self.fc2 = torch.nn.Linear(FFN, V)

    def forward(self, tokens):
        return self.fc2(torch.tanh(self.fc1(self.embed(tokens))))


def make_data(seed):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(MIN_LEN, MAX_LEN + 1, (EXAMPLES,), generator=g)
    examples = []
    for n in lengths.tolist():
        seq = torch.randint(0, V, (n + 1,), generator=g)
        examples.append((seq[:-1], seq[1:]))
    return examples


def microbatches(examples, m):
    """Packed microbatches of m examples: (tokens, labels) of all positions."""
    out = []
    for i in range(0, len(examples), m):
        chunk = examples[i : i + m]
        out.append(
            (torch.cat([t for t, _ in chunk]), torch.cat([l for _, l in chunk]))
        )
    return out


def measure(m, a, threads, updates, warmup):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = TokenMlp()
    opt = torch.optim.AdamW(
        model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01
    )
    examples = make_data(1)
    batches = microbatches(examples, m)
    assert len(batches) == a, (len(batches), a)
    tokens = sum(len(t) for t, _ in batches)
    times = []
    for step in range(warmup + updates):
        start = time.perf_counter()
        # The group's global denominator, fixed before the first backward.
        denominator = float(tokens)
        for tok, lab in batches:
            logits = model(tok)
            loss = F.cross_entropy(logits, lab, reduction="sum") / denominator
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=False)
        if step >= warmup:
            times.append(time.perf_counter() - start)
    secs = statistics.median(times)
    return {
        "m": m,
        "a": a,
        "d": 1,
        "threads": threads,
        "ms_per_update": secs * 1e3,
        "tokens_per_update": tokens,
        "tokens_per_s": tokens / secs,
    }


def blas():
    """The BLAS the wheel was built with (`BLAS_INFO` of torch's build)."""
    found = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    return found.group(1) if found else "unknown"


def sgemm(reps=40):
    """GFLOP/s of torch.mm on one thread, fastest of `reps`, on the six
    products of the median m=32 microbatch of this script's data (the
    benchmark's sgemm table: the embedding's three through the V=256
    token rows, the others through the microbatch's positions), and 512^3.
    `a_t`/`b_t`: the operand is stored transposed; `add`: C += A.B."""
    torch.set_num_threads(1)
    rows = sorted(len(t) for t, _ in microbatches(make_data(1), 32))
    rows = rows[len(rows) // 2]
    shapes = [
        ("embed·w1", V, H, FFN, False, False, False),
        ("h·w2", rows, FFN, V, False, False, True),
        ("dW2 += hᵀ·dlogits", FFN, rows, V, True, False, True),
        ("dlogits·w2ᵀ", rows, V, FFN, False, True, False),
        ("dW1 += embedᵀ·S", H, V, FFN, True, False, True),
        ("dEmbed += S·w1ᵀ", V, FFN, H, False, True, True),
        ("512³", 512, 512, 512, False, False, False),
    ]
    out = []
    for what, m, k, n, a_t, b_t, add in shapes:
        a = torch.rand(k, m).t() if a_t else torch.rand(m, k)
        b = torch.rand(n, k).t() if b_t else torch.rand(k, n)
        c = torch.zeros(m, n)
        best = float("inf")
        for _ in range(reps):
            start = time.perf_counter()
            if add:
                c.addmm_(a, b)
            else:
                torch.mm(a, b, out=c)
            best = min(best, time.perf_counter() - start)
        out.append(
            {"what": what, "m": m, "k": k, "n": n, "gflops": 2 * m * k * n / best / 1e9}
        )
    return {"blas": blas(), "rows": rows, "products": out}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="pytorch_tokenmlp.json")
    parser.add_argument("--updates", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    results = []
    print(f"torch {torch.__version__} on {platform.processor() or platform.machine()}")
    print(f"{'plan':<12} {'thr':>3} {'ms/update':>10} {'tokens/s':>11}")
    for m, a in PLANS:
        for threads in args.threads:
            r = measure(m, a, threads, args.updates, args.warmup)
            results.append(r)
            print(
                f"m{m}_a{a}_d1{'':<{12 - len(f'm{m}_a{a}_d1')}} {threads:>3} "
                f"{r['ms_per_update']:>10.1f} {r['tokens_per_s']:>11.0f}"
            )
    products = sgemm()
    print(f"sgemm on one thread ({products['blas']}), GFLOP/s, fastest of 40:")
    for p in products["products"]:
        shape = f"{p['m']}×{p['k']}×{p['n']}"
        print(f"  {p['what']:<20} {shape:>16} {p['gflops']:>8.1f}")
    with open(args.out, "w") as f:
        json.dump(
            {"torch": torch.__version__, "results": results, "sgemm": products},
            f,
            indent=2,
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
