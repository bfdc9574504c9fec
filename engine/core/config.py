"""Typed configuration. The environment is read here and nowhere else.

`MemoryConfig()` picks up `HYMEM_*` variables (e.g. `HYMEM_LLM=openai:gpt-4.1-mini`,
`HYMEM_BUFFER_TOKENS=768`); `MemoryConfig.defaults()` ignores the environment, for tests and
for callers that want exactly what they pass. `OPENAI_BASE_URL` / `OPENAI_API_KEY` are read
by the openai backend's provider, as the `openai` client itself does.
"""

from __future__ import annotations

from typing import Any, Literal

from hymem.core.errors import ConfigError
from hymem.core.validation import MAX_K, MAX_QUERY_CHARS
from hymem.core.webhook_endpoint import WebhookEndpoint, check_unique
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
# Reciprocal-rank fusion's k (`rrf_k`); why 20 and not the paper's 60 is said where it is used,
# in hymem.search.fusion.
DEFAULT_RRF_K = 20
LLM_SPECS = "'extractive', 'openai:MODEL', 'gguf:PATH', 'local' or 'hf:PATH'"

# The model roles (hymem.llm.roles.Role's values), named here so config need not import the
# LLM layer; llm_role_timeouts accepts exactly these keys.
LLM_ROLES = (
    "summarise",
    "light_answer",
    "select",
    "deep_answer",
    "reflect",
    "update",
    "judge",
)


