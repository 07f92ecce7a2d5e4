#!/usr/bin/env python3
"""Medians over the interleaved rounds of table.sh: per plan and thread
count, the median time per update, MFU against the FMA peak, PyTorch's
time and the ratio of each round (the engine against the PyTorch run just
before it), from the engine summaries table.sh saved.

    medians.py DIR ROUNDS    # reads DIR/engine-1.txt … DIR/engine-ROUNDS.txt
"""

import re
import statistics
import sys

ROW = re.compile(
    r"(m\d+_a\d+_d\d+)\s+(\d+)\s+([\d.]+)\s+\S+\s+\d+\s+([\d.]+)%\s+[\d.]+%"
    r".*?(?:([\d.]+) \(([\d.]+)×\))?$"
)


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    rows = {}
    for r in range(1, rounds + 1):
        with open(f"{out}/engine-{r}.txt", encoding="utf-8") as f:
            for line in f:
                m = ROW.match(line.strip())
                if m:
                    rows.setdefault((m[1], int(m[2])), []).append(
                        (
                            float(m[3]),
                            float(m[4]),
                            float(m[5]) if m[5] else None,
                            float(m[6]) if m[6] else None,
                        )
                    )
    print(f"{'plan':<12} {'thr':>3} {'ms/update':>10} {'MFU FMA':>8} {'PyTorch ms':>11} {'ratio':>6}  ratio of each round")
    for (plan, thr), v in rows.items():
        torch = [x[2] for x in v if x[2] is not None]
        ratio = [x[3] for x in v if x[3] is not None]
        med = lambda xs: statistics.median(xs) if xs else float("nan")
        print(
            f"{plan:<12} {thr:>3} {med([x[0] for x in v]):>10.1f} {med([x[1] for x in v]):>7.1f}% "
            f"{med(torch):>11.1f} {med(ratio):>6.2f}  {' '.join(f'{x:.2f}' for x in ratio)}"
        )


if __name__ == "__main__":
    main()
