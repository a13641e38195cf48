"""JSON Schema translation to what each format takes, reporting every change.

:func:`translate_schema` is pure: it never changes its input, and returns the
translated schema with the list of :class:`SchemaChange` s it made, each at its
path (``$.properties.city.anyOf``). A schema it cannot translate (a recursive
``$ref`` for Gemini's OpenAPI subset, one nesting too deeply) raises
:class:`~canisters.ProviderError` naming the path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs
import orjson

from ...exceptions import ProviderError

__all__ = [
    "GEMINI_MAX_DEPTH",
    "GEMINI_MAX_INLINED",
    "SchemaChange",
    "SchemaTarget",
    "from_gemini_schema",
    "is_strict_compatible",
    "translate_schema",
]

SchemaTarget = Literal[
    "gemini", "gemini-json", "openai", "openai-strict", "anthropic", "ollama"
]
"""What a schema is translated for:

- ``"gemini"``: Gemini's OpenAPI subset (``parameters``, ``responseSchema``);
- ``"gemini-json"``: Gemini's JSON Schema fields (``parametersJsonSchema``,
  ``responseJsonSchema``), which take more and need fewer changes;
- ``"openai-strict"``: OpenAI's strict mode (every property required, every
  object closed, some keywords refused);
- ``"openai"``, ``"anthropic"``, ``"ollama"``: JSON Schema as it is.
"""

GEMINI_MAX_DEPTH = 32
"""How deeply a schema for Gemini may nest (objects and arrays within each
other), after its references are inlined."""

GEMINI_MAX_INLINED = 1_000_000
"""How much a schema for Gemini may grow by the inlining of its references, in
characters of JSON (about): every ``$ref`` inlined adds the size of its
definition, and 20 more (for the change it notes). A schema whose definitions
refer to the next ones several times doubles at every level; past this it is
refused rather than written out."""


@attrs.frozen
class SchemaChange:
    """One change :func:`translate_schema` made."""

    path: str
    """Where, in the input schema (``$`` is its root)."""
    action: Literal[
        "inlined",
        "nullable",
        "enum",
        "removed",
        "merged",
        "any_of",
        "required",
        "closed",
        "renamed",
    ]
    """What: a ``$ref`` inlined, ``null`` turned into ``nullable`` (or back),
    a ``const`` turned into a one-value enum, a keyword removed, an ``allOf``
    merged, a ``oneOf`` or type list turned into ``anyOf``, a property made
    required (and nullable), an object closed (``additionalProperties:
    false``), a keyword renamed (Gemini's ``example`` as ``examples``)."""
    detail: str
    """In words."""


# Gemini's OpenAPI Schema object (google.genai.types.Schema).
_GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
# The keywords of an object that has nothing to rewrite in itself (no null
# branch in an anyOf), when its type is not a list.
_GEMINI_PLAIN = _GEMINI_KEYS - {"anyOf"}
# Its keywords whose value is read rather than copied.
_GEMINI_WALKED = frozenset({"properties", "items", "anyOf", "enum", "format"})
_GEMINI_FORMATS = {
    "string": frozenset({"enum", "date-time"}),
    "integer": frozenset({"int32", "int64"}),
    "number": frozenset({"float", "double"}),
}
# What Gemini's parametersJsonSchema / responseJsonSchema take.
_GEMINI_JSON_KEYS = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    }
)
# Keywords OpenAI's strict mode refuses.
_STRICT_BANNED = frozenset(
    {
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
    }
)
# Keywords whose value is one schema, a list of schemas, or a map of schemas.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def translate_schema(
    schema: Mapping[str, Any],
    *,
    target: SchemaTarget,
    max_depth: int = GEMINI_MAX_DEPTH,
) -> tuple[dict[str, Any], list[SchemaChange]]:
    """``schema`` as ``target`` takes it, and the changes made, by path.

    For ``"gemini"``: local ``$ref`` s inlined (``$defs`` / ``definitions``
    removed), ``anyOf`` with ``null`` and type lists with ``"null"`` turned into
    ``nullable``, other type lists and ``oneOf`` into ``anyOf``, a one-schema
    ``allOf`` merged, ``const`` into a one-value string enum, an empty
    ``properties`` removed, enums of non-strings, formats Gemini does not know
    and every keyword outside its Schema object removed; the nesting depth is
    checked against ``max_depth``. For ``"gemini-json"``: ``const`` into an
    enum and keywords outside what those fields take removed. For
    ``"openai-strict"``: every object closed, every property required (one that
    was optional becomes nullable), refused keywords removed. The others return
    a copy unchanged.
    """
    if not isinstance(schema, Mapping):
        raise ProviderError(
            f"a JSON Schema must be an object, got {type(schema).__name__}"
        )
    if target in ("openai", "anthropic", "ollama"):
        try:
            return _copy(schema), []
        except RecursionError:
            raise ProviderError("the schema nests too deeply to translate") from None
    return _remembered((target, max_depth), schema, _translate, target, max_depth)