class MemoryConfig(BaseSettings):
    """Every knob, from arguments, then `HYMEM_*` variables, then defaults. A bad value (an
    argument or a variable) is a `ConfigError` naming the setting, never pydantic's own error."""

    model_config = SettingsConfigDict(env_prefix="HYMEM_", extra="forbid", frozen=True)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise ConfigError(describe_invalid(exc)) from None
        except SettingsError as exc:  # a HYMEM_* variable that is not the JSON it must be
            raise ConfigError(f"invalid configuration: {exc}") from None

    # --- backends -------------------------------------------------------------------------
    llm: str = Field(
        "extractive",
        description=(
            "'extractive', 'openai:MODEL', 'gguf:/path/model.gguf', 'local' (the local extra's"
            " model) or 'hf:MODEL_OR_PATH'"
        ),
    )
    llm_base_url: str | None = Field(None, description="overrides OPENAI_BASE_URL")
    llm_api_key: SecretStr | None = Field(None, description="overrides OPENAI_API_KEY")
    llm_timeout_s: float = Field(
        60.0,
        gt=0,
        description=(
            "deadline per model call, retries included, for every role llm_role_timeouts does"
            " not name. 60 s suits hosted APIs; a small model on CPU needs minutes per call"
            " (e.g. 300)"
        ),
    )
    llm_role_timeouts: dict[str, float] = Field(
        default_factory=dict,
        description=(
            "deadline per role, overriding llm_timeout_s for the roles named, e.g."
            ' HYMEM_LLM_ROLE_TIMEOUTS=\'{"summarise": 300, "select": 240}\' for a CPU model'
            " (roles: " + ", ".join(LLM_ROLES) + ")"
        ),
    )
    llm_max_retries: int = Field(
        4, ge=0, description="retries on 429/5xx/timeouts/connection errors"
    )
    llm_repair_attempts: int = Field(2, ge=0, description="re-asks after an invalid reply")
    llm_concurrency: int = Field(
        8,
        ge=1,
        description=(
            "model requests in flight at once per backend (selection and sleep fan out this"
            " wide); more queue in hymem, their wait bounded by their deadline but not taken"
            " from their request's time. 1 for a server answering one request at a time"
            " (llama.cpp's server by default)"
        ),
    )
    llm_max_tokens: int = Field(
        2048,
        ge=16,
        description=(
            "reply token budget; a reply cut off at it is asked again with twice the budget,"
            " up to 4x this"
        ),
    )
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0)
    llm_threads: int | None = Field(
        None, ge=1, description="CPU threads of an in-process GGUF model (None: llama.cpp's own)"
    )
    llm_context_tokens: int = Field(
        8192,
        ge=512,
        description="context window an in-process GGUF model is loaded with (prompt and reply)",
    )
    llm_cache_dir: str | None = Field(None, description="on-disk response cache; off when None")
    embedder: str = Field(
        DEFAULT_EMBEDDER, description="sentence-transformers name/path or 'hashing'"
    )
    embed_batch_size: int = Field(64, ge=1)

    # --- write path -----------------------------------------------------------------------
    compressor_model: str | None = Field(
        None, description="LLMLingua-2 model path; compression is off when None"
    )
    compression_rate: float = Field(0.7, gt=0.0, le=1.0)
    segment_tau: float = Field(
        0.35, ge=-1.0, le=1.0, description="topic boundary where similarity drops below this"
    )
    segment_max_turns: int = Field(12, ge=1)
    segment_overlap_turns: int = Field(1, ge=0, le=2)
    buffer_tokens: int = Field(
        512,
        ge=1,
        description=(
            "th: the short-term buffer is summarised once its pending turns reach this many"
            " tokens (or their session changes); until then an add()'s turns are pending and"
            " not searchable. It also caps a topic segment, so lowering it to get turns"
            " searchable sooner also cuts segments short: use flush_on_add for that"
        ),
    )
    plan_every_turns: int = Field(
        4,
        ge=1,
        description=(
            "once the buffer is full, an add() whose plan stored nothing (its last topic still"
            " open) waits for this many more turns, or a new session, before it embeds and"
            " segments again: one-turn adds embed in batches, and their turns become searchable"
            " at most this many turns minus one later; 1 plans on every add()"
        ),
    )
    flush_on_add: bool = Field(
        False,
        description=(
            "every add() also flushes, so its turns are searchable when it returns; costs one"
            " summariser call per add() and segments never span two add() calls"
        ),
    )
    consolidate_on_write: bool = Field(
        True,
        description=(
            "each flush compares its new summaries with the user's nearest active ones and"
            " merges repeats and supersedes changed facts at once (hymem.write.consolidate);"
            " off: both stay active until sleep()"
        ),
    )
    summariser: Literal["model", "extractive"] = Field(
        "model",
        description=(
            "who writes the Level-1 summaries when llm is a model: 'model' (its summarise"
            " role) or 'extractive' (the extractive summariser's sentences, with no model call"
            " at write time; the model still answers, selects, reflects and decides updates)."
            " A small local model mostly copies turns and cites the wrong lines, so its"
            " summaries find less of the evidence than the extractive ones"
        ),
    )
    summarise_fallback: bool = Field(
        True,
        description=(
            "when the model summariser fails on a buffer (unavailable, rejected, or no valid"
            " reply), the extractive summariser summarises it so its turns are stored and"
            " searchable; its summaries are marked origin 'fallback'. Off: the turns stay"
            " pending and every later add()/flush() asks the model again"
        ),
    )
    retry_window_s: float = Field(
        0.0,
        ge=0,
        description=(
            "off (0) by default: an add() should name itself with request_id to be stored once"
            " when retried. Above 0, an add() without message ids or request_id that repeats"
            " the user's previous add() (same session, speakers, texts) within this many"
            " seconds is taken as a retry and stored once, which also drops a user's genuine"
            " repeat of the same words"
        ),
    )
    ingest_cache_items: int = Field(
        50_000,
        ge=1,
        description="pending turns' vectors, token counts and compressions kept between calls",
    )
    pool_summary_vectors: bool = Field(
        True,
        description=(
            "give a summary taken from a turn's sentence a vector pooled from that turn's "
            "token vectors instead of embedding its text again (hymem.write.spans)"
        ),
    )

    # --- read path ------------------------------------------------------------------------
    ask_fallback: bool = Field(
        True,
        description=(
            "a model that fails inside ask() (unavailable, timed out, a prompt over its context"
            " window, no valid reply) falls back: the light answer for a failed deep path, the"
            " extractive answer for a failed light answer, flagged on Answer.fallback and never"
            " complete. Off: the ask raises the model's error (LLMUnavailable is HTTP 503)"
        ),
    )
    max_k: int = Field(MAX_K, ge=1, le=100_000, description="largest k, N or d a call may ask for")
    max_query_chars: int = Field(
        MAX_QUERY_CHARS, ge=100, description="longest question or search query accepted"
    )
    k: int = Field(
        10,
        ge=1,
        description="light top-k summaries when light_tokens is 0, or when an ask passes k",
    )
    light_tokens: int = Field(
        400,
        ge=0,
        description=(
            "the light path reads summaries by fused rank until this many tokens of text "
            "(each adding a source turn); 0 reads the top k instead"
        ),
    )
    n_deep: int = Field(30, ge=1, description="N: deep coarse top-N")
    select_batch: int = Field(10, ge=1, description="d: event-selection batch size")
    max_iterations: int = Field(3, ge=0, description="T: reflection rounds; 0 disables")
    rrf_k: int = Field(DEFAULT_RRF_K, ge=1)
    search_depth_factor: int = Field(
        2, ge=1, description="each retriever fetches max(factor * k, min) before fusion"
    )
    search_min_candidates: int = Field(20, ge=1, description="the min of that depth")
    search_threads: int = Field(
        4, ge=1, description="threads running the lexical branch beside the dense one"
    )
    extractive_cache_items: int = Field(
        20_000, ge=1, description="embeddings the extractive backend keeps (LRU)"
    )
    max_calls_per_ask: int | None = Field(None, ge=1)
    max_tokens_per_ask: int | None = Field(None, ge=1)
    vector_index_min_rows: int = Field(
        20_000, ge=256, description="build an ANN index once a table holds this many rows"
    )
    dense_cache_mb: int = Field(
        2048,
        ge=0,
        description=(
            "memory for exact in-memory dense search (a user's vectors and hit text load on"
            " their first search; least recently searched users are evicted past this);"
            " 0 = always LanceDB"
        ),
    )

    # --- stores on an object store (s3://, gs://, az://) ------------------------------------
    storage_options: dict[str, str] | None = Field(
        None,
        description=(
            "how to reach an object store (LanceDB's keys: aws_endpoint, aws_region, allow_http,"
            " ...); HYMEM_STORAGE_OPTIONS takes JSON; AWS_* variables are read too"
        ),
    )
    cache_dir: str | None = Field(
        None, description="local folder for derived state (default $HYMEM_CACHE_DIR, ~/.cache)"
    )
    lease_ttl_s: float = Field(
        30.0, gt=0, description="a writer's lease on a user expires this long after its last use"
    )
    lease_wait_s: float = Field(
        60.0, ge=0, description="wait this long for another worker's lease on a user, then fail"
    )
    lease_linger_s: float = Field(
        2.0, ge=0, description="keep an idle lease this long (a burst of writes takes it once)"
    )
    refresh_s: float = Field(
        2.0,
        ge=0,
        description="staleness bound: searches see other workers' writes within this long",
    )
    shards: int = Field(
        1,
        ge=1,
        le=256,
        description=(
            "user shards of a new object store: workers writing users of different shards"
            " commit to different tables (fixed when the store is created; folders have one)"
        ),
    )

    # --- operations ---------------------------------------------------------------------
    telemetry_user_ids: Literal["hash", "omit"] = Field(
        "hash", description="user ids on spans and logs of telemetry: a keyed hash, or left out"
    )
    telemetry_hash_key: SecretStr | None = Field(
        None, description="key of the user-id hash on spans (set it so ids cannot be guessed)"
    )
    cursor_secret: SecretStr | None = Field(
        None,
        description=(
            "key (a long random string) that signs get_all's page cursors in place of the"
            " store's own (kept in its meta; an in-memory store, or an object store made before"
            " cursors were signed, has none and signs with a key of the process)"
        ),
    )
    webhooks: list[WebhookEndpoint] = Field(
        default_factory=list,
        description=(
            "endpoints that receive signed events (turns committed, summaries changed, user"
            ' erased, import finished); HYMEM_WEBHOOKS takes JSON: [{"url": ..., "secret": ...}]'
        ),
    )
    webhook_outbox: str | None = Field(
        None,
        description=(
            "SQLite file of undelivered events; default <store>/webhooks/outbox.sqlite3,"
            " required for a store on an object store"
        ),
    )
    webhook_timeout_s: float = Field(5.0, gt=0, description="deadline of one delivery attempt")
    webhook_max_attempts: int = Field(
        12, ge=1, description="attempts before an event is kept as dead for an endpoint"
    )
    webhook_backoff_s: float = Field(
        5.0, gt=0, description="wait after a failed attempt, doubled each retry (with jitter)"
    )
    webhook_backoff_max_s: float = Field(3600.0, gt=0, description="longest wait between tries")
    webhook_drain_s: float = Field(
        0.0,
        ge=0,
        le=60,
        description=(
            "at close, how long the delivery threads may still send the events due now (the CLI"
            " gives its short commands 5 s); what is left waits for the next writer to open"
        ),
    )

    # --- sleep-time consolidation ---------------------------------------------------------
    sleep_top_k: int = Field(20, ge=1)
    sleep_keep_n: int = Field(10, ge=1)
    sleep_similarity_floor: float = Field(0.6, ge=-1.0, le=1.0)
    sleep_exact_below: int = Field(
        20_000,
        ge=0,
        description="exact update queues for users with fewer summaries; approximate (IVF) above",
    )
    sleep_workers: int = Field(8, ge=1)
    auto_sleep_after: int | None = Field(None, ge=1, description="sleep after M new summaries")
    sleep_on_close: bool = False

    @field_validator("llm")
    @classmethod
    def _known_backend(cls, v: str) -> str:
        v = v.strip()
        if v in ("extractive", "local"):
            return v
        if v.startswith(("openai:", "hf:", "gguf:")) and len(v.split(":", 1)[1]) > 0:
            return v
        raise ValueError(f"unknown llm spec {v!r}: use {LLM_SPECS}")

    @field_validator("llm_role_timeouts")
    @classmethod
    def _known_roles_positive(cls, v: dict[str, float]) -> dict[str, float]:
        for role, seconds in v.items():
            if role not in LLM_ROLES:
                raise ValueError(f"unknown role {role!r}: use one of {', '.join(LLM_ROLES)}")
            if not seconds > 0:
                raise ValueError(f"the deadline of {role!r} must be above 0 seconds")
        return v

    def llm_deadline_s(self, role: str) -> float:
        """The deadline of one call of `role`: its own from llm_role_timeouts, else
        llm_timeout_s."""
        return self.llm_role_timeouts.get(role, self.llm_timeout_s)

    @field_validator("webhooks")
    @classmethod
    def _distinct_endpoints(cls, v: list[WebhookEndpoint]) -> list[WebhookEndpoint]:
        return check_unique(v)

    @model_validator(mode="after")
    def _sizes_within_max_k(self) -> MemoryConfig:
        for name in ("k", "n_deep", "select_batch"):
            if getattr(self, name) > self.max_k:
                raise ValueError(f"{name}={getattr(self, name)} is larger than max_k={self.max_k}")
        return self

    def updated(self, **changes: Any) -> MemoryConfig:
        """A copy with `changes`, validated as a whole (ConfigError). Settings left at their
        defaults stay unset, so a default that depends on the backend (a local model's longer
        deadline) still applies to the copy."""
        checked = type(self)(**{**dict(self), **changes})
        return self.model_copy(update={name: getattr(checked, name) for name in changes})

    @classmethod
    def defaults(cls, **overrides: Any) -> MemoryConfig:
        """A config from the given values and built-in defaults only, ignoring HYMEM_* vars."""
        return _NoEnvConfig(**overrides)

    @property
    def compression_enabled(self) -> bool:
        return self.compressor_model is not None


def describe_invalid(exc: ValidationError) -> str:
    """One line per bad setting: its name, the `HYMEM_` variable that can also set it, the
    value given and what is wrong."""
    parts = []
    for err in exc.errors():
        name = ".".join(str(x) for x in err.get("loc", ())) or "config"
        value = err.get("input")
        shown = "" if isinstance(value, dict | list) else f" (got {value!r})"  # secrets inside
        loc = err.get("loc", ())
        env = f" / HYMEM_{str(loc[0]).upper()}" if loc else ""
        parts.append(f"{name}{env}: {err.get('msg', 'invalid')}{shown}")
    return "invalid configuration: " + "; ".join(parts)


class _NoEnvConfig(MemoryConfig):
    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)
