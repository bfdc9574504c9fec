"""Fixtures for the ingest tests: what an Ingestor is built with, in memory (the real
`InMemoryStore`, recording its calls, and `ScriptedRoles` from tests/doubles.py), so the write
path's logic is unit-tested without disk or models; plus helpers shared with the integration
tests (the LoCoMo fixture path, a tiny LLMLingua-2 model builder)."""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any

import pytest
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.write.ingestor import Ingestor

from tests.doubles import ScriptedRoles
from tests.fixtures_store import RecordingStore

LOCOMO_MINI = Path(__file__).parent / "data" / "locomo_mini.json"


class WriteFakes:
    """What an Ingestor is built with (store, embedder, roles, config), kept for inspection."""

    def __init__(self, **config: Any) -> None:
        self.config = MemoryConfig.defaults(embedder="hashing", **config)
        self.embedder = HashingEmbedder(64)
        self.store = RecordingStore(self.embedder.dim, embedder_name=self.embedder.name)
        self.roles = ScriptedRoles()

    def ingestor(self) -> Ingestor:
        return Ingestor(self.store, self.embedder, lambda: self.roles, self.config)


SEGMENT = re.compile(r'<segment id="([^"]+)"')


def summarise_reply(body: dict[str, Any]) -> dict[str, Any]:
    """One fact per segment, naming the segment, as a model would reply."""
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    ids = list(dict.fromkeys(SEGMENT.findall(text)))
    return {"segments": [{"segment_id": s, "facts": [f"fact about {s}"]} for s in ids]}


def turns(n: int, start: int = 0) -> list[dict[str, str]]:
    return [
        {"speaker": "Ann", "text": f"I adopted puppy number {i}", "id": f"t{i}"}
        for i in range(start, start + n)
    ]


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
