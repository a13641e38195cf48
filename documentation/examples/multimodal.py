"""Build a multimodal conversation with a tool call, validate it, print it as JSON.

Run it with ``python documentation/examples/multimodal.py``.
"""

from __future__ import annotations

import json

import canisters
from canisters import MessageBuilder, ResultBuilder, Role, Supervisor


def build() -> canisters.Conversation:
    """Return a small agent run: instructions, a question with images, a tool call."""
    system = Supervisor("You are a stylist. Use tools when you need facts.", step=0)

    question = MessageBuilder.continue_step(system)
    question.add_image("girl wearing a hat", "https://example.com/girl.png")
    question.add_image("fancy dress", b"\x89PNG\r\n\x1a\n", mime_type="image/png")
    question.add_text("Put the dress from the second image on the person in the first.")
    user = question.build()

    turn = MessageBuilder.next_step(user, role=Role.Assistant, policy="stylist")
    turn.add_text("Let me check which sizes the dress comes in.")
    call = turn.add_invocation("lookup_sizes", {"item": "fancy dress", "region": "EU"})

    answer = ResultBuilder.respond_to(call).success({"sizes": [36, 38, 40]})
    reply = MessageBuilder.next_step(answer, role=Role.Assistant, policy="stylist")
    reply.add_text("Here she is in size 38.")

    conversation = canisters.Conversation([system, user, *turn.build_all(), answer])
    return conversation.append(reply.build())


def main() -> None:
    """Build, validate and print the conversation."""
    conversation = build()
    canisters.validate(conversation)
    print(json.dumps(json.loads(canisters.to_json(conversation)), indent=2))


if __name__ == "__main__":
    main()
