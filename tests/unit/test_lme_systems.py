"""LongMemEval systems and judging without disk or models: scoring a ranking, the baselines'
reading context, the one `ask` call (as of the question date) and the per-type judge."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from hymem.core.errors import ConfigError, UserInputError
from hymem.core.types import Answer, Hit, Level
from hymem.evaluation.longmemeval.data import LmeQuestion, load_longmemeval
from hymem.evaluation.longmemeval.judge import (
    JUDGE_PROMPTS,
    check_judge_spec,
    judge_answer,
    judge_prompt,
    judge_prompt_versions,
)
from hymem.evaluation.longmemeval.metrics import evidence_of
from hymem.evaluation.longmemeval.records import RetrievalRecord
from hymem.evaluation.longmemeval.systems import (
    QuestionRetriever,
    Ranked,
    ask_hymem,
    check_systems,
    flat_passages,
    qa_systems,
    score_ranking,
)
from hymem.llm.roles import JudgeOutput, Role, RoleResult
from hymem.prompts import load_prompt

from tests.fixtures_lme import LME_MINI


def questions() -> dict[str, LmeQuestion]:
    return {q.question_id: q for q in load_longmemeval(LME_MINI).questions}


def test_score_ranking_scores_both_levels_and_says_why_one_is_skipped() -> None:
    q = questions()["q_ssa_05"]
    ranked = Ranked("x", "turn", ["h1"], ["answer_ssa05_1_2", "sharegpt_laptop_05_1"], ["t"])
    rec = score_ranking(q, evidence_of(q), ranked)
    assert rec.metrics["turn"]["recall_all@1"] == 1.0
    assert "session" not in rec.metrics and rec.skipped["session"].startswith("no evidence")
    assert rec.session_ids == ["answer_ssa05_1", "sharegpt_laptop_05"]
    session_level = Ranked("y", "session", ["answer_ms02_2", "answer_ms02_1"], [], ["a", "b"])
    rec = score_ranking(questions()["q_ms_02"], evidence_of(questions()["q_ms_02"]), session_level)
    assert rec.metrics["session"]["recall_all@1"] == 0.0
    assert rec.metrics["session"]["recall_all@3"] == 1.0
    assert rec.skipped == {"turn": "ranks sessions, not turns"}
    assert rec.context_tokens["1"] == 1 and rec.context_tokens["50"] == 2
    assert rec.unit_tokens == [1, 1]  # one count per ranked item, for budget cuts


def test_flat_passages_read_rounds_and_whole_sessions_oldest_first() -> None:
    q = questions()["q_ms_02"]
    turns = RetrievalRecord(
        question_id=q.question_id,
        question_type=q.question_type,
        system="bm25-turn",
        granularity="turn",
        ranked_ids=["answer_ms02_2_3", "answer_ms02_1_1"],
    )
    got = flat_passages(q, turns, 2)
    assert [p.id for p in got] == ["answer_ms02_1_1", "answer_ms02_2_3"]  # by date
    assert got[0].text.count("\n") == 1 and got[0].text.startswith("user: I own a piano")
    assert got[1].text == "user: Great, I will start with that."  # last turn: no reply after it
    sessions = turns.model_copy(update={"granularity": "session", "ranked_ids": ["answer_ms02_1"]})
    (whole,) = flat_passages(q, sessions, 5)
    assert whole.text.count("\n") == 3 and "assistant: Tune the piano" in whole.text


class _Mem:
    """Just enough of Memory for ask_hymem: records the keyword arguments of ask."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def _answer(self, question: str, user_id: str) -> Answer:
        return Answer(
            text="a golden retriever",
            question=question,
            user_id=user_id,
            path="light",
            escalated=False,
            complete=True,
            iterations=0,
            trace_id="t1",
        )


class _MemWithAsOf(_Mem):
    def ask(
        self, question: str, *, user_id: str, depth: str = "auto", as_of: datetime | None = None
    ) -> Answer:
        self.calls.append({"user_id": user_id, "depth": depth, "as_of": as_of})
        return self._answer(question, user_id)


def test_ask_is_asked_as_of_the_question_date() -> None:
    q = questions()["q_ssu_01"]
    mem = _MemWithAsOf()
    res = ask_hymem(mem, q)  # type: ignore[arg-type]
    assert mem.calls == [
        {"user_id": "q_ssu_01", "depth": "auto", "as_of": datetime(2023, 6, 20, 9, 15)}
    ]
    assert res.prediction == "a golden retriever" and res.path == "light"


def test_each_question_type_has_its_judge_prompt() -> None:
    qs = questions()
    assert judge_prompt(qs["q_tr_04"]) == "judge_lme_temporal"
    assert judge_prompt(qs["q_ku_03"]) == "judge_lme_update"
    assert judge_prompt(qs["q_ssu_01"]) == judge_prompt(qs["q_ssa_05"]) == "judge_lme_default"
    assert judge_prompt(qs["q_ssu_06_abs"]) == "judge_lme_abstention"
    other = qs["q_ssu_01"].model_copy(update={"question_type": "new-type"})
    assert judge_prompt(other) == "judge_lme_default"
    versions = judge_prompt_versions()
    assert set(versions) == {*JUDGE_PROMPTS.values(), "judge_lme_abstention"}
    for name in versions:
        tmpl = load_prompt(name)
        assert tmpl.variables == {"question", "gold", "generated"} and tmpl.version >= 1
        assert "JSON" in tmpl.system
    assert "off by one" in load_prompt("judge_lme_temporal").system.replace("-", " ")
    assert "cannot be answered" in load_prompt("judge_lme_abstention").system