def _translate(
    schema: Mapping[str, Any], target: SchemaTarget, max_depth: int
) -> tuple[dict[str, Any], list[SchemaChange]]:
    changes: list[SchemaChange] = []
    try:
        if target == "gemini":
            translated = _Gemini(schema, changes, max_depth).walk(schema, "$", 0, ())
        elif target == "gemini-json":
            translated = _gemini_json(schema, "$", changes)
        elif target == "openai-strict":
            translated = _strict(schema, "$", changes)
        else:
            raise ProviderError(f"unknown schema target {target!r}")
    except RecursionError:
        raise ProviderError("the schema nests too deeply to translate") from None
    return translated, changes


# Translations remembered, as gateways send the same schemas on every call:
# by (what they were made for, the schema as JSON) the schema as it was (a
# private copy), the translation as JSON and the changes. A schema is
# remembered only when it is plain JSON (dicts, lists, strings, numbers,
# booleans, null: orjson refuses any other type with these options), and a
# translation is reused only for a schema equal to the one remembered, so that
# what JSON cannot tell apart (NaN and null) is translated afresh.
_REMEMBERED: dict[tuple[Any, bytes], tuple[Any, bytes, tuple[SchemaChange, ...]]] = {}
_REMEMBER_AT_MOST = 256
# The largest schema, and translation, remembered (as JSON, bytes each): a
# larger one is translated afresh each time, so that what is remembered stays
# within 256 times twice this.
_REMEMBER_LARGEST = 64 * 1024
_AS_KEY = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


def _plain_mapping(value: Any) -> Any:
    """The ``default`` of the key's serialization: a ``FrozenDict`` (or
    another ``dict`` subclass) as a ``dict``, anything else refused."""
    if isinstance(value, dict):
        return dict(value)
    raise TypeError


def _remembered(
    kind: Any,
    schema: Mapping[str, Any],
    translate: Callable[..., tuple[dict[str, Any], list[SchemaChange]]],
    *arguments: Any,
) -> tuple[dict[str, Any], list[SchemaChange]]:
    """``translate(schema, *arguments)``, remembered for ``kind`` and
    ``schema`` (a fresh copy of the translation and of the list of changes
    each time)."""
    try:
        given = dict(schema) if type(schema) is not dict else schema
        key = (kind, orjson.dumps(given, default=_plain_mapping, option=_AS_KEY))
    except (TypeError, orjson.JSONEncodeError, RecursionError):
        return translate(schema, *arguments)
    if len(key[1]) > _REMEMBER_LARGEST:
        return translate(schema, *arguments)
    entry = _REMEMBERED.get(key)
    if entry is not None and entry[0] == schema:
        return orjson.loads(entry[1]), list(entry[2])
    translated, changes = translate(schema, *arguments)
    try:
        made = orjson.dumps(translated, default=_plain_mapping, option=_AS_KEY)
    except (TypeError, orjson.JSONEncodeError):
        return translated, changes
    if len(made) > _REMEMBER_LARGEST:
        return translated, changes
    if len(_REMEMBERED) >= _REMEMBER_AT_MOST:
        # The oldest goes (another thread may have taken it first).
        with contextlib.suppress(KeyError, RuntimeError, StopIteration):
            del _REMEMBERED[next(iter(_REMEMBERED))]
    _REMEMBERED[key] = (orjson.loads(key[1]), made, tuple(changes))
    return translated, changes


def is_strict_compatible(schema: Mapping[str, Any]) -> bool:
    """Whether OpenAI's strict mode takes ``schema`` unchanged.

    A translation never switches strict mode on for a schema that is not:
    strict mode would change what the tool accepts.
    """
    return not translate_schema(schema, target="openai-strict")[1]


