"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

    server = ScriptedLLMServer().start()
    server.add_rule(role="light_answer", reply={"answer": "Paris", "complete": True})
    server.add_rule(role="select", fault="429", retry_after=0.1, times=1)
    ... point the real `openai` client at server.base_url ...
    server.requests  -> [(role, body), ...]

Rules are tried in insertion order; a rule matches when its `role` equals the request's
`X-Hymem-Role` header (None matches any) and its `match` substring occurs in the request's
message contents; a rule with `times` is skipped once exhausted. No matching rule answers 500
with a message naming the role, so a missing script is obvious in the failure. A rule with
`tool_call={"name": ..., "arguments": {...}}` answers with that function call (finish_reason
"tool_calls"), as a model driving an agent's tools does.

Faults: "429" (Retry-After header when `retry_after` is given), "500", "401", "400" (a str
`reply` becomes the error message), "drop" (close the socket without answering), "malformed"
(content that is not JSON), "empty" (whitespace content), "slow" (wait `delay_s`, default 30 s,
then answer). `delay_s` on any rule delays its answer; `max_in_flight` records the most
requests handled at once.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | dict[str, Any] | Callable[[dict[str, Any]], str | dict[str, Any]]
FAULTS = frozenset({"429", "500", "401", "400", "drop", "malformed", "slow", "empty"})


@dataclass
class Rule:
    role: str | None = None
    match: str | None = None
    reply: Reply | None = None
    times: int | None = None
    delay_s: float = 0.0
    fault: str | None = None
    retry_after: float | None = None
    usage: dict[str, int] | str | None = None  # explicit usage, or "omit" to send none
    tool_call: dict[str, Any] | None = None  # {"name": ..., "arguments": {...}}: call a tool
    used: int = field(default=0)

    def matches(self, role: str | None, text: str) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        if self.role is not None and self.role != role:
            return False
        return self.match is None or self.match in text


def _messages_text(body: dict[str, Any]) -> str:
    parts = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


class ScriptedLLMServer:
    """The server; `start()` runs it in a daemon thread, `stop()` shuts it down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[Rule] = []
        self._stopping = threading.Event()
        self.requests: list[tuple[str | None, dict[str, Any]]] = []
        self.reported_usage: list[dict[str, int]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- script ----------------------------------------------------------------------------
    def add_rule(
        self,
        role: str | None = None,
        match: str | None = None,
        reply: Reply | None = None,
        times: int | None = None,
        delay_s: float = 0.0,
        fault: str | None = None,
        retry_after: float | None = None,
        usage: dict[str, int] | str | None = None,
        tool_call: dict[str, Any] | None = None,
    ) -> Rule:
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; use one of {sorted(FAULTS)}")
        if fault is None and reply is None and tool_call is None:
            raise ValueError("a rule needs a reply, a tool call or a fault")
        rule = Rule(role, match, reply, times, delay_s, fault, retry_after, usage, tool_call)
        with self._lock:
            self._rules.append(rule)
        return rule

    def reset(self) -> None:
        """Forget every rule, request and counter (the server keeps running)."""
        with self._lock:
            self._rules.clear()
            self.requests.clear()
            self.reported_usage.clear()
            self.max_in_flight = 0

    def requests_for(self, role: str) -> list[dict[str, Any]]:
        with self._lock:
            return [body for r, body in self.requests if r == role]

    def usage_totals(self) -> dict[str, int]:
        with self._lock:
            return {
                "prompt_tokens": sum(u["prompt_tokens"] for u in self.reported_usage),
                "completion_tokens": sum(u["completion_tokens"] for u in self.reported_usage),
            }

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedLLMServer:
        server = self

        class Handler(_Handler):
            owner = server

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True, name="llm-srv"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # frees handlers sleeping on "slow" rules
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- request handling ------------------------------------------------------------------
    def _pick(self, role: str | None, body: dict[str, Any]) -> Rule | None:
        text = _messages_text(body)
        with self._lock:
            self.requests.append((role, body))
            for rule in self._rules:
                if rule.matches(role, text):
                    rule.used += 1
                    return rule
        return None

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _record_usage(self, usage: dict[str, int]) -> None:
        with self._lock:
            self.reported_usage.append(usage)


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedLLMServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_error(404, f"no route {self.path}")
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_error(400, "request body is not JSON")
            return
        role = self.headers.get("X-Hymem-Role")
        srv = self.owner
        srv._enter()
        try:
            rule = srv._pick(role, body)
            if rule is None:
                self._send_error(500, f"scripted server: no rule matches role={role!r}")
                return
            self._answer(rule, body)
        finally:
            srv._leave()

    def _answer(self, rule: Rule, body: dict[str, Any]) -> None:
        srv = self.owner
        delay = rule.delay_s if rule.delay_s or rule.fault != "slow" else 30.0
        srv._wait(delay)
        fault = rule.fault
        if fault == "drop":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault in ("429", "500", "401", "400"):
            status = int(fault)
            headers = {}
            if fault == "429" and rule.retry_after is not None:
                headers["Retry-After"] = f"{rule.retry_after:g}"
            message = rule.reply if isinstance(rule.reply, str) else f"scripted {fault}"
            self._send_error(status, message, headers)
            return
        if fault == "malformed":
            content = 'Sure! Here is the answer: {"answer": unquoted, oops'
        elif fault == "empty":
            content = "  \n "
        elif rule.tool_call is not None:
            content = ""
        else:
            reply = rule.reply(body) if callable(rule.reply) else rule.reply
            content = reply if isinstance(reply, str) else json.dumps(reply)
        self._send_completion(rule, body, content)

    def _send_completion(self, rule: Rule, body: dict[str, Any], content: str) -> None:
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
        if rule.tool_call is not None:
            call = {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {
                    "name": rule.tool_call["name"],
                    "arguments": json.dumps(rule.tool_call.get("arguments", {})),
                },
            }
            choice = payload["choices"][0]
            choice["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
            choice["finish_reason"] = "tool_calls"
        if rule.usage != "omit":
            if isinstance(rule.usage, dict):
                usage = dict(rule.usage)
            else:
                usage = {
                    "prompt_tokens": len(_messages_text(body).split()),
                    "completion_tokens": len(content.split()),
                }
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            payload["usage"] = usage
            self.owner._record_usage(usage)
        self._send_json(200, payload)

    def _send_error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        payload = {"error": {"message": message, "type": "scripted_error", "code": status}}
        self._send_json(status, payload, headers)

    def _send_json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (deadline); nothing to tell it
