"""The Open Responses compliance suite, offline.

The specification's suite (openresponses/openresponses
``src/lib/compliance-tests.ts``) sends each of its request templates to a
server's ``POST /responses`` and holds the reply to the ``ResponseResource``
schema and to a few checks (an output item, status ``completed``, a
``function_call`` item where a tool was offered). Here the templates
(``data/open-responses/compliance-templates.json``, see its SOURCE.md) go over
HTTP to a real local server built on canisters: it reads each request with
``parse_full_request``, answers it (a text, or a call of the first tool
offered) and writes the reply with ``render_response``; the suite's checks
then run on what came back, with the specification's schemas. The request
templates are also held to ``CreateResponseBody`` and read back exactly.

The suite's two streaming templates are not run against the server:
canisters reads streams but writes none, so the server has nothing to send.
:data:`STREAMING` names them, and a test holds that list to the templates.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.request import Request as HttpRequest
from urllib.request import urlopen

import pytest

from canisters import Assistant, Conversation, Invocation, Metadata, Text, providers

jsonschema = pytest.importorskip("jsonschema")

DATA = Path(__file__).parent / "data" / "open-responses"
SCHEMA = json.loads((DATA / "openapi-components.json").read_text(encoding="utf-8"))
TEMPLATES = json.loads((DATA / "compliance-templates.json").read_text("utf-8"))[
    "templates"
]
STREAMING = {"streaming-response", "tool-calling-streaming"}
"""The templates whose reply is a stream, which canisters does not write."""
NORMALIZER = providers.get("open-responses")


def _errors(name: str, body: Any) -> list[str]:
    schema = {**SCHEMA, "$ref": f"#/components/schemas/{name}"}
    validator = jsonschema.Draft202012Validator(schema)
    return sorted(
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(body)
    )


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    """The server's reply to ``body``: a call of the first tool offered, else a
    text, with the model asked for and why the turn ended."""
    request = NORMALIZER.parse_full_request(body)
    if request.functions:
        metadata = Metadata(model=request.model, finish_reason="tool_calls")
        reply: Any = Invocation(
            name=request.functions[0].name,
            arguments={"location": "San Francisco"},
            metadata=metadata,
        )
    else:
        metadata = Metadata(model=request.model, finish_reason="stop")
        reply = Assistant(content=(Text("Ahoy, hello there!"),), metadata=metadata)
    return NORMALIZER.render_response(Conversation([reply]))


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if self.path != "/responses":
            self.send_error(404)
            return
        length = int(self.headers.get("Content-Length", "0"))
        try:
            reply = _answer(json.loads(self.rfile.read(length)))
        except providers.ProviderError as error:
            status, reply = 400, {"error": {"message": str(error)}}
        else:
            status = 200
        payload = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass  # quiet


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _post(base: str, body: dict[str, Any]) -> tuple[int, Any]:
    data = json.dumps({**body, "stream": False}).encode()
    request = HttpRequest(
        f"{base}/responses",
        data=data,
        headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
        method="POST",
    )
    with urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read())


def _validate(reply: dict[str, Any], validators: list[str]) -> list[str]:
    """The suite's semantic validators, by name."""
    errors = []
    for name in validators:
        if name == "hasOutput" and not reply.get("output"):
            errors.append("Response has no output items")
        elif name == "completedStatus" and reply.get("status") != "completed":
            errors.append(
                f'Expected status "completed" but got "{reply.get("status")}"'
            )
        elif name.startswith("hasOutputType:"):
            kind = name.partition(":")[2]
            if not any(item.get("type") == kind for item in reply.get("output", [])):
                errors.append(f'Expected output item of type "{kind}" but none found')
    return errors


def test_the_streaming_templates_are_the_ones_not_run() -> None:
    assert {t["id"] for t in TEMPLATES if t["streaming"]} == STREAMING
    assert len(TEMPLATES) == 7


@pytest.mark.parametrize("template", TEMPLATES, ids=[t["id"] for t in TEMPLATES])
def test_a_template_request_is_a_request_of_the_specification(
    template: dict[str, Any],
) -> None:
    body = {**template["request"], "stream": template["streaming"]}
    assert _errors("CreateResponseBody", body) == []
    assert NORMALIZER.render_full_request(NORMALIZER.parse_full_request(body)) == body
    request = NORMALIZER.parse_full_request(body)
    assert request.model == "MODEL"
    assert NORMALIZER.render_full_request(request) == body  # read, then written


@pytest.mark.parametrize(
    "template",
    [t for t in TEMPLATES if t["id"] not in STREAMING],
    ids=[t["id"] for t in TEMPLATES if t["id"] not in STREAMING],
)
def test_a_server_built_on_canisters_passes_the_template(
    template: dict[str, Any], server: str
) -> None:
    status, reply = _post(server, template["request"])
    assert status == 200
    assert _errors("ResponseResource", reply) == []
    assert _validate(reply, template["validators"]) == []
    assert reply["model"] == "MODEL"
