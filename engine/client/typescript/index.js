// A client for a hymem memory server (`hymem serve`), for Node 20+ and browsers: global fetch,
// no dependencies, no build step. Types are in index.d.ts. Each method is the Python client's
// (hymem.client.Client) under its camelCase name and calls the same REST route; arguments use
// the API's own field names (user_id, session_id, ...). An error answer becomes the error class
// the server raised (error.kind is its exact hymem class name), a transport failure
// ServerUnavailable, so callers catch hymem errors only.

export class HymemError extends Error {
  constructor(message, { kind = "HymemError", status = undefined } = {}) {
    super(message);
    this.name = this.constructor.name;
    this.kind = kind; // the server's class name, e.g. "NotFoundError", "StoreLockedError"
    this.status = status; // the HTTP status, where there was an answer
  }
}
export class UserInputError extends HymemError {}
export class NotFoundError extends UserInputError {}
export class ConfigError extends HymemError {}
export class StoreError extends HymemError {}
export class ServerUnavailable extends StoreError {}
export class AuthError extends HymemError {}
export class LLMError extends HymemError {}

// The server's class names, grouped by the class this client raises for them (like
// hymem.core.errors' tree; error.kind keeps the exact name).
const FAMILY = {
  UserInputError: UserInputError,
  InvalidMessageError: UserInputError,
  DatasetFormatError: UserInputError,
  RequestValidationError: UserInputError,
  PayloadTooLarge: UserInputError,
  NotFoundError: NotFoundError,
  ConfigError: ConfigError,
  StoreError: StoreError,
  StoreLockedError: StoreError,
  ReadOnlyStoreError: StoreError,
  SchemaVersionError: StoreError,
  EmbedderMismatchError: StoreError,
  StoreCorruptedError: StoreError,
  StoreClosedError: StoreError,
  StorageFullError: StoreError,
  StoreUnavailableError: StoreError,
  LeaseLostError: StoreError,
  CommitConflictError: StoreError,
  VersionConflictError: StoreError,
  ErasureInProgressError: StoreError,
  ServerUnavailable: ServerUnavailable,
  AuthError: AuthError,
  Unauthorized: AuthError,
  Forbidden: AuthError,
  LLMError: LLMError,
  LLMUnavailable: LLMError,
  LLMAuthError: LLMError,
  LLMRequestError: LLMError,
  LLMOutputError: LLMError,
};

const RETRIES = 3; // reads answered 503 (or unreachable) are retried; writes never are

// An id as one path segment, percent-encoded whole, so `team/alice` or `a?b` stays one id (the
// server matches ids as sent). fetch folds `.` and `..` out of a URL path, `%2E` included (WHATWG
// URL rules), so those two ids cannot reach a path route from here: they are refused, by add
// too, so this client never stores a user it could not then erase.
function segment(name, value) {
  if (typeof value !== "string" || !value.trim()) {
    throw new UserInputError(`${name} must be a non-empty string`, { kind: "UserInputError" });
  }
  pathSafe(name, value);
  return encodeURIComponent(value);
}

function pathSafe(name, value) {
  if (value === "." || value === "..") {
    throw new UserInputError(
      `${name} ${JSON.stringify(value)} cannot be sent as a URL path segment (fetch folds dot segments); use another id`,
      { kind: "UserInputError" },
    );
  }
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue;
    q.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  const text = q.toString();
  return text ? `?${text}` : "";
}

async function errorFrom(response, what) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const status = response.status;
  if (body && typeof body.error === "string" && typeof body.message === "string") {
    let message = body.message;
    if (Array.isArray(body.detail)) {
      message += ": " + body.detail.slice(0, 5).map((d) => `${(d.loc || []).join(".")}: ${d.msg}`).join("; ");
    }
    const Family = FAMILY[body.error] || HymemError;
    return new Family(message, { kind: body.error, status });
  }
  const text = `${what}: HTTP ${status}, not an answer of a hymem server (is baseUrl right?)`;
  if (status === 401 || status === 403) return new AuthError(text, { kind: "AuthError", status });
  if (status >= 502 && status <= 504) return new ServerUnavailable(text, { kind: "ServerUnavailable", status });
  return new HymemError(text, { status });
}

