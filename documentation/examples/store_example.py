"""Store the example conversation, to look at it with ``canisters view``.

Run it with ``python documentation/examples/store_example.py [STORE]`` (default
``example-store``, a directory). It reads ``anthropic-request.json`` (a postcard
picture, a tool call and its result), adds the model's folded reasoning, a
final answer and the token usage, and stores it as conversation ``postcard``,
with a fork that asks again. Then::

    canisters view example-store postcard --open
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import attrs

from canisters import Assistant, Metadata, Reasoning, Role, Usage, User, providers
from canisters.storage import open_store

HERE = Path(__file__).resolve().parent


def main(location: str) -> None:
    body = (HERE / "anthropic-request.json").read_text(encoding="utf-8")
    conversation = providers.get("anthropic").parse_request(json.loads(body))
    thinking = Reasoning(
        "The postcard shows the 25 de Abril bridge and red roofs: Lisbon. "
        "The user also wants the weather now, so I need the tool."
    )
    model = Metadata(model="claude-sonnet-4-5", usage=Usage(1_204, 96))
    canisters = []
    for canister in conversation:  # the reply and its tool call make step 1
        if canister.role is Role.Assistant:
            content = (thinking, *canister.content)  # type: ignore[attr-defined]
            canister = attrs.evolve(canister, content=content, metadata=model)  # type: ignore[misc]
        if canister.role in (Role.Assistant, Role.Invocation, Role.Result):
            canister = attrs.evolve(canister, step=1)  # type: ignore[misc]
        canisters.append(canister)
    canisters.append(
        Assistant(
            "It is Lisbon, and it is 21 °C and sunny there now.",
            step=2,
            metadata=Metadata(model="claude-sonnet-4-5", usage=Usage(1_330, 18)),
        )
    )
    with open_store(location) as store:
        if store.exists("postcard"):
            print(f"{location} already holds the conversation 'postcard'")
            return
        store.extend("postcard", canisters)
        fork = store.fork("postcard", canisters[-1].id)
        store.append(fork, User("And tomorrow?"))
    print(f"stored 'postcard' (and a fork, {fork}) in {location}")
    print(f"see it: canisters view {location} postcard --open")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "example-store")
