"""`ExtractiveRoles`: every role without a model -- deterministic, offline, labelled.

This is hymem's embedded default, so ingest, ask, sleep and evaluation all run in CI with no
model at all. Each role is an honest heuristic (see the `extractive_*` modules): sentence
selection for summaries, lexical + embedding coverage for the completeness verdict, similarity
for event selection, best-supported span for answers. Usage is accounted as if a model had read
the same input (`count_tokens` of what the role read and of what it wrote), so cost reports
stay comparable with model backends; results carry `prompt_version="extractive"`.
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import TypeVar

from hymem.core.logging import get_logger
from hymem.core.types import RoleUsage
from hymem.embed.embedders import Embedder
from hymem.llm.accounting import UsageMeter
from hymem.llm.extractive.answer import (
    Candidate,
    answers_type,
    best_index,
    compose_answer,
    score_candidates,
)
from hymem.llm.extractive.scoring import (
    COMPLETE_MIN_COSINE,
    COMPLETE_MIN_COVERAGE,
    DEFAULT_CACHE_ITEMS,
    CachedEmbedder,
    blend,
    coverage,
    jaccard,
    missing_terms,
    normalise_answer,
    select_within_margin,
    term_weights,
    token_f1,
)
from hymem.llm.extractive.summarise import summarise_segment
from hymem.llm.extractive.temporal import DatePhrasing
from hymem.llm.extractive.text import (
    content_stems,
    is_stopword,
    parse_lines,
    question_terms,
    split_sentences,
    stem,
    words,
)
from hymem.llm.roles import (
    ContextItem,
    DeepAnswerOutput,
    JudgeOutput,
    LightAnswerOutput,
    ReflectOutput,
    Role,
    RoleResult,
    SegmentInput,
    SelectOutput,
    SummariseOutput,
    UpdateOutput,
    role_result,
)
from hymem.llm.tokens import count_tokens
from pydantic import BaseModel

log = get_logger("hymem.llm.extractive.backend")

OutT = TypeVar("OutT", bound=BaseModel)

PROMPT_VERSION = "extractive"
UPDATE_MIN_JACCARD = 0.9  # near-duplicates only: merging is the one lossy-looking action
UPDATE_MIN_COSINE = 0.95
JUDGE_MIN_F1 = 0.5


class ExtractiveRoles:
    """The `Roles` protocol with deterministic heuristics. Thread-safe: the only shared state
    is the usage meter and the embedding cache, both locked."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        label: str = "extractive",
        cache_items: int = DEFAULT_CACHE_ITEMS,
        date_phrasing: DatePhrasing | None = None,
    ) -> None:
        """`date_phrasing` rewords relative dates in summaries and answers; None keeps the
        general wording ("14 July 2023" for "last Friday"). It is a hook for callers that
        must match someone else's wording, such as the LoCoMo evaluation."""
        self.label = label
        self._phrasing = date_phrasing
        self._vectors = CachedEmbedder(embedder, max_items=cache_items)
        self._meter = UsageMeter()

    # --- accounting ------------------------------------------------------------------------

    def _result(self, role: Role, read: str, output: OutT, started: float) -> RoleResult[OutT]:
        usage = RoleUsage(
            calls=1,
            prompt_tokens=count_tokens(read),
            completion_tokens=count_tokens(output.model_dump_json()),
        )
        self._meter.record(role.value, usage)
        latency = (time.perf_counter() - started) * 1000
        log.debug("extractive.call", role=role.value, latency_ms=round(latency, 2))
        return role_result(
            output,
            role=role,
            usage=usage,
            prompt_version=PROMPT_VERSION,
            latency_ms=latency,
        )

    def cumulative_usage(self) -> dict[str, RoleUsage]:
        return self._meter.snapshot()

    def close(self) -> None:
        """Nothing to release but the embedding cache; the roles stay usable."""
        self._vectors.clear()

    # --- write path ------------------------------------------------------------------------

    def summarise(self, segments: list[SegmentInput]) -> RoleResult[SummariseOutput]:
        """Key-information sentences per segment (see extractive_summarise)."""
        started = time.perf_counter()
        output = SummariseOutput(segments=[summarise_segment(s, self._phrasing) for s in segments])
        read = "\n\n".join("\n".join(s.lines) for s in segments)
        return self._result(Role.SUMMARISE, read, output, started)

    # --- read path -------------------------------------------------------------------------

    def light_answer(
        self,
        question: str,
        context: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,  # unused: no model reads the question's own dates
    ) -> RoleResult[LightAnswerOutput]:
        """The best-supported item's answer; complete only when that item covers the
        question's content words (COMPLETE_MIN_COVERAGE), is semantically close
        (COMPLETE_MIN_COSINE) and yields an answer of the asked type."""
        started = time.perf_counter()
        candidates = [
            Candidate(text=item.text, source_id=item.id, time=item.time_start, order=i)
            for i, item in enumerate(context)
        ]
        candidates += [
            Candidate(text=p, source_id=f"pool:{j}", order=len(context) + j)
            for j, p in enumerate(pool)
            if p.strip()
        ]
        answer, complete = "", False
        if candidates:
            scores = score_candidates(question, candidates, self._vectors)
            i = best_index(scores, candidates)
            _, cos, cover = scores[i]
            answer = compose_answer(question, candidates, scores, phrasing=self._phrasing)
            complete = (
                cover >= COMPLETE_MIN_COVERAGE
                and cos >= COMPLETE_MIN_COSINE
                and answers_type(question, answer)
            )
        output = LightAnswerOutput(answer=answer, complete=complete)
        read = _render(question, [c.text for c in candidates])
        return self._result(Role.LIGHT_ANSWER, read, output, started)

    def select_events(
        self, question: str, candidates: list[ContextItem]
    ) -> RoleResult[SelectOutput]:
        """Candidates within SELECT_MARGIN of the best blended score: at least one, at most
        half the batch; ties keep the given order."""
        started = time.perf_counter()
        terms = question_terms(question)
        texts = [c.text for c in candidates]
        weights = term_weights(terms, texts)
        cosines = self._vectors.cosines(question, texts)
        scores = [
            blend(float(cos), coverage(terms, text, weights=weights))
            for text, cos in zip(texts, cosines, strict=True)
        ]
        chosen = select_within_margin(scores)
        output = SelectOutput(ids=[candidates[i].id for i in chosen])
        return self._result(
            Role.SELECT, _render(question, [c.text for c in candidates]), output, started
        )

    def deep_answer(
        self,
        question: str,
        passages: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,  # unused, as in light_answer
    ) -> RoleResult[DeepAnswerOutput]:
        """The best-supported sentence of the raw dialogue, cut to the span the question asks
        for; "when" questions get the line's date, relative dates resolved against it."""
        started = time.perf_counter()
        candidates: list[Candidate] = []
        for item in passages:
            for line in parse_lines(item.text):
                when = line.time or item.time_start
                for sentence in split_sentences(line.text):
                    if sentence.strip().endswith("?"):
                        continue  # a question in the dialogue does not answer one
                    candidates.append(
                        Candidate(sentence, item.id, when, line.speaker, len(candidates))
                    )
        for p in pool:
            if p.strip():
                candidates.append(Candidate(p, "pool", None, None, len(candidates)))
        answer = ""
        if candidates:
            scores = score_candidates(question, candidates, self._vectors)
            answer = compose_answer(question, candidates, scores, phrasing=self._phrasing)
        output = DeepAnswerOutput(answer=answer)
        read = _render(question, [p.text for p in passages] + list(pool))
        return self._result(Role.DEEP_ANSWER, read, output, started)

    def reflect(self, question: str, answer: str) -> RoleResult[ReflectOutput]:
        """Complete when the answer is non-empty, has the asked shape (a date for "when", a
        number for "how many") and adds something to the question (an answer made only of
        the question's own words restates it); otherwise a deterministic rewrite that puts
        the question's terms the answer left uncovered first."""
        started = time.perf_counter()
        terms = question_terms(question)
        adds = [t for t in content_stems(answer) if t not in set(terms)]
        complete = bool(answer.strip()) and answers_type(question, answer) and bool(adds)
        new_question = None
        if not complete:
            uncovered = missing_terms(terms, answer)
            new_question = _rewrite_question(question, uncovered)
        output = ReflectOutput(complete=complete, new_question=new_question)
        return self._result(Role.REFLECT, f"{question}\n{answer}", output, started)

    # --- sleep time ------------------------------------------------------------------------

    def update(self, target: ContextItem, newer: list[ContextItem]) -> RoleResult[UpdateOutput]:
        """Merge only exact or near-duplicates (normalised text equal, or token Jaccard >=
        UPDATE_MIN_JACCARD and cosine >= UPDATE_MIN_COSINE); the merged text keeps every
        content word of both. Never deletes: conflicts need judgement this backend lacks."""
        started = time.perf_counter()
        output = UpdateOutput(action="ignore", reason="no near-duplicate among newer items")
        candidates = [n for n in newer if n.id != target.id]
        if candidates:
            cosines = self._vectors.cosines(target.text, [n.text for n in candidates])
            for n, cos in zip(candidates, cosines, strict=True):
                same = normalise_answer(n.text) == normalise_answer(target.text)
                near = jaccard(n.text, target.text) >= UPDATE_MIN_JACCARD and cos >= (
                    UPDATE_MIN_COSINE
                )
                if same or near:
                    output = UpdateOutput(
                        action="update",
                        text=merge_texts(target.text, n.text),
                        evidence_id=n.id,
                        reason="exact duplicate" if same else "near-duplicate",
                    )
                    break
        read = _render(target.text, [n.text for n in newer])
        return self._result(Role.UPDATE, read, output, started)

    def judge(
        self, question: str, gold: str, generated: str, *, prompt: str = "judge"
    ) -> RoleResult[JudgeOutput]:
        """CORRECT when one normalised answer contains the other or token F1 >= JUDGE_MIN_F1.
        `prompt` is ignored: without a model there are no instructions to follow."""
        started = time.perf_counter()
        g, p = normalise_answer(gold), normalise_answer(generated)
        contained = bool(g and p) and (
            re.search(rf"\b{re.escape(g)}\b", p) is not None
            or re.search(rf"\b{re.escape(p)}\b", g) is not None
        )
        correct = contained or token_f1(generated, gold) >= JUDGE_MIN_F1
        output = JudgeOutput(label="CORRECT" if correct else "WRONG")
        return self._result(Role.JUDGE, f"{question}\n{gold}\n{generated}", output, started)


