"""llama.cpp against transformers' own GGUF loading, on the same GGUF file and the same prompt.

Why: `hymem[local]` needs a runtime for GGUF models. llama-cpp-python builds from source (minutes
of CI time); transformers is already installed and can load a GGUF file itself (dequantised to
float32, no native build). This prints, for each, the load time, prompt and generation speed on
one summarise prompt, and whether its reply parsed, with the ratio to llama.cpp beside it.

    python benchmarks/local_runtimes.py [--model PATH] [--threads 1] [--new-tokens 64]

transformers' loader needs the `gguf` package (`pip install gguf`); it is skipped without it.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from hymem.llm import reply_schema
from hymem.llm.formatting import format_segments
from hymem.llm.providers.gguf_models import DEFAULT_LOCAL_MODEL
from hymem.llm.roles import SegmentInput, SummariseOutput
from hymem.llm.structured import InvalidReply, parse_reply
from hymem.prompts import load_prompt

LINES = [
    "[2023-05-08 13:56] Caroline: I went to the LGBTQ support group yesterday and it was powerful.",
    "[2023-05-08 13:57] Melanie: That's great! I painted a sunrise over the lake last week.",
    "[2023-05-08 13:58] Caroline: I'm thinking about studying counseling next year.",
    "[2023-05-08 13:59] Melanie: My kids and I are going camping in June.",
]


def _messages() -> tuple[list[dict[str, str]], dict[str, Any]]:
    segs = [
        SegmentInput(segment_id="seg-1", lines=LINES, session_time=datetime(2023, 5, 8, 13, 56))
    ]
    msgs = load_prompt("summarise").render(segments=format_segments(segs))
    return msgs, reply_schema.summarise_schema(SummariseOutput, segs)


def _parsed(text: str) -> bool:
    try:
        parse_reply(text, SummariseOutput)
    except InvalidReply:
        return False
    return True


def run_llamacpp(path: Path, threads: int, new_tokens: int) -> dict[str, Any]:
    from hymem.llm.providers.llamacpp import LlamaCppBackend

    msgs, schema = _messages()
    backend = LlamaCppBackend(f"gguf:{path}", threads=threads, context_tokens=4096)
    started = time.perf_counter()
    backend.count_tokens("load")
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    c = backend.complete(
        msgs,
        role="summarise",
        json_mode=True,
        max_tokens=new_tokens,
        temperature=0.0,
        timeout_s=600,
        json_schema=schema,
    )
    total = time.perf_counter() - started
    backend.close()
    return {
        "load_s": load_s,
        "seconds": total,
        "prompt_tokens": c.prompt_tokens,
        "new_tokens": c.completion_tokens,
        "parsed": _parsed(c.text),
    }


def run_transformers(path: Path, threads: int, new_tokens: int) -> dict[str, Any] | None:
    try:
        import gguf  # noqa: F401  (transformers' GGUF loader needs it)
    except ImportError:
        return None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    msgs, _ = _messages()
    started = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    lm = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    load_s = time.perf_counter() - started
    prompt = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    enc = tok(prompt, return_tensors="pt", add_special_tokens=False)
    started = time.perf_counter()
    with torch.inference_mode():
        out = lm.generate(**enc, do_sample=False, max_new_tokens=new_tokens)
    total = time.perf_counter() - started
    n_prompt = int(enc["input_ids"].shape[1])
    text = tok.decode(out[0][n_prompt:], skip_special_tokens=True)
    return {
        "load_s": load_s,
        "seconds": total,
        "prompt_tokens": n_prompt,
        "new_tokens": int(out.shape[1]) - n_prompt,
        "parsed": _parsed(text),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: local)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--new-tokens", type=int, default=64)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = args.model or DEFAULT_LOCAL_MODEL.path()
    print(f"model {path.name}, {args.threads} thread(s), up to {args.new_tokens} new tokens")
    base = run_llamacpp(path, args.threads, args.new_tokens)
    rows = [
        ("llama.cpp (grammar)", base),
        ("transformers GGUF", run_transformers(path, args.threads, args.new_tokens)),
    ]
    print(f"{'runtime':22} {'load s':>8} {'call s':>8} {'tok/s':>7} {'x llama.cpp':>11}  parsed")
    for name, r in rows:
        if r is None:
            print(f"{name:22} skipped: pip install gguf")
            continue
        speed = (r["prompt_tokens"] + r["new_tokens"]) / r["seconds"]
        ratio = r["seconds"] / base["seconds"]
        times = f"{r['load_s']:8.1f} {r['seconds']:8.1f} {speed:7.0f} {ratio:10.2f}x"
        print(f"{name:22} {times}  {r['parsed']}")


if __name__ == "__main__":
    main()
