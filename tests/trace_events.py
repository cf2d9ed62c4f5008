"""A checker for Chrome's trace-event format (JSON object form), as Perfetto UI and
chrome://tracing load it: what the timeline tests hold every written file to."""

from __future__ import annotations

import math
from typing import Any

PHASES = {"C", "i", "M"}  # what ndpsim writes: counters, instants, metadata
METADATA = {"process_name", "process_sort_index", "thread_name", "thread_sort_index"}


def problems(document: Any) -> list[str]:
    """Every way ``document`` breaks the format (empty when it is a valid trace)."""
    out: list[str] = []
    if not isinstance(document, dict) or not isinstance(document.get("traceEvents"), list):
        return ["not an object with a traceEvents list"]
    if document.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        out.append(f"displayTimeUnit {document['displayTimeUnit']!r} is neither ms nor ns")
    named: set[int] = set()
    used: set[int] = set()
    last_ts: dict[tuple[int, str], float] = {}
    for n, event in enumerate(document["traceEvents"]):
        where = f"event {n}"
        if not isinstance(event, dict):
            out.append(f"{where}: not an object")
            continue
        ph, name = event.get("ph"), event.get("name")
        if ph not in PHASES:
            out.append(f"{where}: phase {ph!r}")
            continue
        if not isinstance(name, str) or not name:
            out.append(f"{where}: no name")
        for key in ("pid", "tid"):
            if not isinstance(event.get(key), int) or isinstance(event.get(key), bool):
                out.append(f"{where}: {key} is not an integer")
        if not isinstance(event.get("args", {}), dict):
            out.append(f"{where}: args is not an object")
        if ph == "M":
            if name not in METADATA:
                out.append(f"{where}: metadata event {name!r}")
            if name == "process_name":
                if not isinstance(event.get("args", {}).get("name"), str):
                    out.append(f"{where}: process_name without a name")
                named.add(event.get("pid"))
            continue
        ts = event.get("ts")
        if not isinstance(ts, int | float) or isinstance(ts, bool) or not ts >= 0:
            out.append(f"{where}: ts {ts!r} is not a time >= 0 (µs)")
            continue
        used.add(event.get("pid"))
        if ph == "i" and event.get("s", "t") not in ("g", "p", "t"):
            out.append(f"{where}: instant scope {event.get('s')!r}")
        if ph == "C":
            args = event.get("args")
            if not isinstance(args, dict) or not args:
                out.append(f"{where}: a counter without values")
                continue
            for series, value in args.items():
                if not isinstance(value, int | float) or isinstance(value, bool):
                    out.append(f"{where}: counter value {series}={value!r} is not a number")
                elif not math.isfinite(value):
                    out.append(f"{where}: counter value {series}={value!r} is not finite")
            track = (event["pid"], name)
            if ts < last_ts.get(track, -1.0):
                out.append(f"{where}: track {track} goes back in time")
            last_ts[track] = ts
    out += [f"pid {pid} has events but no process_name" for pid in sorted(used - named)]
    return out
