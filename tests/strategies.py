"""Hypothesis strategies for canisters, content and conversations (test helper)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

import canisters as c

ids = st.text(
    alphabet=st.characters(
        min_codepoint=33, max_codepoint=0x10FFFF, exclude_categories=("Cs",)
    ),
    min_size=1,
    max_size=24,
)
texts = st.text(max_size=60)
names = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4)
    ),
    max_leaves=12,
)
arguments = st.dictionaries(texts, json_values, max_size=5)
extras = st.dictionaries(
    st.sampled_from(["openai", "anthropic", "gemini"]),
    st.dictionaries(names, json_values, max_size=2),
    max_size=2,
)
timestamps = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from(
        [
            timezone.utc,
            timezone(timedelta(hours=5, minutes=30)),
            timezone(timedelta(hours=-8)),
        ]
    ),
)
content_ids = st.binary(min_size=32, max_size=32).map(lambda b: "sha256:" + b.hex())
urls = st.sampled_from(
    [
        "https://example.com/a.png",
        "http://x.test/video.mp4",
        "data:image/png;base64,iVBORw0KGgo=",
        "gs://bucket/doc.pdf",
    ]
)


def _media(cls: type[c.Media]) -> st.SearchStrategy[c.Media]:
    source = st.one_of(
        st.binary(max_size=64).map(lambda b: {"data": b}),
        urls.map(lambda u: {"url": u}),
        content_ids.map(lambda i: {"content_id": i}),
        st.just({}),
    )

    def build(
        source: dict[str, Any],
        refs: dict[str, str],
        mime: str | None,
        hint: str | None,
        extra: dict[str, Any],
    ) -> c.Media:
        if not source and not refs:
            refs = {"openai": "file-abc"}
        return cls(**source, refs=refs, mime_type=mime, hint=hint, **extra)

    extra = (
        st.fixed_dictionaries({"filename": st.none() | texts})
        if cls is c.File
        else st.just({})
    )
    return st.builds(
        build,
        source,
        st.dictionaries(st.sampled_from(["openai", "gemini"]), names, max_size=2),
        st.none() | st.sampled_from(["image/png", "audio/wav", "application/pdf"]),
        st.none() | texts,
        extra,
    )


texts_parts = st.builds(
    c.Text,
    texts,
    st.sampled_from(["text/plain", "text/markdown", "application/json"]),
    id=st.none() | ids,
    extras=extras,
)
reasoning = st.one_of(
    st.builds(c.Reasoning, texts),
    st.builds(
        c.Reasoning,
        texts,
        st.text(min_size=1, max_size=40),
        st.none(),
        st.sampled_from(["anthropic", "gemini"]),
    ),
    st.builds(
        c.Reasoning,
        st.just(""),
        st.none(),
        st.text(min_size=1, max_size=40),
        st.just("openai-responses"),
    ),
)
_small = st.none() | st.integers(min_value=0, max_value=500)
_opaque = st.dictionaries(names, json_values, min_size=1, max_size=2)
sources = st.one_of(
    st.builds(c.UrlSource, st.just("https://example.com/") | ids, st.none() | texts),
    st.builds(
        c.DocumentSource,
        st.none() | st.integers(min_value=0, max_value=5) | ids,
        st.none() | texts,
        st.none() | st.sampled_from(["page", "char", "block"]),
        st.none() | st.just(0),
        _small,
    ),
    st.builds(c.SearchResultSource, texts, st.none() | texts, _small),
)
citations = st.one_of(
    st.builds(c.Citation, sources, st.none() | texts, st.none() | st.just(0), _small),
    st.builds(
        c.Citation,
        sources,
        st.none() | texts,
        provider=st.sampled_from(["anthropic", "openai-responses", "gemini"]),
        opaque=_opaque,
    ),
)
cited_texts = st.builds(
    c.CitedText,
    texts,
    id=st.none() | ids,
    citations=st.lists(citations, min_size=1, max_size=3),
)
_providers = st.sampled_from(["anthropic", "openai-responses", "gemini"])
provider_calls = st.builds(
    c.ProviderToolCall,
    names.filter(bool),
    arguments,
    st.none() | ids,
    _providers,
    st.none() | names,
    st.none() | st.sampled_from(["completed", "failed"]),
)
provider_results = st.builds(
    c.ProviderToolResult,
    names.filter(bool),
    st.none() | ids,
    _providers,
    st.none() | st.sampled_from(["completed", "failed"]),
    st.none() | texts,
    st.lists(
        st.builds(c.SearchHit, st.none() | texts, st.none() | texts, st.none() | texts),
        max_size=2,
    ),
    st.none() | texts,
    st.none() | texts,
    st.none() | texts,
    st.none() | st.integers(min_value=-1, max_value=255),
    st.lists(ids, max_size=2),
    st.none() | json_values,
)
compactions = st.one_of(
    st.builds(c.Compaction, texts),
    st.builds(c.Compaction, texts, _providers, _opaque),
)
provided = st.one_of(cited_texts, provider_calls, provider_results, compactions)
"""What providers add to replies: citations, provider-run tools, compaction."""
parts = st.one_of(
    texts_parts,
    _media(c.Image),
    _media(c.Audio),
    _media(c.Video),
    _media(c.File),
    reasoning,
    provided,
)
content = st.lists(parts, max_size=4).map(tuple)

usage = st.builds(c.Usage, *[st.integers(0, 10**9)] * 5)
metadata = st.none() | st.builds(
    c.Metadata,
    model=st.none() | names,
    latency_ms=st.none() | st.floats(0, 1e6),
    usage=st.none() | usage,
    cache_hit=st.none() | st.booleans(),
    retries=st.none() | st.integers(0, 10),
    quality=st.none() | st.floats(0, 1),
    finish_reason=st.none() | st.sampled_from(["stop", "length", "tool_calls"]),
    custom=st.dictionaries(names, json_values, max_size=2),
)


def envelope() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "id": ids,
            "timestamp": timestamps,
            "parent_id": st.none() | ids,
            "trace_id": st.none() | ids,
            "policy": st.none() | names,
            "step": st.none() | st.integers(0, 2**40),
            "metadata": metadata,
            "extras": extras,
        }
    )


errors = st.none() | st.builds(
    c.ErrorInfo,
    st.sampled_from([e.value for e in c.ErrorCode]),
    texts,
    st.booleans(),
    st.none() | st.dictionaries(names, json_values, max_size=2),
)

canisters_ = st.one_of(
    st.builds(lambda e, x: c.User(x, **e), envelope(), content),
    st.builds(lambda e, x: c.Assistant(x, **e), envelope(), content),
    st.builds(lambda e, x: c.Supervisor(x, **e), envelope(), content),
    st.builds(
        lambda e, x, t, d: c.Document(x, t, d, **e),
        envelope(),
        content,
        st.none() | texts,
        st.none() | ids,
    ),
    st.builds(
        lambda e, n, a, i: c.Invocation(n, a, invocation_id=i, **e),
        envelope(),
        texts,
        arguments,
        ids,
    ),
    st.builds(
        lambda e, i, n, x, err: c.Result(i, n, x, err, **e),
        envelope(),
        ids,
        texts,
        content,
        errors,
    ),
)
conversations = st.lists(canisters_, max_size=6).map(c.Conversation)
# What a store holds: a canister id names one canister in a conversation.
stored_conversations = st.lists(
    canisters_, max_size=6, unique_by=lambda canister: canister.id
).map(c.Conversation)