class _Judge:
    label = "fake"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def judge(
        self, question: str, gold: str, generated: str, *, prompt: str = "judge"
    ) -> RoleResult[JudgeOutput]:
        self.prompts.append(prompt)
        return RoleResult[JudgeOutput](
            role=Role.JUDGE, output=JudgeOutput(label="correct"), prompt_version=f"{prompt}@1"
        )


def test_judge_answer_uses_the_type_prompt_and_refuses_an_extractive_judge() -> None:
    judge = _Judge()
    assert judge_answer(judge, questions()["q_tr_04"], "14 days") == (  # type: ignore[arg-type]
        True,
        "CORRECT",
        "judge_lme_temporal@1",
    )
    assert judge.prompts == ["judge_lme_temporal"]
    with pytest.raises(ConfigError, match="needs a model"):
        check_judge_spec("extractive")
    check_judge_spec(None)
    check_judge_spec("openai:gpt-4.1-mini")


def test_systems_are_checked_and_map_to_qa_answerers() -> None:
    assert check_systems(["bm25-turn", " hymem-summary", "bm25-turn"]) == [
        "bm25-turn",
        "hymem-summary",
    ]
    with pytest.raises(UserInputError, match="bogus"):
        check_systems(["hymem-summary", "bogus"])
    assert qa_systems(["hymem-summary", "hymem-segment", "dense-session"]) == [
        "hymem",
        "dense-session",
    ]
    assert qa_systems(["bm25-turn"]) == ["bm25-turn"]
    assert qa_systems(["hymem-light", "bm25-turn"]) == ["hymem", "bm25-turn"]


class _ContextMem:
    """Memory's context over scripted hits, recording how each call was made."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.calls: list[tuple[str, str, datetime | None]] = []

    def context(
        self, question: str, *, user_id: str, depth: str, as_of: datetime | None = None
    ) -> list[Hit]:
        self.calls.append((user_id, depth, as_of))
        return self.hits


def test_hymem_contexts_rank_what_each_path_reads_as_of_the_question_date() -> None:
    q = questions()["q_ms_02"]
    hits = [
        Hit(
            level=Level.SUMMARY,
            id="sum-1",
            user_id=q.question_id,
            text="The user owns a piano and a violin.",
            segment_id="seg-1",
            turn_ids=["answer_ms02_1_1"],
        ),
        Hit(
            level=Level.SEGMENT,
            id="seg-2",
            user_id=q.question_id,
            text="user: I bought a ukulele",
            segment_id="seg-2",
            turn_ids=["answer_ms02_2_1", "answer_ms02_2_2"],
        ),
    ]
    mem = _ContextMem(hits)
    retriever = QuestionRetriever(mem, q, rrf_k=60)  # type: ignore[arg-type]
    light, deep = retriever.rank("hymem-light"), retriever.rank("hymem-deep")
    assert [c[1] for c in mem.calls] == ["light", "deep"]
    assert all(c[0] == "q_ms_02" and c[2] == q.question_date for c in mem.calls)
    assert light.ranked_ids == ["sum-1", "seg-2"] and light.granularity == "turn"
    assert light.turn_ids == ["answer_ms02_1_1", "answer_ms02_2_1", "answer_ms02_2_2"]
    rec = score_ranking(q, evidence_of(q), deep)
    assert len(rec.unit_tokens) == 2 and rec.context_tokens["50"] == sum(rec.unit_tokens)
    assert rec.metrics["session"]["recall_all@1"] == 0.0  # both sessions need k >= 2


class _SearchMem:
    """Memory's search over scripted segment hits, recording the depth of each call."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.ks: list[int] = []

    def search(self, query: str, *, user_id: str, k: int, level: Level) -> list[Hit]:
        self.ks.append(k)
        return self.hits[:k]


def test_hymem_hits_are_read_deeper_until_their_turns_cover_the_haystack() -> None:
    q = questions()["q_ms_02"]  # 4 sessions, 15 turns
    every_turn = [t.id for s in q.sessions for t in s.turns]

    def hit(i: int, turns: list[str]) -> Hit:
        return Hit(
            level=Level.SEGMENT,
            id=f"seg{i}",
            user_id=q.question_id,
            text="t",
            segment_id=f"seg{i}",
            turn_ids=turns,
        )

    # 60 hits on one turn, then the rest: 50 hits cover 1 turn, so the search goes 4x deeper.
    hits = [hit(i, [every_turn[0]]) for i in range(60)] + [hit(60, every_turn)]
    mem = _SearchMem(hits)
    got, turns = QuestionRetriever(mem, q, rrf_k=60).hymem_hits(Level.SEGMENT)  # type: ignore[arg-type]
    assert mem.ks == [50, 200] and len(got) == 61 and turns == every_turn
    ranked = QuestionRetriever(mem, q, rrf_k=60).rank("hymem-segment")  # type: ignore[arg-type]
    assert len(ranked.ranked_ids) == 50 and ranked.turn_ids == every_turn
    covered = _SearchMem([hit(0, every_turn)] * 50)
    QuestionRetriever(covered, q, rrf_k=60).hymem_hits(Level.SEGMENT)  # type: ignore[arg-type]
    assert covered.ks == [50]
