"""Where a jitted program spends its time: the device operations of a profiler trace
(``jax.profiler.trace(DIR, create_perfetto_trace=True)``) summed by name, the largest
first, for each process of the trace that ran them (a GPU's streams, or the CPU's
XLA thread pool).

    .venv/bin/python experiments/trace_summary.py DIR [--top 25]

``DIR`` is the trace's folder (its newest ``perfetto_trace.json.gz`` below it is read).
Each line: total milliseconds, share of that process's summed busy time, the number of
calls, mean microseconds a call, and the operation (its HLO instruction where the trace
names one, else the event's name). A program that launches many tiny kernels shows a
large count and a small mean; one slow kernel a large mean.
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os


def newest_trace(folder: str) -> str:
    """The newest ``perfetto_trace.json.gz`` under ``folder``."""
    found = glob.glob(os.path.join(folder, "**", "perfetto_trace.json.gz"), recursive=True)
    if not found:
        raise FileNotFoundError(f"trace_summary: no perfetto_trace.json.gz under {folder!r}")
    return max(found, key=os.path.getmtime)


def summarize(path: str, top: int = 25) -> str:
    """The summary of the trace at ``path`` (see the module's docstring) as text."""
    with gzip.open(path, "rt") as handle:
        data = json.load(handle)
    events = data["traceEvents"] if isinstance(data, dict) else data
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    spans: dict[int, tuple[float, float]] = {}
    totals: dict[int, dict[str, float]] = collections.defaultdict(dict)
    counts: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for event in events:
        if event.get("ph") != "X" or "dur" not in event:
            continue
        pid, args = event["pid"], event.get("args", {})
        device = "GPU" in names.get(pid, "") or "hlo_op" in args
        if not device:
            continue
        label = args.get("hlo_op") or event["name"]
        totals[pid][label] = totals[pid].get(label, 0.0) + float(event["dur"])
        counts[pid][label] += 1
        begin, end = float(event["ts"]), float(event["ts"]) + float(event["dur"])
        low, high = spans.get(pid, (begin, end))
        spans[pid] = (min(low, begin), max(high, end))
    lines = [f"trace {path}"]
    for pid, total in totals.items():
        busy = sum(total.values())
        low, high = spans[pid]
        lines.append(
            f"-- {names.get(pid, pid)}: {busy / 1e3:.1f} ms busy over {(high - low) / 1e3:.1f} ms, "
            f"{sum(counts[pid].values())} operations"
        )
        for label, micros in sorted(total.items(), key=lambda item: -item[1])[:top]:
            calls = counts[pid][label]
            lines.append(
                f"{micros / 1e3:10.2f} ms {100 * micros / busy:5.1f} % {calls:8d} x "
                f"{micros / calls:9.1f} us  {label[:100]}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    print(summarize(newest_trace(args.folder), args.top))


if __name__ == "__main__":
    main()
