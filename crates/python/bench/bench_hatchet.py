"""profcodec.hpctoolkit.read against hatchet's GraphFrame.from_hpctoolkit_latest, each run in a
fresh process, the two interleaved; run by ``cargo xtask bench-peers python``.

    python bench_hatchet.py [--runs N] DATABASE...

For each database, prints the median wall time, the median CPU time of the process (robust
when other jobs share the machine) and the peak memory the read added (the process's peak
resident set after the read minus its resident set before it, the imports excluded; Linux
``/proc/self/clear_refs`` resets the peak first), then the ratios, as a Markdown table.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def one(reader, path):
    """One read in this process; prints its figures as JSON."""
    import hatchet  # both sides import hatchet and pandas before the clock starts
    import pandas

    import profcodec

    # pandas sets itself up on first use; both readers find it done, as the imports.
    frame = pandas.DataFrame([{"node": 0, "a": 1.0, "name": "x"}]).set_index("node")
    pandas.DataFrame({"a": frame["a"].to_numpy()}, index=pandas.Index([0], dtype=object))
    if reader == "profcodec":
        read = profcodec.hpctoolkit.read
    else:
        read = hatchet.GraphFrame.from_hpctoolkit_latest
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak resident set
    before = status_kb("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    gf = read(path)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = status_kb("VmHWM")
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "peak_mb": (peak - before) / 1024,
                "rows": len(gf.dataframe),
                "columns": list(gf.dataframe.columns),
            }
        )
    )


def measure(reader, path):
    out = subprocess.run(
        [sys.executable, __file__, "--one", reader, path],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def size_mb(path):
    return sum(e.stat().st_size for e in os.scandir(path) if e.is_file()) / 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--one", nargs=2, metavar=("READER", "PATH"))
    parser.add_argument("databases", nargs="*")
    args = parser.parse_args()
    if args.one:
        one(*args.one)
        return
    print(
        "| database | size | rows | reader | wall (median) | CPU (median) | peak memory added |"
    )
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for path in args.databases:
        runs = {"profcodec": [], "hatchet": []}
        for _ in range(args.runs):
            for reader in runs:
                runs[reader].append(measure(reader, path))
        ours, theirs = runs["profcodec"], runs["hatchet"]
        assert ours[0]["rows"] == theirs[0]["rows"], (ours[0], theirs[0])
        assert ours[0]["columns"] == theirs[0]["columns"]
        med = {
            reader: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "peak_mb")}
            for reader, rs in runs.items()
        }
        for reader in runs:
            m = med[reader]
            print(
                f"| {os.path.basename(path.rstrip('/'))} | {size_mb(path):.1f} MB "
                f"| {ours[0]['rows']:,} | {reader} | {m['wall']:.3f} s | {m['cpu']:.3f} s "
                f"| {m['peak_mb']:.0f} MB |"
            )
        wall = med["hatchet"]["wall"] / med["profcodec"]["wall"]
        cpu = med["hatchet"]["cpu"] / med["profcodec"]["cpu"]
        ratios.append((path, wall, cpu))
        sys.stdout.flush()
    print()
    for path, wall, cpu in ratios:
        print(
            f"{os.path.basename(path.rstrip('/'))}: profcodec is {wall:.1f}x faster "
            f"(wall), {cpu:.1f}x (CPU)"
        )


if __name__ == "__main__":
    main()