# The types of a schema's leaves, told without the ABC's check (the walks
# below meet one at most keys).
_LEAVES = frozenset({str, int, float, bool, type(None)})


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is list:
        return [_copy(item) for item in value]
    if kind is dict or isinstance(value, Mapping):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(item) for item in value]
    return value


def _size(value: Any) -> int:
    """About how many characters ``value`` takes written as JSON."""
    kind = type(value)
    if kind is str:
        return len(value) + 2
    if kind is dict or isinstance(value, Mapping):
        return 2 + sum(len(str(key)) + 4 + _size(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return 2 + sum(_size(item) + 1 for item in value)
    return 5


def _is_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and dict(schema) == {"type": "null"}


class _Gemini:
    def __init__(
        self, root: Mapping[str, Any], changes: list[SchemaChange], max_depth: int
    ) -> None:
        self.root = root
        self.changes = changes
        self.max_depth = max_depth
        self.inlined = 0
        self.sizes: dict[str, int] = {}

    def note(self, path: str, action: Any, detail: str) -> None:
        self.changes.append(SchemaChange(path, action, detail))

    def resolve(self, ref: str, path: str) -> Mapping[str, Any]:
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix):
                container = self.root.get(prefix[2:-1])
                name = ref[len(prefix) :]
                if isinstance(container, Mapping) and isinstance(
                    container.get(name), Mapping
                ):
                    return container[name]  # type: ignore[no-any-return]
        raise ProviderError(
            f"{path}: $ref {ref!r} is not a local definition; Gemini's schema "
            f"cannot refer to it"
        )

    def walk(
        self, schema: Any, path: str, depth: int, seen: tuple[str, ...]
    ) -> dict[str, Any]:
        if type(schema) is not dict and not isinstance(schema, Mapping):
            raise ProviderError(f"{path}: a schema must be an object")
        if depth > self.max_depth:
            raise ProviderError(
                f"{path}: the schema nests more than {self.max_depth} levels, "
                f"deeper than Gemini takes"
            )
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str):
                raise ProviderError(f"{path}.$ref: a reference must be a string")
            if ref in seen:
                raise ProviderError(
                    f"{path}: $ref {ref!r} refers to itself; Gemini's OpenAPI "
                    f"schema cannot hold a recursive schema (use its JSON Schema "
                    f"field)"
                )
            target = self.resolve(ref, path)
            size = self.sizes.get(ref)
            if size is None:
                size = self.sizes[ref] = _size(target)
            self.inlined += size + 20  # and the change noted, per inlining
            if self.inlined > GEMINI_MAX_INLINED:
                raise ProviderError(
                    f"{path}: inlining $ref {ref!r} makes the schema grow by more "
                    f"than {GEMINI_MAX_INLINED:,} characters, more than a schema "
                    f"for Gemini may (its definitions refer to each other too "
                    f"many times; use its JSON Schema field)"
                )
            self.note(path, "inlined", f"$ref {ref} inlined")
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            return self.walk(merged, path, depth, (*seen, ref))
        out: dict[str, Any] = {}
        if _GEMINI_PLAIN.issuperset(schema) and type(schema.get("type")) is not list:
            # Nothing to rewrite in this object itself (most of a schema's
            # objects): its keywords are read as they are.
            return self.keywords(schema, out, path, depth, seen)
        source = dict(schema)
        if depth == 0:
            for key in ("$defs", "definitions"):
                if key in source:
                    del source[key]
                    self.note(f"{path}.{key}", "removed", f"{key} inlined where used")
        all_of = source.pop("allOf", None)
        if all_of is not None:
            if isinstance(all_of, list) and len(all_of) == 1:
                self.note(f"{path}.allOf", "merged", "one-schema allOf merged")
                inner = all_of[0]
                if isinstance(inner, Mapping) and "$ref" in inner:
                    inner = self.walk(inner, f"{path}.allOf[0]", depth, seen)
                if isinstance(inner, Mapping):
                    source = {**inner, **source}
            else:
                self.note(f"{path}.allOf", "removed", "Gemini takes no allOf")
        if "oneOf" in source:
            if "anyOf" in source:
                self.note(f"{path}.oneOf", "removed", "oneOf beside anyOf removed")
                source.pop("oneOf")
            else:
                source["anyOf"] = source.pop("oneOf")
                self.note(f"{path}.oneOf", "any_of", "oneOf sent as anyOf")
        kind = source.get("type")
        if isinstance(kind, list):
            kinds = [item for item in kind if item != "null"]
            if len(kinds) < len(kind):
                out["nullable"] = True
                self.note(f"{path}.type", "nullable", "null in the type list")
            if len(kinds) == 1:
                source["type"] = kinds[0]
            else:
                source.pop("type")
                branches = [{"type": item} for item in kinds]
                given = source.get("anyOf", [])
                if not isinstance(given, list):
                    raise ProviderError(f"{path}.anyOf: anyOf must be a list")
                source["anyOf"] = branches + given
                self.note(f"{path}.type", "any_of", "type list sent as anyOf")
        if "const" in source:
            value = source.pop("const")
            if isinstance(value, str):
                source["enum"] = [value]
                source.setdefault("type", "string")
                self.note(f"{path}.const", "enum", "const sent as a one-value enum")
            else:
                self.note(
                    f"{path}.const", "removed", "Gemini takes only string constants"
                )
        any_of = source.get("anyOf")
        if any_of is not None and isinstance(any_of, list):
            branches = [item for item in any_of if not _is_null(item)]
            if len(branches) < len(any_of):
                out["nullable"] = True
                self.note(f"{path}.anyOf", "nullable", "null branch sent as nullable")
            if len(branches) == 1 and isinstance(branches[0], Mapping):
                source.pop("anyOf")
                self.note(f"{path}.anyOf", "merged", "one-branch anyOf merged")
                merged = self.walk({**branches[0], **source}, path, depth, seen)
                merged.update(out)
                return merged
            source["anyOf"] = branches
        return self.keywords(source, out, path, depth, seen)

    def keywords(
        self,
        source: Mapping[str, Any],
        out: dict[str, Any],
        path: str,
        depth: int,
        seen: tuple[str, ...],
    ) -> dict[str, Any]:
        """``out`` with the keywords of ``source`` (an object with nothing
        left to rewrite in itself) as Gemini takes them."""
        for key, value in source.items():
            if key not in _GEMINI_KEYS:
                self.note(f"{path}.{key}", "removed", f"Gemini does not take {key}")
                continue
            if key not in _GEMINI_WALKED:  # a keyword Gemini takes as it is
                out[key] = value if type(value) in _LEAVES else _copy(value)
                continue
            where = f"{path}.{key}"
            if key == "properties":
                if not isinstance(value, Mapping):
                    raise ProviderError(f"{where}: properties must be an object")
                if not value:
                    self.note(where, "removed", "Gemini refuses empty properties")
                    continue
                out[key] = {
                    name: self.walk(item, f"{where}.{name}", depth + 1, seen)
                    for name, item in value.items()
                }
            elif key == "items":
                out[key] = self.walk(value, where, depth + 1, seen)
            elif key == "anyOf":
                if not isinstance(value, list):
                    raise ProviderError(f"{where}: anyOf must be a list")
                out[key] = [
                    self.walk(item, f"{where}[{index}]", depth + 1, seen)
                    for index, item in enumerate(value)
                ]
            elif key == "enum":
                if not isinstance(value, list) or not all(
                    isinstance(item, str) for item in value
                ):
                    self.note(where, "removed", "Gemini takes only string enums")
                    continue
                out[key] = list(value)
            elif key == "format":
                kind = source.get("type")
                known = _GEMINI_FORMATS.get(kind, ()) if isinstance(kind, str) else ()
                if not isinstance(value, str) or value not in known:
                    self.note(where, "removed", f"Gemini does not take format {value}")
                    continue
                out[key] = value
        return out


