#!/usr/bin/env python3
"""End-to-end benchmark matrix: this implementation against the framework-free reference.

Runs `bench-client` (release build) for every runtime × payload size × concurrency, alternating
with the reference pair (serde_json line in, line out) on the same pipes, repeats, and reports
the median of the per-round ratios (the machine is noisy: ratios of neighbouring runs are more
stable than absolute figures).

    cargo build --release -p mcp-examples --bin bench-client --bin bench-server
    python3 examples/bench.py [--repeat 5] [--n 20000] [--target-dir target] [--sides] [--pin]

`--pin` runs every client on CPU 0 and every server on CPU 1 (`taskset`): unpinned, a wake-up
that crosses CPUs costs both pairs alike and hides the framework's own cost.

`--sides` also measures each side alone against the same reference pair: our client with the
reference server, and the reference client with our server (columns "client" and "server").
"""

import argparse
import json
import os
import statistics
import subprocess
import sys


PIN = {"client": [], "server": []}


def run(client, args):
    if "--" not in args:
        # The client's default server: named explicitly, so that it can be pinned too.
        server = os.path.join(os.path.dirname(client), "bench-server")
        mode = ["--reference"] if "--reference" in args else ["--runtime", args[args.index("--runtime") + 1]]
        args = args + ["--", server] + mode
    i = args.index("--")
    args = args[: i + 1] + PIN["server"] + args[i + 1 :]
    out = subprocess.run(PIN["client"] + [client] + args, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    p.add_argument("--runtimes", default="tokio,async-std")
    p.add_argument("--sizes", default="16,65536")
    p.add_argument("--conc", default="1,32")
    p.add_argument("--sides", action="store_true", help="also measure each side alone")
    p.add_argument("--pin", action="store_true", help="clients on CPU 0, servers on CPU 1")
    a = p.parse_args()
    if a.pin:
        PIN["client"] = ["taskset", "-c", "0"]
        PIN["server"] = ["taskset", "-c", "1"]
    server = os.path.join(a.target_dir, "release", "bench-server")
    client = os.path.join(a.target_dir, "release", "bench-client")
    if not os.path.exists(client):
        sys.exit(f"{client} not found: cargo build --release -p mcp-examples --bin bench-client --bin bench-server")
    rows = []
    for size in [int(s) for s in a.sizes.split(",")]:
        n = a.n if size < 4096 else max(a.n // 10, 500)
        for conc in [int(c) for c in a.conc.split(",")]:
            for rt in a.runtimes.split(","):
                ratios, ours_rps, ref_rps, ours_rss, ref_rss = [], [], [], [], []
                client_ratios, server_ratios = [], []
                for _ in range(a.repeat):
                    common = ["--n", str(n), "--size", str(size), "--conc", str(conc)]
                    ours = run(client, ["--runtime", rt, "--transport", "stdio"] + common)
                    ref = run(client, ["--reference"] + common)
                    ratios.append(ours["rps"] / ref["rps"])
                    if a.sides:
                        ours_client = run(
                            client,
                            ["--runtime", rt] + common + ["--", server, "--reference"],
                        )
                        ours_server = run(
                            client, ["--reference"] + common + ["--", server, "--runtime", rt]
                        )
                        client_ratios.append(ours_client["rps"] / ref["rps"])
                        server_ratios.append(ours_server["rps"] / ref["rps"])
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
                    # The spread of the pairs (the machine is noisy; a median near a target
                    # means little without it).
                    "ratio_quartiles": [round(q, 3) for q in quartiles(ratios)],
                    "ours_rss_kb": ours_rss[-1],
                    "ref_rss_kb": ref_rss[-1],
                }
                if a.sides:
                    row["client_ratio"] = round(statistics.median(client_ratios), 3)
                    row["server_ratio"] = round(statistics.median(server_ratios), 3)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    sides = " client | server |" if a.sides else ""
    print(
        f"| runtime | size | conc | ours rps | reference rps | median ratio | quartiles |{sides}"
        " rss client/server KiB |"
    )
    print("|---|---|---|---|---|---|---|" + ("---|---|" if a.sides else "") + "---|")
    for r in rows:
        side = f" {r['client_ratio']:.2f} | {r['server_ratio']:.2f} |" if a.sides else ""
        print(
            f"| {r['runtime']} | {r['size']} | {r['conc']} | {r['ours_rps']:.0f} | {r['ref_rps']:.0f} | "
            f"{r['ratio_median']:.2f} | {r['ratio_quartiles'][0]:.2f}–{r['ratio_quartiles'][1]:.2f} |"
            f"{side} {r['ours_rss_kb'][0]}/{r['ours_rss_kb'][1]} |"
        )


def quartiles(values):
    """The first and third quartiles (both the value itself for a single run)."""
    if len(values) < 2:
        return [values[0], values[0]]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return [q[0], q[2]]


if __name__ == "__main__":
    main()
