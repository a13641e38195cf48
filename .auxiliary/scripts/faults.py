"""Fault trial of the PostgreSQL backend: crashes while writers append.

Run: ``python .auxiliary/scripts/faults.py [cycles] [writers]`` (defaults 5 and
4; about a minute). It starts a PostgreSQL server of its own through
``pgserver`` (as the tests do), opens one store per writer thread
(``timeout=2``: a call waits at most 2 s for a connection) and lets the writers
append to conversations of their own, the default durability. Each cycle lets
them run for a second and a half, stops the server as a crash would
(``pg_ctl -m immediate``), keeps it down for about two seconds and starts it
again.
A writer whose append fails notes the canister and, once the server is back,
appends it again (retrying is safe: a canister the conversation holds already
is not recorded twice).

Printed at the end: appends acknowledged and acknowledged appends lost (read
back after the last cycle); failed appends and how many of them had been
written all the same; canisters recorded twice; whether every conversation
verifies; the time from the crash to each writer's first error, for a call
during the outage to fail, and from the server accepting connections again to
each writer's next acknowledged append; and the time ``open_store`` takes to
fail on a port where nothing listens, on one that accepts connections and never
answers (``connect_timeout``, 5 s by default), on a database that does not
exist, the time an S3 upload of the client a store makes takes to fail on an
endpoint that never answers (the ``s3`` extra), and calls of a store with the
default ``timeout`` while its server is down.
"""

from __future__ import annotations

import logging
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
import warnings
from typing import Any

import canisters as c
from canisters.storage import Store, open_store


class Writer(threading.Thread):
    """Appends to a conversation of its own until told to stop; an append that
    failed is appended again (after checking, through the conversation's length,
    whether the failed attempt was written)."""

    def __init__(self, location: str, name: str) -> None:
        super().__init__(daemon=True)
        self.store: Store = open_store(location, timeout=2)
        self.conversation = name
        self.acknowledged: list[str] = []
        self.failed = 0
        self.written_anyway: set[str] = set()
        self.errors: list[tuple[float, str]] = []  # (when, first line)
        self.successes: list[float] = []
        self.done = False

    def run(self) -> None:
        count = 0
        pending: c.Canister | None = None
        checked = True
        while not self.done:
            try:
                if not checked:
                    length = self.store.head(self.conversation)[0]
                    if length > len(self.acknowledged):
                        self.written_anyway.add(pending.id)  # type: ignore[union-attr]
                    checked = True
                canister = pending or c.User(f"{self.conversation} message {count}")
                self.store.append(self.conversation, canister)
            except c.StorageError as error:
                self.errors.append((time.monotonic(), str(error).splitlines()[0]))
                if checked:
                    if pending is None:
                        pending = canister
                        self.failed += 1
                    checked = False
                time.sleep(0.05)
                continue
            if pending is None:
                count += 1
            pending = None
            self.acknowledged.append(canister.id)
            self.successes.append(time.monotonic())


def _first_after(moments: list[float], start: float) -> float | None:
    later = [moment - start for moment in moments if moment >= start]
    return min(later) if later else None


def _timed_failure(call: Any) -> tuple[float, str]:
    start = time.monotonic()
    try:
        call()
    except c.StorageError as error:
        return time.monotonic() - start, str(error).splitlines()[0]
    return time.monotonic() - start, "no error"