def merge_texts(older: str, newer: str) -> str:
    """The newer wording, plus any content word only the older one had (never drop a fact)."""
    newer_words = {w.lower() for w in words(newer)}
    newer_stems = set(content_stems(newer))
    missing = [
        w
        for w in dict.fromkeys(words(older))
        if not is_stopword(w) and w.lower() not in newer_words and stem(w) not in newer_stems
    ]
    if not missing:
        return newer
    return f"{newer.rstrip().rstrip('.')} ({' '.join(missing)})."


def _rewrite_question(question: str, uncovered: list[str]) -> str:
    """A retrieval-oriented rewrite: the question's content words, uncovered ones first."""
    terms = set(question_terms(question))  # once: per word it made ask() quadratic
    content = [w for w in words(question) if stem(w) in terms]
    stressed = [w for w in content if stem(w) in set(uncovered)]
    rest = [w for w in content if w not in stressed]
    rewrite = " ".join([*stressed, *rest]).strip()
    if not rewrite or normalise_answer(rewrite) == normalise_answer(question):
        rewrite = f"{question.strip()} details"
    return rewrite


def _render(question: str, texts: list[str]) -> str:
    """What a model would have read: the question and each item on its own line."""
    return question + "\n" + "\n".join(texts)


__all__: list[str] = ["ExtractiveRoles", "merge_texts"]
