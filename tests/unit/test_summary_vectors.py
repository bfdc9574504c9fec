"""Summary vectors pooled from their turn's token vectors: the pure span logic, the
extractive summariser's sources, and when the write path falls back to embedding the text."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest
from hymem.core.types import SummaryRecord
from hymem.embed.embedders import HashingEmbedder, TokenEmbedder, TokenVectors
from hymem.llm.checks import check_summarise
from hymem.llm.extractive.summarise import summarise_segment
from hymem.llm.roles import FactSource, SegmentInput, SegmentSummary, SummariseOutput
from hymem.write.spans import added_words, locate, pooled_summary_vector, span_rows
from hymem.write.summary_vectors import TOKEN_CACHE_ITEMS, SummarySource, SummaryVectors

from tests.doubles_retrieval import WordTokens


def _tokens(spans: list[tuple[int, int]], dim: int = 4) -> TokenVectors:
    vecs = np.eye(len(spans), dim, dtype=np.float16)
    return TokenVectors(vecs, np.asarray(spans, np.int32).reshape(-1, 2))


def test_locate_finds_verbatim_sentences_only() -> None:
    text = "Hey! I went to a support group yesterday. It was great."
    assert locate(text, "I went to a support group yesterday.") == (5, 41)
    assert locate(text, "  It was great.  ") == (42, 55)
    assert locate(text, "Caroline went to a support group on 7 May 2023.") is None
    assert locate(text, "   ") is None


def test_added_words_are_what_the_rewrite_brought() -> None:
    source = "I went to a support group yesterday."
    fact = "Caroline went to a support group on 7 May 2023."
    assert added_words(fact, source) == "Caroline on 7 May 2023"
    assert added_words(source, source) == ""
    assert added_words("Caroline, caroline: CAROLINE", "") == "Caroline"


def test_span_rows_and_pooling() -> None:
    tokens = _tokens([(0, 3), (4, 8), (9, 12)])
    assert span_rows(tokens, 4, 12).shape[0] == 2
    assert span_rows(tokens, 3, 4).shape[0] == 0  # the gap between two tokens
    vec = pooled_summary_vector(tokens, (4, 12), None)
    assert vec is not None
    np.testing.assert_allclose(vec, np.array([0, 1, 1, 0]) / np.sqrt(2), atol=1e-3)
    extra = _tokens([(0, 1)])
    with_name = pooled_summary_vector(tokens, (4, 8), extra)
    assert with_name is not None
    np.testing.assert_allclose(with_name, np.array([1, 1, 0, 0]) / np.sqrt(2), atol=1e-3)
    # a sentence past the model's input limit has no token vectors: no pooled vector
    assert pooled_summary_vector(tokens, (50, 60), extra) is None


def test_extractive_facts_name_their_line_and_verbatim_sentence() -> None:
    lines = [
        "[2023-05-08 13:56] Caroline: Hey Mel! Good to see you!",
        "[2023-05-08 13:58] Caroline: I went to a LGBTQ support group yesterday and it was "
        "powerful. [shares a photo of a rainbow flag]",
        "",
        "[2023-05-08 13:59] Melanie: Wow, cool! I painted a lake sunrise last year.",
    ]
    out = summarise_segment(SegmentInput(segment_id="s", lines=lines))
    assert out.texts and set(out.sources) == set(out.texts)
    for fact, src in out.sources.items():
        assert src.text in lines[src.line], (fact, src)
    went = next(f for f in out.texts if "support group" in f)
    assert out.sources[went] == FactSource(
        line=1, text="I went to a LGBTQ support group yesterday and it was powerful."
    )
    flag = next(f for f in out.texts if "rainbow flag" in f)
    assert out.sources[flag].text == "[shares a photo of a rainbow flag]"
    assert out.sources[next(f for f in out.texts if "lake" in f)].line == 3


def test_sources_are_never_asked_of_or_taken_from_a_model() -> None:
    assert "sources" not in SegmentSummary.model_json_schema()["properties"]
    reply = SummariseOutput.model_validate(
        {
            "segments": [
                {
                    "segment_id": "s",
                    "facts": ["A fact."],
                    "sources": {"A fact.": {"line": 0, "text": "chosen by a model"}},
                }
            ]
        }
    )
    checked = check_summarise(reply, [SegmentInput(segment_id="s", lines=["x"])], [])
    assert checked.segments[0].sources == {}
    assert "sources" not in checked.model_dump()["segments"][0]


def _summary(rec_id: str, text: str) -> SummaryRecord:
    now = datetime(2024, 1, 1)
    return SummaryRecord(
        id=rec_id, user_id="u", segment_id="seg", text=text, created_at=now, updated_at=now
    )


TURN = "I went to a support group yesterday. It was great."


def test_pooled_where_the_source_is_found_and_embedded_otherwise() -> None:
    emb = WordTokens()
    assert isinstance(emb, TokenEmbedder)
    vectors = SummaryVectors(emb)
    vectors.embed_turns([("u", "t1")], [TURN])
    pooled = _summary("a", "Caroline went to a support group on 7 May 2023.")
    reworded = _summary("b", "Caroline attends a support group.")
    gone = _summary("c", "It was great.")
    sources = {
        "a": SummarySource(("u", "t1"), TURN, "I went to a support group yesterday."),
        "b": SummarySource(("u", "t1"), TURN, "Not in the turn."),
        "c": SummarySource(("u", "t-unknown"), TURN, "It was great."),  # no token vectors
    }
    vectors.assign([pooled, reworded, gone], sources)
    assert (vectors.pooled, vectors.embedded) == (1, 2)
    expected = emb.embed_with_tokens(["I went to a support group yesterday Caroline on 7 May 2023"])
    np.testing.assert_allclose(pooled.vector, expected[0][0], atol=2e-3)
    np.testing.assert_allclose(reworded.vector, emb.embed([reworded.text])[0], atol=1e-6)
    np.testing.assert_allclose(gone.vector, emb.embed([gone.text])[0], atol=1e-6)
    # the added words were embedded once, and are remembered for the next commit
    phrase_calls = [c for c in emb.calls if c == ["Caroline on 7 May 2023"]]
    assert len(phrase_calls) == 1


def test_committed_turns_drop_their_token_vectors() -> None:
    vectors = SummaryVectors(WordTokens())
    vectors.embed_turns([("u", "t1")], [TURN])
    vectors.forget([("u", "t1")])
    rec = _summary("a", "It was great.")
    vectors.assign([rec], {"a": SummarySource(("u", "t1"), TURN, "It was great.")})
    assert (vectors.pooled, vectors.embedded) == (0, 1)


def test_token_cache_is_bounded() -> None:
    vectors = SummaryVectors(WordTokens())
    keys = [("u", f"t{i}") for i in range(TOKEN_CACHE_ITEMS)]
    vectors.embed_turns(keys, ["word"] * len(keys))
    vectors.embed_turns([("u", "late")], ["word"])
    assert len(vectors._tokens) == 1


@pytest.mark.parametrize("embedder", [HashingEmbedder(64), WordTokens()])
def test_pooling_off_or_unavailable_embeds_every_summary(embedder: HashingEmbedder) -> None:
    vectors = SummaryVectors(embedder, pool=not isinstance(embedder, WordTokens))
    vectors.embed_turns([("u", "t1")], [TURN])
    rec = _summary("a", "It was great.")
    vectors.assign([rec], {"a": SummarySource(("u", "t1"), TURN, "It was great.")})
    assert (vectors.pooled, vectors.embedded) == (0, 1)
    np.testing.assert_allclose(rec.vector, embedder.embed([rec.text])[0], atol=1e-6)
