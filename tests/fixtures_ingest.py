"""Fixtures for the ingest tests: in-memory twins of the store and the roles an Ingestor is built
with, so the write path's logic is unit-tested without disk or models; plus helpers shared with
the integration tests (the LoCoMo fixture path, a tiny LLMLingua-2 model builder)."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hymem.config import MemoryConfig
from hymem.embedders import HashingEmbedder
from hymem.errors import LLMUnavailable
from hymem.llm.roles import Role, RoleResult, SegmentInput, SegmentSummary, SummariseOutput
from hymem.types import RoleUsage, SegmentRecord, SummaryRecord, TurnRecord, TurnStatus
from hymem.write.ingestor import Ingestor

LOCOMO_MINI = Path(__file__).parent / "data" / "locomo_mini.json"


class FakeStore:
    """The slice of `Store` the write path uses, kept in dicts; counts every call."""

    def __init__(self) -> None:
        self.turns: dict[tuple[str, str], TurnRecord] = {}
        self.segments: dict[str, SegmentRecord] = {}
        self.summaries: dict[str, SummaryRecord] = {}
        self._by_segment: dict[str, set[str]] = {}
        self.append_calls: list[int] = []
        self.commit_calls = 0
        self.fail_commit: Exception | None = None

    def append_turns(self, turns: Sequence[TurnRecord]) -> list[str]:
        self.append_calls.append(len(turns))
        new = []
        for t in turns:
            if (t.user_id, t.id) not in self.turns:
                self.turns[(t.user_id, t.id)] = t.model_copy()
                new.append(t.id)
        return new

    def get_turns(
        self, user_id: str, *, ids: Sequence[str] | None = None, status: TurnStatus | None = None
    ) -> list[TurnRecord]:
        rows = [
            t
            for (u, _), t in self.turns.items()
            if u == user_id
            and (status is None or t.status == status)
            and (ids is None or t.id in ids)
        ]
        return sorted((r.model_copy() for r in rows), key=lambda t: t.seq)

    def next_seq(self, user_id: str) -> int:
        return 1 + max((t.seq for (u, _), t in self.turns.items() if u == user_id), default=-1)

    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
    ) -> None:
        if self.fail_commit is not None:
            raise self.fail_commit
        self.commit_calls += 1
        for seg in segments:
            assert seg.vector is not None
            for sid in self._by_segment.pop(seg.id, set()):
                del self.summaries[sid]
            self.segments[seg.id] = seg
        for s in summaries:
            assert s.vector is not None
            self.summaries[s.id] = s
            self._by_segment.setdefault(s.segment_id, set()).add(s.id)
        covering = {tid: seg.id for seg in reversed(segments) for tid in seg.turn_ids}
        for tid in stored_turn_ids:
            turn = self.turns[(user_id, tid)]
            turn.status = TurnStatus.STORED
            turn.segment_id = covering[tid]


class FakeRoles:
    """Summarise only: one fact per segment line, or a scripted failure; records each call."""

    label = "fake"

    def __init__(self) -> None:
        self.calls: list[list[SegmentInput]] = []
        self.failures = 0  # the next N calls raise LLMUnavailable

    def summarise(self, segments: list[SegmentInput]) -> RoleResult[SummariseOutput]:
        self.calls.append(segments)
        if self.failures:
            self.failures -= 1
            raise LLMUnavailable("scripted outage", role="summarise", status_code=500)
        out = [
            SegmentSummary(segment_id=s.segment_id, facts=[ln.split("] ", 1)[-1] for ln in s.lines])
            for s in segments
        ]
        tokens = sum(len(ln.split()) for s in segments for ln in s.lines)
        return RoleResult(
            role=Role.SUMMARISE,
            output=SummariseOutput(segments=out),
            usage=RoleUsage(calls=1, prompt_tokens=tokens, completion_tokens=tokens),
        )

    def close(self) -> None:
        pass


class WriteFakes:
    """What an Ingestor is built with (store, embedder, roles, config), kept for inspection."""

    def __init__(self, **config: Any) -> None:
        self.config = MemoryConfig.defaults(embedder="hashing", **config)
        self.store = FakeStore()
        self.embedder = HashingEmbedder(64)
        self.roles = FakeRoles()

    def ingestor(self) -> Ingestor:
        return Ingestor(self.store, self.embedder, lambda: self.roles, self.config)


def build_tiny_llmlingua(folder: Path) -> Path:
    """A randomly initialised 4-layer BERT token classifier with a small WordPiece vocabulary,
    saved under a name llmlingua recognises (it picks tokenisation rules by name)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import BertConfig, BertForTokenClassification, BertTokenizerFast

    words = re.findall(
        r"\w+",
        "the a i you we he she it to and of in on at is was went go support group yesterday "
        "hey good see how have been kids work painting lake camping beach pottery bowl",
    )
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = list(string.ascii_letters + string.digits + string.punctuation)
    vocab = specials + pieces + ["##" + c for c in string.ascii_letters + string.digits] + words
    ids = {w: i for i, w in enumerate(dict.fromkeys(vocab))}
    tok = Tokenizer(models.WordPiece(ids, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    tok.decoder = decoders.WordPiece()
    fast = BertTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        do_lower_case=False,
    )
    cfg = BertConfig(
        vocab_size=len(ids),
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=2,
    )
    torch.manual_seed(0)
    path = folder / "tiny-bert-base-multilingual-cased"
    BertForTokenClassification(cfg).save_pretrained(path)
    fast.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_llmlingua(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llmlingua(tmp_path_factory.mktemp("llmlingua"))
