"""The JSON schema a role's reply must match, narrowed to the call at hand.

A backend that can constrain decoding (llama.cpp's grammars) is handed this schema, so a model
cannot invent what the call did not offer: segment ids and selected ids are enums of the ids
shown, an update's evidence is one of the newer memories, the number of segments is exactly the
number asked about, and lists a small model could run away with are bounded. The schema is the
role's pydantic model's own (`model_json_schema()`), patched; a backend that cannot constrain
ignores it and the reply goes through the same validation as ever. Pure: no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hymem.llm.roles import ContextItem, SegmentInput
from hymem.prompts.schemas import MAX_FACTS_PER_SEGMENT
from pydantic import BaseModel

Schema = dict[str, Any]

# A fact names the few lines it rests on; a longer list is a model counting, not citing.
MAX_TURNS_PER_FACT = 8
# Facts one segment's summary may hold under a grammar: enough for a dense session, few enough
# that a small model looping on facts stops before its token budget does.
MAX_CONSTRAINED_FACTS = min(16, MAX_FACTS_PER_SEGMENT)
# Characters a constrained string may run to. Greedy decoding of a small model falls into loops
# ("I'm excited to ... I'm excited to ..."); a bounded string is closed instead of running to
# the token budget, and every reply stays a complete JSON object. A fact is one sentence, an
# answer a short reply; the validators' caps (MAX_FACT_CHARS, ...) stay the final word.
MAX_FACT_TEXT = 300
MAX_ANSWER_TEXT = 600
MAX_SHORT_TEXT = 300


def base_schema(model: type[BaseModel]) -> Schema:
    """The model's JSON schema without titles and descriptions (noise to a grammar), its
    free-text fields bounded (`MAX_ANSWER_TEXT` for an answer, `MAX_SHORT_TEXT` otherwise)."""
    schema: Schema = _strip(model.model_json_schema())
    for name, prop in schema.get("properties", {}).items():
        for option in prop.get("anyOf", [prop]):
            if option.get("type") == "string" and "enum" not in option:
                option["maxLength"] = MAX_ANSWER_TEXT if name == "answer" else MAX_SHORT_TEXT
    return schema


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: _strip(v)
            for k, v in node.items()
            if k not in ("title", "description", "default") or not isinstance(v, str | None)
        }
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _ids(values: Sequence[str]) -> Schema:
    """One of `values`, exactly; distinct, in the order offered."""
    return {"type": "string", "enum": list(dict.fromkeys(values))}


def summarise_schema(model: type[BaseModel], segments: Sequence[SegmentInput]) -> Schema:
    """One summary per segment asked about, in the order shown, each naming its segment's id
    (a tuple of fixed ids: a small model otherwise repeats the first id for every segment),
    with at most two facts per line of its segment and each fact's text bounded. Each fact
    cites at least one line of its own segment: a citation past a shorter segment's last line,
    or none, left the fact attributed to its whole segment."""
    schema = base_schema(model)
    defs = schema["$defs"]
    summary: Schema = defs.pop("SegmentSummary")
    fact: Schema = defs.pop("FactItem")
    fact["properties"]["text"]["maxLength"] = MAX_FACT_TEXT
    fact["required"] = ["text", "turns"]
    if not defs:
        del schema["$defs"]

    def one(segment: SegmentInput) -> Schema:
        lines = max(1, len(segment.lines))
        own_fact = copy.deepcopy(fact)
        own_fact["properties"]["turns"].update(
            # An enum, not minimum/maximum: llama.cpp's schema converter drops integer bounds,
            # so a small model cited line 3 of a one-line segment and the fact lost its source.
            items={"type": "integer", "enum": list(range(1, lines + 1))},
            minItems=1,
            maxItems=min(MAX_TURNS_PER_FACT, lines),
        )
        own = copy.deepcopy(summary)
        own["properties"]["segment_id"] = {"const": segment.segment_id}
        own["properties"]["facts"]["items"] = own_fact
        own["properties"]["facts"]["maxItems"] = min(MAX_CONSTRAINED_FACTS, 2 * lines)
        own["required"] = ["segment_id", "facts"]
        return own

    n = len(segments)
    schema["properties"]["segments"] = {
        "type": "array",
        "prefixItems": [one(seg) for seg in segments],
        "items": False,
        "minItems": n,
        "maxItems": n,
    }
    return schema


def select_schema(model: type[BaseModel], candidates: Sequence[ContextItem]) -> Schema:
    """Ids chosen from the candidates shown, at most as many as there are."""
    schema = base_schema(model)
    ids = [c.id for c in candidates]
    schema["properties"]["ids"] = {
        "type": "array",
        "items": _ids(ids),
        "maxItems": len(set(ids)),
    }
    return schema


def update_schema(model: type[BaseModel], newer: Sequence[ContextItem]) -> Schema:
    """One of three replies, each with what its action needs: "update" with the merged text
    and the newer memory it rests on, "delete" with that memory, "ignore" alone. The evidence
    is one of the newer memories shown."""
    props = base_schema(model)["properties"]
    evidence = _ids([m.id for m in newer])
    text = {"type": "string", "maxLength": MAX_SHORT_TEXT}

    def variant(action: str, **required: Schema) -> Schema:
        fields: Schema = {"action": {"const": action}, **required, "reason": text}
        return {
            "type": "object",
            "properties": fields,
            "required": ["action", *required],
            "additionalProperties": False,
        }

    assert set(props) == {"action", "text", "evidence_id", "reason"}, "update's fields changed"
    return {
        "anyOf": [
            variant("update", text=text, evidence_id=evidence),
            variant("delete", evidence_id=evidence),
            variant("ignore"),
        ]
    }


def judge_schema(model: type[BaseModel]) -> Schema:
    """The reason, then the label: under a grammar the model writes its comparison first."""
    schema = base_schema(model)
    assert list(schema["properties"]) == ["reason", "label"], "judge's fields changed"
    schema["required"] = ["reason", "label"]
    return schema


def plain_schema(model: type[BaseModel]) -> Schema:
    """A role whose reply names nothing offered: the model's schema as it stands."""
    return copy.deepcopy(base_schema(model))


__all__ = [
    "MAX_CONSTRAINED_FACTS",
    "MAX_TURNS_PER_FACT",
    "Schema",
    "base_schema",
    "judge_schema",
    "plain_schema",
    "select_schema",
    "summarise_schema",
    "update_schema",
]
