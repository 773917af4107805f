"""Long fuzz run: the hostile property tests with 10,000 examples each.

    .venv/bin/python benchmarks/fuzz.py [--examples 10000] [--only NAME]

Runs tests/test_hostile_props.py under pytest with HOSTILE_EXAMPLES set, mutating
the fixture pages plus up to 300 pages of the shared corpus (when present), and
prints one line per property: outcome and seconds. Exit code is pytest's.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

from harness import CORPUS, ROOT


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--only", default="", help="run only properties whose name contains this")
    args = parser.parse_args()
    env = dict(os.environ, HOSTILE_EXAMPLES=str(args.examples))
    if CORPUS.is_dir():
        env["HOSTILE_CORPUS"] = str(CORPUS)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "tests/test_hostile_props.py",
        "-q",
        "-p",
        "no:cacheprovider",
        "--timeout",
        "3600",
        "--durations",
        "0",
        "-rA",
        "--hypothesis-show-statistics",
    ]
    if args.only:
        cmd += ["-k", args.only]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    out = proc.stdout + proc.stderr
    print(f"examples per property: {args.examples}; corpus: {env.get('HOSTILE_CORPUS', 'fixtures only')}")
    for line in out.splitlines():
        if re.match(r"^\d+\.\d+s call", line) or re.match(r"^(PASSED|FAILED|XFAIL|XPASS|ERROR) ", line):
            print(line)
        elif "passing examples" in line or "failing examples" in line or "invalid examples" in line:
            print("   ", line.strip())
        elif line.startswith("tests/test_hostile_props.py::") and ":" in line:
            print(line)
    if proc.returncode:
        print(out[-6000:])
    print(f"total {time.monotonic() - started:.0f}s, pytest exit code {proc.returncode}")
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