def _gemini_json(schema: Any, path: str, changes: list[SchemaChange]) -> Any:
    if type(schema) is not dict and not isinstance(schema, Mapping):
        return _copy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "const":
            where = f"{path}.{key}"
            if "enum" in schema:
                changes.append(SchemaChange(where, "removed", "const beside enum"))
            else:
                out["enum"] = [_copy(value)]
                changes.append(
                    SchemaChange(where, "enum", "const sent as a one-value enum")
                )
            continue
        if key not in _GEMINI_JSON_KEYS:
            changes.append(
                SchemaChange(f"{path}.{key}", "removed", f"Gemini does not take {key}")
            )
            continue
        out[key] = (
            value
            if type(value) in _LEAVES
            else _children(key, value, path, _gemini_json, changes)
        )
    return out


def _children(
    key: str, value: Any, path: str, walk: Any, changes: list[SchemaChange]
) -> Any:
    """``value`` of keyword ``key`` of the schema at ``path``: the schemas in
    it walked (``walk(schema, path, changes)``), anything else copied."""
    kind = type(value)
    mapping = kind is dict or (kind is not list and isinstance(value, Mapping))
    if mapping and key in _ONE:
        return walk(value, f"{path}.{key}", changes)
    if key in _MANY and isinstance(value, list):
        where = f"{path}.{key}"
        return [
            walk(item, f"{where}[{index}]", changes) for index, item in enumerate(value)
        ]
    if mapping and key in _MAP:
        where = f"{path}.{key}"
        return {
            name: walk(item, f"{where}.{name}", changes) for name, item in value.items()
        }
    return _copy(value)


