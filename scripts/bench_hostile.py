"""Time and peak RSS of ``retriever query`` over a good tree plus ONE hostile file from issue 9.

    .venv/bin/python scripts/bench_hostile.py [--timeout 90] [--memory-mb 4000] [--only NAME]

Each case runs in its own process under /usr/bin/time, capped in time (killed after --timeout)
and address space (--memory-mb), and prints: case, exit code, wall seconds, peak RSS in MB.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fixtures import ACME  # noqa: E402
from hostile import HOSTILE, Hostile, remove_deep_folders  # noqa: E402

RETRIEVER = REPO / ".venv" / "bin" / "retriever"


def _build(root: Path, case: Hostile | None) -> None:
    for rel, text in ACME.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    if case is not None:
        case.build(root)


def _run(root: Path, state: Path, timeout: float, memory_mb: int) -> tuple[str, float, float]:
    def limit() -> None:
        os.setsid()
        cap = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    stats = state / "time.txt"
    command = ["/usr/bin/time", "-f", "%e %M", "-o", str(stats), str(RETRIEVER), "query", "Who owns billing?"]
    env = {**os.environ, "RETRIEVER_STATE_DIR": str(state), "RETRIEVER_ROOT": str(root)}
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit)
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return "timeout", time.perf_counter() - started, float("nan")
    wall = time.perf_counter() - started
    fields = stats.read_text().split()[-2:] if stats.exists() else ["nan", "nan"]
    last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    code = str(process.returncode) + (f" ({last[0][:70]})" if process.returncode else "")
    return code, wall, float(fields[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--memory-mb", type=int, default=4000)
    parser.add_argument("--only", default=None, help="run only cases whose name contains this")
    args = parser.parse_args()
    cases: list[Hostile | None] = [None, *HOSTILE]
    print(f"{'case':32} {'exit':>6} {'wall s':>8} {'peak MB':>8}")
    for case in cases:
        name = case.name if case else "good tree only"
        if args.only and args.only not in name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            root, state = Path(tmp) / "memory", Path(tmp) / "state"
            root.mkdir()
            state.mkdir()
            _build(root, case)
            try:
                code, wall, peak = _run(root, state, args.timeout, args.memory_mb)
            finally:
                remove_deep_folders(root)
        print(f"{name:32} {code:>6} {wall:8.2f} {peak:8.0f}", flush=True)


if __name__ == "__main__":
    main()
