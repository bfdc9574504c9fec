"""A model's update decision, checked: the merge guard and normalisation against the queue."""

from __future__ import annotations

import pytest
from hymem.write.decisions import merge_guard, normalise_decision

from tests.fixtures_sleep import summary

TOKYO = "User plans a trip to Tokyo in May"
KYOTO = "User asked about visiting Kyoto"


def test_guard_rejects_the_tokyo_kyoto_merge() -> None:
    dropped = merge_guard(TOKYO, [KYOTO], "User asked about visiting Kyoto.")
    assert {"tokyo", "may", "trip"} <= set(dropped)
    assert merge_guard(TOKYO, [KYOTO], "User plans a May trip to Tokyo and asked about Kyoto") == []
    # inflections still count as kept ("planning" keeps "plans")
    assert merge_guard(TOKYO, [KYOTO], "User is planning trips to Tokyo in May; Kyoto too") == []
    # function words are not facts: resolving a pronoun or dropping a negation is no loss
    melanie = "Melanie loves hiking in the Alps"
    assert merge_guard("She loves hiking", [melanie], melanie) == []
    assert merge_guard("User does not eat meat", ["User eats meat again"], "User eats meat") == []


def test_normalise_decision_rejects_lossy_merge_and_keeps_good_one() -> None:
    t, q = summary("t", TOKYO), [summary("k", KYOTO, day=1)]
    bad = normalise_decision(t, q, "update", "User asked about visiting Kyoto", "k", None)
    assert bad.action == "ignore" and bad.kind == "rejected" and "tokyo" in (bad.rejected or "")
    good = normalise_decision(
        t,
        q,
        "UPDATE",
        "User plans a trip to Tokyo in May and asked about visiting Kyoto",
        "k",
        "refines",
    )
    assert good.kind == "update" and good.evidence_id == "k"


@pytest.mark.parametrize(
    ("action", "text", "evidence", "kind", "evidence_out"),
    [
        ("delete", None, "k", "delete", "k"),
        ("delete", None, "made-up-id", "delete", "k"),  # falls back to the closest queue item
        ("ignore", None, None, "ignore", None),
        ("shrug", None, None, "ignore", None),
        ("update", "   ", None, "ignore", None),
        ("update", TOKYO, None, "ignore", None),  # unchanged text is no change
    ],
)
def test_normalise_decision_cases(
    action: str, text: str | None, evidence: str | None, kind: str, evidence_out: str | None
) -> None:
    d = normalise_decision(
        summary("t", TOKYO), [summary("k", KYOTO, day=1)], action, text, evidence, None
    )
    assert d.kind == kind and d.evidence_id == evidence_out
    if kind == "delete":
        assert d.reason