def main(cycles: int, writers: int) -> None:
    logging.getLogger("psycopg").setLevel(logging.CRITICAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
        from pgserver import pg_ctl

    directory = tempfile.mkdtemp(prefix="pgfault")
    server = pgserver.get_server(directory, cleanup_mode="delete")
    location = str(server.get_uri())
    try:
        threads = [Writer(location, f"w{n}") for n in range(writers)]
        for thread in threads:
            thread.start()
        to_error: list[float] = []
        to_recover: list[float] = []
        outage_calls: list[float] = []
        probe = open_store(location, timeout=2)
        for _cycle in range(cycles):
            time.sleep(1.5)
            crash = time.monotonic()
            pg_ctl(
                ["-m", "immediate", "-w", "stop"],
                pgdata=server.pgdata,
                user=server.system_user,
            )
            time.sleep(0.2)
            _timed_failure(lambda: probe.head("w0"))  # its connection, lost
            outage_calls.append(_timed_failure(lambda: probe.head("w0"))[0])
            for thread in threads:
                found = _first_after([when for when, _ in thread.errors], crash)
                if found is not None:
                    to_error.append(found)
            server.ensure_postgres_running()
            back = time.monotonic()
            time.sleep(3)
            for thread in threads:
                found = _first_after(thread.successes, back)
                if found is not None:
                    to_recover.append(found)
        time.sleep(2)  # the last retries
        for thread in threads:
            thread.done = True
        for thread in threads:
            thread.join(10)
        probe.close()

        acknowledged = lost = twice = failed = written_anyway = 0
        verified = True
        kinds: set[str] = set()
        with open_store(location) as store:
            for thread in threads:
                kinds.update(message.split(" (", 1)[0] for _, message in thread.errors)
                ids = [x.id for x in store.load(thread.conversation)]
                held = set(ids)
                acknowledged += len(thread.acknowledged)
                lost += len(set(thread.acknowledged) - held)
                twice += len(ids) - len(held)
                failed += thread.failed
                written_anyway += len(thread.written_anyway)
                verified &= store.verify(thread.conversation).ok
                thread.store.close()

        unreachable = _timed_failure(
            lambda: open_store("postgresql://someone@127.0.0.1:1/nothing")
        )
        silent = socket.socket()  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        unanswered = _timed_failure(
            lambda: open_store(f"postgresql://someone@127.0.0.1:{port}/nothing")
        )
        # The S3 client a store makes, against an endpoint that never answers.
        os.environ.update(
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
            AWS_ACCESS_KEY_ID="none",
            AWS_SECRET_ACCESS_KEY="none",
            AWS_DEFAULT_REGION="us-east-1",
        )
        from canisters.storage.s3 import S3ContentStore

        bucket = _timed_failure(lambda: S3ContentStore("s3://bucket/x").put(b"x"))
        silent.close()
        missing = _timed_failure(
            lambda: open_store(location.replace("/postgres?", "/nope?"))
        )
        default = open_store(location)
        pg_ctl(
            ["-m", "immediate", "-w", "stop"],
            pgdata=server.pgdata,
            user=server.system_user,
        )
        first_default = _timed_failure(lambda: default.head("w0"))
        second_default = _timed_failure(lambda: default.head("w0"))
        server.ensure_postgres_running()
        default.close()

        print(f"{cycles} crashes (pg_ctl -m immediate), {writers} writers")
        print(f"appends acknowledged:            {acknowledged}")
        print(f"acknowledged appends lost:       {lost}")
        print(f"failed appends:                  {failed}")
        print(f"  of which written all the same: {written_anyway}")
        print(f"canisters recorded twice:        {twice}")
        print(f"every conversation verifies:     {verified}")
        print(f"errors seen:                     {sorted(kinds)}")
        print(
            "crash to a writer's first error: "
            f"median {statistics.median(to_error):.2f} s, max {max(to_error):.2f} s"
        )
        print(
            "a call during the outage fails:  "
            f"max {max(outage_calls):.2f} s (timeout=2)"
        )
        print(
            "server back to a writer's next acknowledged append: "
            f"median {statistics.median(to_recover):.2f} s, "
            f"max {max(to_recover):.2f} s"
        )
        print(
            f"open, nothing listening:         {unreachable[0]:.2f} s: {unreachable[1]}"
        )
        print(
            f"open, nothing answering:         {unanswered[0]:.2f} s: {unanswered[1]}"
        )
        print(f"S3 put, nothing answering:       {bucket[0]:.2f} s: {bucket[1]}")
        print(f"open, no such database:          {missing[0]:.2f} s: {missing[1]}")
        print(
            "default timeout, server down:    "
            f"first call {first_default[0]:.2f} s: {first_default[1]}"
        )
        print(
            f"                                 next call {second_default[0]:.2f} s: "
            f"{second_default[1]}"
        )
    finally:
        server.cleanup()


if __name__ == "__main__":
    arguments = [int(argument) for argument in sys.argv[1:]]
    main(
        arguments[0] if arguments else 5,
        arguments[1] if len(arguments) > 1 else 4,
    )
