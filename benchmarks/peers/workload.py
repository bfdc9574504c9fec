"""The one workload every system gets, and the pure arithmetic that scores it.

Histories: each LoCoMo conversation and each LongMemEval-S question's haystack is one user; a
turn is one memory (`Turn.memory`, "Speaker: text", what a peer stores and returns). Questions
carry the turn ids of their evidence (LoCoMo's `evidence` dia_ids; LongMemEval's turns marked
`has_answer`). A hit stands for the turns its system says it stands for: a peer's memory for its
one turn, a hymem summary for its source turns. Recall is the share of a question's evidence
turns that the hits cover (`hymem.evaluation.metrics.evidence_recall`), at k = 10 and at an equal
token budget, where each ranking gives the longest prefix that fits
(`hymem.evaluation.budget.cut_to_budget`, the rule hymem's own matched-budget tables use).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hymem.evaluation.budget import cut_to_budget
from hymem.evaluation.metrics import evidence_recall


@dataclass(frozen=True, slots=True)
class Turn:
    id: str  # the benchmark's own turn id
    speaker: str
    role: str  # "user" or "assistant" (mem0 records it; LoCoMo's first speaker is "user")
    text: str

    @property
    def memory(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    time: str  # ISO 8601
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class History:
    dataset: str
    user: str
    sessions: tuple[Session, ...]

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


@dataclass(frozen=True, slots=True)
class Question:
    dataset: str
    user: str
    text: str
    evidence: frozenset[str]
    kind: str  # LoCoMo category name or LongMemEval question type


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved memory as the driver scores it: its text (for tokens) and its turns."""

    text: str
    turns: tuple[str, ...]


def recall_at_k(evidence: frozenset[str], hits: Sequence[Hit], k: int) -> float | None:
    """Share of the evidence covered by the turns of the first k hits (None: no evidence)."""
    return evidence_recall(evidence, covered(hits[:k]))


def recall_at_budget(
    evidence: frozenset[str], hits: Sequence[Hit], tokens: Sequence[int], budget: int
) -> tuple[float | None, int]:
    """(recall, tokens used) of the longest prefix of `hits` whose tokens fit `budget`."""
    cut = cut_to_budget(((str(i), t) for i, t in enumerate(tokens)), budget)
    return evidence_recall(evidence, covered(hits[: cut.units])), cut.tokens


def covered(hits: Sequence[Hit]) -> list[str]:
    """The turns the hits stand for, each once, in hit order."""
    return list(dict.fromkeys(t for h in hits for t in h.turns))


def rotation(systems: Sequence[str], round_no: int) -> list[str]:
    """The systems in the order of one round: A, B, C then B, C, A, ..., so that no system is
    always first after a pause or always last before one, and load falls on all alike."""
    if not systems:
        return []
    n = round_no % len(systems)
    return [*systems[n:], *systems[:n]]


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default); NaN for no values."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mean(values: Sequence[float | None]) -> float:
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else math.nan


def ratio(value: float, reference: float) -> str:
    """`value` over hymem's as "1.23x" (NaN-safe; "-" when either is missing or zero)."""
    if any(math.isnan(x) for x in (value, reference)) or reference == 0:
        return "-"
    return f"{value / reference:.2f}x"


def per_user(questions: list[Question], n: int | None) -> list[Question]:
    """The first `n` questions of each user (all when None): smoke runs ask a few."""
    if n is None:
        return questions
    seen: dict[str, int] = {}
    out = []
    for q in questions:
        seen[q.user] = seen.get(q.user, 0) + 1
        if seen[q.user] <= n:
            out.append(q)
    return out


def truncate(
    histories: list[History], questions: list[Question], max_turns: int | None
) -> tuple[list[History], list[Question]]:
    """For smoke runs and tests: each history cut to its first `max_turns` turns, plus every
    session holding evidence of one of its questions (whole, in its place), and the questions
    whose evidence all lies within what is kept. None: unchanged."""
    if max_turns is None:
        return histories, questions
    evidence = {(q.user, e) for q in questions for e in q.evidence}
    cut, kept = [], set()
    for h in histories:
        sessions, left = [], max_turns
        for s in h.sessions:
            if any((h.user, t.id) in evidence for t in s.turns):
                turns = s.turns
            elif left > 0:
                turns = s.turns[:left]
                left -= len(turns)
            else:
                continue
            sessions.append(Session(s.id, s.time, turns))
            kept.update((h.user, t.id) for t in turns)
        cut.append(History(h.dataset, h.user, tuple(sessions)))
    asked = [q for q in questions if all((q.user, e) in kept for e in q.evidence)]
    return cut, asked


def load_locomo(path: Path, conversations: int | None) -> tuple[list[History], list[Question]]:
    """The first `conversations` LoCoMo conversations (all when None) and their category 1-4
    questions that name evidence."""
    from hymem.evaluation.locomo_data import load_locomo as read
    from hymem.evaluation.metrics import CATEGORY_NAMES
    from hymem.evaluation.questions import eligible_questions

    histories, questions = [], []
    for conv in read(path)[:conversations]:
        first = conv.sessions[0].turns[0].speaker if conv.sessions else ""
        sessions = tuple(
            Session(
                s.session_id,
                s.date_time.isoformat(),
                tuple(
                    Turn(t.dia_id, t.speaker, "user" if t.speaker == first else "assistant", text)
                    for t in s.turns
                    if (text := t.render_text()).strip()
                ),
            )
            for s in conv.sessions
        )
        histories.append(History("locomo", conv.sample_id, sessions))
        for _, qa in eligible_questions(conv, adversarial=False, limit=None):
            if qa.evidence:
                kind = CATEGORY_NAMES.get(qa.category, str(qa.category))
                questions.append(
                    Question("locomo", conv.sample_id, qa.question, frozenset(qa.evidence), kind)
                )
    return histories, questions


def load_lme(path: Path, n: int) -> tuple[list[History], list[Question]]:
    """`n` LongMemEval questions with evidence turns, taken round-robin over the question
    types in file order (so a small sample still spans the types), each its own user."""
    from hymem.evaluation.longmemeval.data import load_longmemeval
    from hymem.evaluation.longmemeval.metrics import evidence_of

    usable = [q for q in load_longmemeval(path).questions if evidence_of(q).turns]
    by_type: dict[str, list] = {}
    for q in usable:
        by_type.setdefault(q.question_type, []).append(q)
    picked = []
    while len(picked) < min(n, len(usable)):
        for qs in by_type.values():
            if qs and len(picked) < n:
                picked.append(qs.pop(0))
    histories, questions = [], []
    for q in picked:
        sessions = tuple(
            Session(
                s.id,
                s.date.isoformat(),
                tuple(Turn(t.id, t.role, t.role, t.content) for t in s.turns if t.usable),
            )
            for s in q.sessions_in_time_order()
        )
        histories.append(History("longmemeval", q.question_id, sessions))
        evidence = evidence_of(q).turns
        questions.append(
            Question("longmemeval", q.question_id, q.question, evidence, q.question_type)
        )
    return histories, questions
