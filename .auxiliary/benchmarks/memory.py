"""Peak memory of a large media part: stored (appended, loaded) and written by
to_json and to_jsonl.

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


STORE_CASE = """
import gc, os, resource, sys, tempfile
import canisters as c
from canisters.storage import open_store
size = int(sys.argv[1]) * 1024 * 1024
backend, operation = sys.argv[2].split(" ")
directory = tempfile.mkdtemp()
location = (
    f"sqlite:///{directory}/store.db" if backend == "sqlite" else f"{directory}/store"
)
store = open_store(location, durability="flush")
store.append("warm", c.User((c.Text("x"), c.Image(data=b"warm"))))
store.load("warm")
if operation != "append":
    # Stored by another process, so that this one's peak is the load's own.
    import subprocess
    subprocess.run([sys.executable, "-c", (
        "import os, sys, canisters as c; from canisters.storage import open_store; "
        "s = open_store(sys.argv[1], durability='flush'); "
        "image = c.Image(data=os.urandom(int(sys.argv[2]))); "
        "s.append('chat', c.User((c.Text('x'), image)))"
    ), location, str(size)], check=True)
    part = None
else:
    part = c.Image(data=os.urandom(size), mime_type="image/png")
gc.collect()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if operation == "append":
    store.append("chat", c.User((c.Text("x"), part)))
else:
    loaded = store.load("chat")
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024 / size)
"""


def _store_cases(megabytes: str) -> None:
    for case in ("files append", "sqlite append", "files load", "sqlite load"):
        out = subprocess.run(
            [sys.executable, "-c", STORE_CASE, megabytes, case],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ,
        )
        ratio = float(out.stdout)
        backend, operation = case.split(" ")
        what = "the image's size" if operation == "append" else "the loaded image"
        print(
            f"store {operation} ({backend}): peak grows by {ratio:.2f}x "
            f"{what} ({megabytes} MB image"
            + ("; the image itself not counted)" if operation == "append" else ")")
        )


def main() -> None:
    megabytes = sys.argv[1] if len(sys.argv) > 1 else "200"
    _store_cases(megabytes)
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