def _strict(schema: Any, path: str, changes: list[SchemaChange]) -> Any:
    if type(schema) is not dict and not isinstance(schema, Mapping):
        return _copy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _STRICT_BANNED:
            changes.append(
                SchemaChange(
                    f"{path}.{key}", "removed", f"OpenAI strict mode refuses {key}"
                )
            )
            continue
        out[key] = (
            value
            if type(value) in _LEAVES
            else _children(key, value, path, _strict, changes)
        )
    kind = out.get("type")
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    if is_object or "properties" in out:
        if out.get("additionalProperties") is not False:
            out["additionalProperties"] = False
            changes.append(
                SchemaChange(
                    f"{path}.additionalProperties",
                    "closed",
                    "strict mode needs additionalProperties: false",
                )
            )
        properties = out.get("properties")
        if type(properties) is dict or isinstance(properties, Mapping):
            required = list(out.get("required") or [])
            for name in properties:
                if name not in required:
                    required.append(name)
                    out["properties"][name] = _nullable(properties[name])
                    changes.append(
                        SchemaChange(
                            f"{path}.properties.{name}",
                            "required",
                            "optional property made required and nullable",
                        )
                    )
            if properties or "required" in out:
                out["required"] = required
    return out


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]} if kind != "null" else dict(schema)
    if isinstance(kind, list):
        return dict(schema) if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [dict(schema), {"type": "null"}]}


def from_gemini_schema(
    schema: Mapping[str, Any],
) -> tuple[dict[str, Any], list[SchemaChange]]:
    """A schema in Gemini's OpenAPI subset (``parameters``,
    ``responseSchema``) as JSON Schema, and the changes made, by path: type
    names lower-cased (``"OBJECT"`` is ``"object"``; not reported),
    ``nullable: true`` as ``"null"`` in the type list (or an ``anyOf`` with
    ``null``), ``example`` as ``examples``, Gemini's ``format: "enum"`` and
    ``propertyOrdering`` removed. Pure, like :func:`translate_schema`."""
    if not isinstance(schema, Mapping):
        raise ProviderError(
            f"a Gemini schema must be an object, got {type(schema).__name__}"
        )
    return _remembered("from-gemini", schema, _read_gemini)


def _read_gemini(
    schema: Mapping[str, Any],
) -> tuple[dict[str, Any], list[SchemaChange]]:
    changes: list[SchemaChange] = []
    try:
        return _from_gemini(schema, "$", changes), changes
    except RecursionError:
        raise ProviderError("the schema nests too deeply to translate") from None


def _from_gemini(schema: Any, path: str, changes: list[SchemaChange]) -> Any:
    if not isinstance(schema, Mapping):
        return _copy(schema)
    out: dict[str, Any] = {}
    nullable = False
    for key, value in schema.items():
        where = f"{path}.{key}"
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "nullable":
            nullable = value is True
            changes.append(SchemaChange(where, "nullable", "nullable sent as null"))
        elif key == "example":
            out["examples"] = [_copy(value)]
            changes.append(SchemaChange(where, "renamed", "example sent as examples"))
        elif key == "propertyOrdering" or (key == "format" and value == "enum"):
            changes.append(
                SchemaChange(where, "removed", f"JSON Schema has no {key} {value!r}")
            )
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {
                name: _from_gemini(item, f"{where}.{name}", changes)
                for name, item in value.items()
            }
        elif key == "items":
            out[key] = _from_gemini(value, where, changes)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [
                _from_gemini(item, f"{where}[{index}]", changes)
                for index, item in enumerate(value)
            ]
        else:
            out[key] = _copy(value)
    if nullable:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out
