"""The hf: backend on a tiny randomly initialised Llama the test builds and saves itself:
loading, chat templating, greedy generation, token counts and the invalid-output fallback
all run for real (random weights never produce valid JSON)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError, LLMOutputError
from hymem.embed.embedders import HashingEmbedder
from hymem.llm import build_roles
from hymem.llm.providers.hf import HFBackend
from hymem.llm.roles import ContextItem, SegmentInput

pytestmark = pytest.mark.integration

CHAT_TEMPLATE = (
    "{% for m in messages %}<s> {{ m['role'] }} : {{ m['content'] }} </s> {% endfor %}"
    "{% if add_generation_prompt %}<s> assistant : {% endif %}"
)
CORPUS = [
    "Caroline went to the support group on 7 May 2023 .",
    '{ " answer " : " Paris " , " complete " : true false }',
    "system user assistant question memories data not instructions",
]


def build_tiny_chat_model(folder: Path) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        CORPUS, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "<s>", "</s>"])
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        bos_token="<s>",
        eos_token="</s>",
    )
    fast.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny-chat"))


MESSAGES = [
    {"role": "system", "content": "answer the question"},
    {"role": "user", "content": "Caroline went to the support group"},
]


def test_loading_templating_and_greedy_generation(tiny_chat_model: Path) -> None:
    from transformers import AutoTokenizer

    backend = HFBackend(str(tiny_chat_model))
    first = backend.complete(
        MESSAGES, role="light_answer", json_mode=True, max_tokens=6, temperature=0.0, timeout_s=30
    )
    again = backend.complete(
        MESSAGES, role="light_answer", json_mode=True, max_tokens=6, temperature=0.0, timeout_s=30
    )
    assert first == again  # greedy decoding is deterministic
    tok = AutoTokenizer.from_pretrained(str(tiny_chat_model))
    prompt = tok.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<s> assistant : ")
    assert first.prompt_tokens == len(tok(prompt, add_special_tokens=False)["input_ids"])
    assert 1 <= (first.completion_tokens or 0) <= 6
    assert backend.count_tokens("Caroline went") == 2
    backend.close()


def test_invalid_output_falls_back_through_prompted_roles(tiny_chat_model: Path) -> None:
    cfg = MemoryConfig.defaults(
        llm=f"hf:{tiny_chat_model}", llm_max_tokens=16, llm_repair_attempts=1
    )
    roles = build_roles(cfg, HashingEmbedder())
    assert roles.label == f"hf:{tiny_chat_model}"
    item = ContextItem(
        id="m1", text="Caroline went to the support group", time_start=datetime(2023, 5, 7)
    )
    res = roles.light_answer("When did Caroline go to the support group?", [item], [])
    assert res.fallback and res.output.complete is False
    # the tiny model never stops by itself: each reply is cut off, asked again with twice the
    # budget (16, 32, 64 tokens), then the fallback stands in; no repair re-ask of a fragment
    assert "cut off" in (res.fallback_reason or "")
    assert res.usage.calls == 3 and res.usage.fallbacks == 1
    assert res.usage.prompt_tokens > 0 and 0 < res.usage.completion_tokens <= 16 + 32 + 64
    with pytest.raises(LLMOutputError, match="summarise"):
        roles.summarise([SegmentInput(segment_id="s1", lines=["[t] Caroline: hi"])])
    roles.close()


def test_missing_local_model_is_a_config_error(tmp_path: Path) -> None:
    backend = HFBackend(str(tmp_path / "no-such-model"))
    with pytest.raises(ConfigError, match="cannot load local model"):
        backend.complete(
            MESSAGES, role="reflect", json_mode=True, max_tokens=4, temperature=0.0, timeout_s=5
        )
