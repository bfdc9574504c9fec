"""Prompt templates as files, rendered strictly at call time.

Each `<name>.md` file in this package is one template:

    ---
    version: 3
    ---
    === system ===
    ...text with $variables...
    === user ===
    ...text with $variables...

Rendering uses `string.Template` semantics: `$name` / `${name}` are substituted once and the
substituted values are never re-scanned, so braces, quotes, `$` and prompt-like text in user data
are inserted verbatim. A literal dollar in the template itself is written `$$`. Rendering is
strict: a missing or an unknown variable raises ConfigError, so a prompt and its caller cannot
drift apart silently. Nothing here is evaluated at import time (no dates baked in).
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from importlib import resources

from hymem.core.errors import ConfigError

_SECTION = re.compile(r"^=== (system|user) ===[ \t]*$", re.MULTILINE)
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class PromptTemplate:
    """One parsed prompt file: its name, version and the system and user templates."""

    name: str
    version: int
    system: str
    user: str

    @property
    def label(self) -> str:
        """`name@version`, recorded on every result and trace."""
        return f"{self.name}@{self.version}"

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(
            string.Template(self.system).get_identifiers()
            + string.Template(self.user).get_identifiers()
        )

    def render(self, **variables: object) -> list[dict[str, str]]:
        """Chat messages with every variable substituted; ConfigError on a missing/unknown one."""
        missing = self.variables - variables.keys()
        unknown = variables.keys() - self.variables
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"missing {sorted(missing)}")
            if unknown:
                parts.append(f"unknown {sorted(unknown)}")
            raise ConfigError(f"prompt {self.label}: " + ", ".join(parts))
        values = {k: v if isinstance(v, str) else str(v) for k, v in variables.items()}
        messages = []
        for role, text in (("system", self.system), ("user", self.user)):
            try:
                content = string.Template(text).substitute(values)
            except ValueError as exc:  # a malformed placeholder in the template file itself
                raise ConfigError(f"prompt {self.label}: {exc}") from exc
            if content.strip():
                messages.append({"role": role, "content": content})
        return messages


def parse_prompt(name: str, text: str) -> PromptTemplate:
    """Parse one template file's text (front matter, then system and user sections)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ConfigError(f"prompt {name!r}: missing front-matter header")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ConfigError(f"prompt {name!r}: unterminated front-matter header") from None
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        if ":" in line:
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip()
    try:
        version = int(meta["version"])
    except (KeyError, ValueError):
        raise ConfigError(f"prompt {name!r}: front matter needs an integer 'version'") from None
    body = "".join(lines[end + 1 :])
    pieces = _SECTION.split(body)
    # pieces: [preamble, "system", text, "user", text]
    sections = {pieces[i]: pieces[i + 1].strip("\n") for i in range(1, len(pieces) - 1, 2)}
    if "user" not in sections:
        raise ConfigError(f"prompt {name!r}: no '=== user ===' section")
    template = PromptTemplate(
        name=name, version=version, system=sections.get("system", ""), user=sections["user"]
    )
    try:
        _ = template.variables
        for part in (template.system, template.user):
            if not string.Template(part).is_valid():
                raise ConfigError(f"prompt {name!r}: invalid $placeholder (write $$ for '$')")
    except ValueError as exc:
        raise ConfigError(f"prompt {name!r}: {exc}") from exc
    return template


@functools.cache
def load_prompt(name: str) -> PromptTemplate:
    """The packaged template `<name>.md`; ConfigError if there is none."""
    if not _NAME.match(name):
        raise ConfigError(f"invalid prompt name {name!r}")
    resource = resources.files(__name__).joinpath(f"{name}.md")
    try:
        text = resource.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        raise ConfigError(f"no prompt named {name!r}") from None
    return parse_prompt(name, text)


__all__ = ["PromptTemplate", "load_prompt", "parse_prompt"]
