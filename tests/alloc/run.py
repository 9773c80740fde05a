#!/usr/bin/env python3
"""Allocation failure: every golden case again, with one allocation failing.

Usage: tests/alloc/run.py PISESSION FAILMALLOC_SO [MAX_PER_CASE]

For each case of tests/golden (same cmd/input/expected files), the CLI runs
once to count its allocations, then once per chosen allocation index N with
FAILMALLOC_AT=N (tests/alloc/failmalloc.c): all of them when there are at
most MAX_PER_CASE (default 150), else MAX_PER_CASE spread evenly.  What is
checked, as jansson checks itself against allocation failure:
  * no run dies of a signal (a crash, an abort, a sanitizer's report);
  * a run that exits 0 printed exactly the expected output: a failed
    allocation may fail the command, never change its answer silently;
  * a run that fails says why on stderr.
Prints failures and a last line "N passed, M failed" (cases); exit 1 on any.
The cases run TEST_JOBS at a time (default: as many as the machine has
cores), each with its own count file; they are printed in their order.
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

def first_file(d, prefix):
    for name in sorted(os.listdir(d)):
        if name == prefix or name.startswith(prefix + "."):
            return os.path.join(d, name)
    return None

def cases(root):
    """(kind, case, folder) of every golden case with a cmd file, in order."""
    for kind in sorted(os.listdir(root)):
        kdir = os.path.join(root, kind)
        if not os.path.isdir(kdir):
            continue
        for case in sorted(os.listdir(kdir)):
            cdir = os.path.join(kdir, case)
            if os.path.isfile(os.path.join(cdir, "cmd")):
                yield kind, case, cdir

def run_case(tool, shim, most, cdir, report):
    """Runs one case once per chosen allocation failing; returns
    (problems, allocations failed in turn, allocations counted)."""
    inp = first_file(cdir, "input")
    exp = first_file(cdir, "expected")
    status_file = os.path.join(cdir, "status")
    want = int(open(status_file).read().strip()) if os.path.exists(status_file) else 0
    argv = [tool] + [inp if w == "INPUT" else w for w in open(os.path.join(cdir, "cmd")).read().split()]
    env = dict(os.environ, LD_PRELOAD=shim, FAILMALLOC_REPORT=report)
    env.pop("FAILMALLOC_AT", None)
    base = subprocess.run(argv, cwd=cdir, env=env, capture_output=True)
    problems = []
    if base.returncode != want:
        problems.append(f"without failures: exit {base.returncode}, expected {want}")
    count = int(open(report).read()) if os.path.exists(report) else 0
    if count == 0:
        problems.append("no allocation was counted: the shim is not in effect")
    expected = open(exp, "rb").read() if exp and want == 0 else base.stdout
    picks = range(1, count + 1) if count <= most else \
        sorted({1 + (i * (count - 1)) // (most - 1) for i in range(most)})
    env.pop("FAILMALLOC_REPORT")
    for n in picks:
        r = subprocess.run(argv, cwd=cdir, env=dict(env, FAILMALLOC_AT=str(n)), capture_output=True)
        if r.returncode < 0 or r.returncode >= 126:
            problems.append(f"allocation {n} of {count}: died (status {r.returncode}): "
                            f"{r.stderr.decode(errors='replace')[-300:]}")
        elif r.returncode == 0 and want == 0 and r.stdout != expected:
            problems.append(f"allocation {n} of {count}: exit 0 with different output")
        elif r.returncode != 0 and not r.stderr.strip():
            problems.append(f"allocation {n} of {count}: exit {r.returncode} without a reason on stderr")
        if len(problems) > 5:
            break
    return problems, len(picks), count

def main():
    tool, shim = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    most = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    jobs = int(os.environ.get("TEST_JOBS") or os.cpu_count() or 1)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
    passed = failed = runs = 0
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        todo = [(f"{kind}/{case}",
                 pool.submit(run_case, tool, shim, most, cdir, os.path.join(tmp, f"count.{i}")))
                for i, (kind, case, cdir) in enumerate(cases(root))]
        for name, future in todo:
            problems, picked, count = future.result()
            runs += picked
            if problems:
                failed += 1
                print(f"FAIL {name}:")
                for p in problems[:6]:
                    print(f"    {p}")
            else:
                passed += 1
                print(f"ok   {name} ({picked} of {count} allocations failed in turn)")
            sys.stdout.flush()
    print(f"# {runs} runs with one failed allocation")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
