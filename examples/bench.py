#!/usr/bin/env python3
"""End-to-end benchmark matrix: this implementation against the framework-free reference.

Runs `bench-client` (release build) for every runtime × payload size × concurrency, alternating
with the reference pair (serde_json line in, line out) on the same pipes, repeats, and reports
the median of the per-round ratios (the machine is noisy: ratios of neighbouring runs are more
stable than absolute figures).

    cargo build --release -p mcp-examples --bin bench-client --bin bench-server
    python3 examples/bench.py [--repeat 5] [--n 20000] [--target-dir target]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys


def run(client, args):
    out = subprocess.run([client] + args, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    p.add_argument("--runtimes", default="tokio,async-std")
    p.add_argument("--sizes", default="16,65536")
    p.add_argument("--conc", default="1,32")
    a = p.parse_args()
    client = os.path.join(a.target_dir, "release", "bench-client")
    if not os.path.exists(client):
        sys.exit(f"{client} not found: cargo build --release -p mcp-examples --bin bench-client --bin bench-server")
    rows = []
    for size in [int(s) for s in a.sizes.split(",")]:
        n = a.n if size < 4096 else max(a.n // 10, 500)
        for conc in [int(c) for c in a.conc.split(",")]:
            for rt in a.runtimes.split(","):
                ratios, ours_rps, ref_rps, ours_rss, ref_rss = [], [], [], [], []
                for _ in range(a.repeat):
                    common = ["--n", str(n), "--size", str(size), "--conc", str(conc)]
                    ours = run(client, ["--runtime", rt, "--transport", "stdio"] + common)
                    ref = run(client, ["--reference"] + common)
                    ratios.append(ours["rps"] / ref["rps"])
                    ours_rps.append(ours["rps"])
                    ref_rps.append(ref["rps"])
                    ours_rss.append((ours["client_rss_kb"], ours["server_rss_kb"]))
                    ref_rss.append((ref["client_rss_kb"], ref["server_rss_kb"]))
                row = {
                    "runtime": rt,
                    "size": size,
                    "conc": conc,
                    "n": n,
                    "ours_rps": statistics.median(ours_rps),
                    "ref_rps": statistics.median(ref_rps),
                    "ratio_median": round(statistics.median(ratios), 3),
                    "ours_rss_kb": ours_rss[-1],
                    "ref_rss_kb": ref_rss[-1],
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print("| runtime | size | conc | ours rps | reference rps | median ratio | rss client/server KiB |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['runtime']} | {r['size']} | {r['conc']} | {r['ours_rps']:.0f} | {r['ref_rps']:.0f} | "
            f"{r['ratio_median']:.2f} | {r['ours_rss_kb'][0]}/{r['ours_rss_kb'][1]} |"
        )


if __name__ == "__main__":
    main()
