"""Peak memory of writing a large media part: to_json and to_jsonl.

Run: ``python .auxiliary/benchmarks/memory.py [megabytes]`` (default 200). Each
case runs in a fresh process, which makes a canister holding an image of that
size, then serializes it; the figure is the growth of the process's peak
resident size (``ru_maxrss``) during the call, as a multiple of the image's
size. tracemalloc would overstate it: orjson reserves more than it writes.
"""

from __future__ import annotations

import os
import subprocess
import sys

CASE = """
import gc, os, resource, sys
import canisters as c
size = int(sys.argv[1]) * 1024 * 1024
part = c.Image(data=os.urandom(size), mime_type="image/png")
user = c.User((c.Text("x"), part))
c.to_json(c.Text("warm")); c.to_jsonl([c.User("warm")])
gc.collect()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = c.to_json(user) if sys.argv[2] == "to_json" else c.to_jsonl([user])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024 / size)
"""


def main() -> None:
    megabytes = sys.argv[1] if len(sys.argv) > 1 else "200"
    for function in ("to_json", "to_jsonl"):
        out = subprocess.run(
            [sys.executable, "-c", CASE, megabytes, function],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ,
        )
        ratio = float(out.stdout)
        print(
            f"{function}: peak grows by {ratio:.2f}x the image's size "
            f"({megabytes} MB image; the image itself not counted)"
        )


if __name__ == "__main__":
    main()
