"""Golden results: every counter of every shipped system on every workload at ``tiny``.

Recorded before the platform refactor (issue 34) so that moving TOM and SNDP onto the new core
provably changes no result. Each run is kept as its summary (readable in a diff) and a SHA-256
of its whole result document (every counter, energy included, wall time excluded). A deliberate
change of results re-records them with ``python -m tests.systems.goldens`` in a commit of its
own that says what moved. ``goldens_small/`` holds the ``reproduce tom`` and ``reproduce sndp``
documents at ``small``, seed 0 (wall times removed), re-recorded after the seeding rule, for
comparing by hand after a refactor (``ndpsim reproduce tom --json ...``): too slow for the suite.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ndpsim.systems import load_system, system_preset_names
from ndpsim.workloads import kernel_module, run_workload, workload_names

GOLDEN_FILE = Path(__file__).with_name("goldens_tiny.json")


def golden_of(system: str, workload: str) -> dict:
    """The golden record of one run at ``tiny``, seed 0."""
    functional = run_workload(workload, "tiny", 0)
    result = load_system(system).run(
        functional.traces, kernel_module(functional.workload.module_name), functional.memory,
        seed=0,
    )  # fmt: skip
    return digest_of(result)


def digest_of(result) -> dict:
    """A run's summary and the SHA-256 of its whole result document, wall time excluded."""
    document = result.as_dict()
    document.pop("wall_seconds")
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return {
        "summary": document["summary"],
        "sha256": hashlib.sha256(canonical.encode()).hexdigest(),
    }


def cases() -> list[tuple[str, str]]:
    return [(s, w) for s in system_preset_names() for w in workload_names()]


def record() -> None:
    goldens = {f"{s}/{w}": golden_of(s, w) for s, w in cases()}
    GOLDEN_FILE.write_text(json.dumps(goldens, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    record()
