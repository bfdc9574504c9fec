"""Fault-injecting OpenAI-compatible servers on 127.0.0.1 that behave like a small local model
server (llama.cpp's) where the scripted server in `tests/llm_server.py` does not:

* a reply cut off at the request's `max_tokens` (finish_reason "length"),
* a prompt over the context window (llama.cpp's, OpenAI's and vLLM's error bodies),
* one request at a time (a one-slot server): a request arriving while another is being
  answered is counted as overlapping and refused with a 503.

    server = FaultLLMServer(reply_tokens=1442, full_reply='{"segments": [...]}').start()
    ... point the real `openai` client at server.base_url ...
    server.seen -> [SeenRequest(role, max_tokens, messages), ...]

"Tokens" here are whitespace-separated words of the prompt; a reply's length in tokens is
`reply_tokens`, and a cut-off reply is the first `max_tokens / reply_tokens` of its characters.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Error bodies as the servers send them when a prompt does not fit the context window.
OVERFLOW_BODIES: dict[str, tuple[int, dict[str, Any]]] = {
    "llama.cpp": (
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 2741,
                "n_ctx": 2048,
            }
        },
    ),
    "llama.cpp-500": (
        500,
        {
            "error": {
                "code": 500,
                "message": "the request exceeds the available context size. try increasing the"
                " context size or enable context shift",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 2741,
                "n_ctx": 2048,
            }
        },
    ),
    "openai": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 2048 tokens. However, your"
                " messages resulted in 2741 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
    "vllm": (
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 2048 tokens. However, you"
            " requested 3765 tokens (2741 in the messages, 1024 in the completion). Please"
            " reduce the length of the messages or completion.",
            "type": "BadRequestError",
            "code": 400,
        },
    ),
}


@dataclass(frozen=True)
class SeenRequest:
    role: str | None
    max_tokens: int | None
    messages: list[dict[str, Any]]

    @property
    def prompt_tokens(self) -> int:
        return sum(len(str(m.get("content", "")).split()) for m in self.messages)


@dataclass
class FaultLLMServer:
    """One reply for every request, shaped by the faults configured.

    `full_reply` (text) needs `reply_tokens` tokens: under that budget it comes back cut off
    with finish_reason "length". With `n_ctx`, a request whose prompt plus `max_tokens` exceeds
    it is refused with `overflow` (a key of OVERFLOW_BODIES), as vLLM and llama.cpp do; with
    `overflow_always` every request is. `delay_s` is each answer's time; `one_at_a_time`
    refuses (503) a request arriving while another is answered, and counts it in `overlapped`.
    """

    full_reply: str = '{"complete": true}'
    reply_tokens: int = 1
    n_ctx: int | None = None
    overflow: str = "llama.cpp"
    overflow_always: bool = False
    delay_s: float = 0.0
    one_at_a_time: bool = False
    seen: list[SeenRequest] = field(default_factory=list)
    overlapped: int = 0
    max_in_flight: int = 0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FaultLLMServer:
        owner = self

        class Handler(_Handler):
            server_state = owner

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # --- what one request gets ---------------------------------------------------------------
    def _admit(self, seen: SeenRequest) -> bool:
        with self._lock:
            self.seen.append(seen)
            if self.one_at_a_time and self._in_flight > 0:
                self.overlapped += 1
                return False
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return True

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _overflows(self, seen: SeenRequest) -> bool:
        if self.overflow_always:
            return True
        if self.n_ctx is None:
            return False
        return seen.prompt_tokens + (seen.max_tokens or 0) > self.n_ctx

    def _reply(self, seen: SeenRequest) -> tuple[str, str, int]:
        """(content, finish_reason, completion tokens) for a request's budget."""
        budget = seen.max_tokens or self.reply_tokens
        if budget >= self.reply_tokens:
            return self.full_reply, "stop", self.reply_tokens
        cut = len(self.full_reply) * budget // self.reply_tokens
        return self.full_reply[:cut], "length", budget


class _Handler(BaseHTTPRequestHandler):
    server_state: FaultLLMServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        state = self.server_state
        seen = SeenRequest(
            self.headers.get("X-Hymem-Role"), body.get("max_tokens"), body.get("messages", [])
        )
        if not state._admit(seen):
            self._send(503, {"error": {"message": "busy: one request at a time", "code": 503}})
            return
        try:
            if state.delay_s:
                time.sleep(state.delay_s)
            if state._overflows(seen):
                status, payload = OVERFLOW_BODIES[state.overflow]
                self._send(status, payload)
                return
            content, finish, tokens = state._reply(seen)
            self._send(
                200,
                {
                    "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fault"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": finish,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": seen.prompt_tokens,
                        "completion_tokens": tokens,
                        "total_tokens": seen.prompt_tokens + tokens,
                    },
                },
            )
        finally:
            state._done()

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