export class HymemClient {
  constructor({ baseUrl, apiKey = undefined, timeoutMs = 60000, fetch: fetchImpl = globalThis.fetch } = {}) {
    if (typeof baseUrl !== "string" || !/^https?:\/\//.test(baseUrl)) {
      throw new UserInputError("baseUrl must be an http(s) URL", { kind: "UserInputError" });
    }
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.timeoutMs = timeoutMs;
    this._fetch = fetchImpl;
    this._headers = { "content-type": "application/json" };
    if (apiKey) this._headers.authorization = `Bearer ${apiKey}`;
  }

  async _call(what, method, path, { body, read = false } = {}) {
    for (let attempt = 1; ; attempt++) {
      let response;
      try {
        response = await this._fetch(this.baseUrl + path, {
          method,
          headers: this._headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (exc) {
        if (read && attempt < RETRIES) continue;
        const reason = exc && exc.name === "TimeoutError" ? "no answer in time" : String(exc && exc.cause ? exc.cause.code || exc.cause : exc);
        throw new ServerUnavailable(`${what}: the memory server at ${this.baseUrl} is unreachable: ${reason}`, { kind: "ServerUnavailable" });
      }
      if (response.ok) return response.json();
      if (read && response.status === 503 && attempt < RETRIES) {
        const wait = Number(response.headers.get("retry-after")) || 0.5 * 2 ** (attempt - 1);
        await new Promise((r) => setTimeout(r, wait * 1000));
        continue;
      }
      throw await errorFrom(response, what);
    }
  }

  health() {
    return this._call("health()", "GET", "/healthz", { read: true });
  }
  add(messages, { user_id, session_id, timestamp, metadata, agent_id, run_id, request_id } = {}) {
    pathSafe("user_id", user_id);
    return this._call("add()", "POST", "/v1/memories", {
      body: { messages, user_id, session_id, timestamp, metadata, agent_id, run_id, request_id },
    });
  }
  flush({ user_id } = {}) {
    return this._call("flush()", "POST", "/v1/memories/flush", { body: { user_id } });
  }
  search(query_, { user_id, ...options } = {}) {
    return this._call("search()", "POST", "/v1/search", { body: { query: query_, user_id, ...options }, read: true });
  }
  ask(question, { user_id, ...options } = {}) {
    return this._call("ask()", "POST", "/v1/ask", { body: { question, user_id, ...options }, read: true });
  }
  context(question, { user_id, ...options } = {}) {
    return this._call("context()", "POST", "/v1/context", { body: { question, user_id, ...options }, read: true });
  }
  getAll({ user_id, ...options } = {}) {
    return this._call("getAll()", "GET", "/v1/memories" + query({ user_id, ...options }), { read: true });
  }
  get(memoryId, { user_id } = {}) {
    return this._call("get()", "GET", `/v1/memories/${segment("memoryId", memoryId)}` + query({ user_id }), { read: true });
  }
  update(memoryId, text, { user_id } = {}) {
    return this._call("update()", "PUT", `/v1/memories/${segment("memoryId", memoryId)}`, { body: { text, user_id } });
  }
  delete(memoryId, { user_id } = {}) {
    return this._call("delete()", "DELETE", `/v1/memories/${segment("memoryId", memoryId)}` + query({ user_id }));
  }
  history(summaryId, { user_id } = {}) {
    return this._call("history()", "GET", `/v1/memories/${segment("summaryId", summaryId)}/history` + query({ user_id }), { read: true });
  }
  restore(summaryId, { user_id } = {}) {
    return this._call("restore()", "POST", `/v1/versions/${segment("summaryId", summaryId)}/restore`, { body: { user_id } });
  }
  traces({ user_id, since } = {}) {
    return this._call("traces()", "GET", "/v1/traces" + query({ user_id, since }), { read: true });
  }
  replay(traceId, { user_id } = {}) {
    return this._call("replay()", "POST", `/v1/traces/${segment("traceId", traceId)}/replay`, { body: { user_id }, read: true });
  }
  sleep({ user_id, dry_run } = {}) {
    return this._call("sleep()", "POST", "/v1/sleep", { body: { user_id, dry_run } });
  }
  profile({ user_id, max_tokens } = {}) {
    return this._call("profile()", "GET", `/v1/users/${segment("user_id", user_id)}/profile` + query({ max_tokens }), { read: true });
  }
  audit({ user_id } = {}) {
    return this._call("audit()", "GET", `/v1/users/${segment("user_id", user_id)}/audit`, { read: true });
  }
  eraseUser(userId) {
    return this._call("eraseUser()", "DELETE", `/v1/users/${segment("userId", userId)}`);
  }
}
