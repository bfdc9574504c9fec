// Types of @hymem/client (index.js). Field names are the REST API's (hymem.serve.models).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Message = string | { role?: string; speaker?: string; content?: string; text?: string; id?: string; timestamp?: string };
export type Filters = { [key: string]: Json };

export interface ClientOptions {
  /** The server's base URL, e.g. "http://127.0.0.1:8000". */
  baseUrl: string;
  /** A key of the server's HYMEM_API_KEYS, sent as "Authorization: Bearer <key>". */
  apiKey?: string;
  /** Per request; default 60000. */
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}

export interface Scope {
  user_id: string;
  agent_id?: string;
  run_id?: string;
  filters?: Filters;
}

export interface AddResult {
  turn_ids: string[];
  new_turn_ids: string[];
  segments_written: string[];
  summaries_written: string[];
  pending: number;
  backend: string;
  error: string | null;
  [key: string]: Json | undefined;
}

export interface Hit {
  level: "summary" | "segment";
  id: string;
  user_id: string;
  text: string;
  segment_id: string;
  turn_ids: string[];
  status: string | null;
  metadata: { [key: string]: Json };
  fused_score: number;
  memory_id: string | null;
  [key: string]: Json | undefined;
}

export interface Answer {
  /** The answer's text. */
  text: string;
  question: string;
  user_id: string;
  path: "light" | "deep";
  escalated: boolean;
  escalation_reason: "verdict" | "fallback" | "forced" | null;
  complete: boolean;
  iterations: number;
  evidence: Hit[];
  trace_id: string;
  [key: string]: Json | Hit[] | undefined;
}

export interface SummaryRecord {
  id: string;
  user_id: string;
  text: string;
  status: string;
  memory_id: string;
  [key: string]: Json | undefined;
}

export class HymemError extends Error {
  /** The exact hymem class name the server raised, e.g. "NotFoundError". */
  kind: string;
  /** The HTTP status of the answer, where there was one. */
  status: number | undefined;
}
export class UserInputError extends HymemError {}
export class NotFoundError extends UserInputError {}
export class ConfigError extends HymemError {}
export class StoreError extends HymemError {}
export class ServerUnavailable extends StoreError {}
export class AuthError extends HymemError {}
export class LLMError extends HymemError {}

export class HymemClient {
  constructor(options: ClientOptions);
  readonly baseUrl: string;
  health(): Promise<{ status: string; read_only: boolean }>;
  add(
    messages: Message | Message[],
    options: { user_id: string; session_id?: string; timestamp?: string; metadata?: Filters; agent_id?: string; run_id?: string; request_id?: string },
  ): Promise<AddResult>;
  flush(options: { user_id: string }): Promise<AddResult>;
  search(
    query: string,
    options: Scope & { k?: number; level?: "summary" | "segment"; mode?: "hybrid" | "dense" | "lexical"; since?: string; until?: string; include_inactive?: boolean; as_of?: string },
  ): Promise<Hit[]>;
  ask(
    question: string,
    options: Scope & { depth?: "auto" | "light" | "deep"; k?: number; n?: number; d?: number; max_iterations?: number; as_of?: string },
  ): Promise<Answer>;
  context(question: string, options: Scope & { depth?: "auto" | "light" | "deep"; as_of?: string }): Promise<Hit[]>;
  getAll(options: Scope & { level?: string; status?: string; limit?: number; cursor?: string }): Promise<{ items: Json[]; next_cursor: string | null; [key: string]: Json }>;
  get(memoryId: string, options: { user_id: string }): Promise<{ [key: string]: Json }>;
  update(memoryId: string, text: string, options: { user_id: string }): Promise<SummaryRecord>;
  delete(memoryId: string, options: { user_id: string }): Promise<SummaryRecord>;
  history(summaryId: string, options: { user_id: string }): Promise<SummaryRecord[]>;
  restore(summaryId: string, options: { user_id: string }): Promise<SummaryRecord>;
  traces(options?: { user_id?: string; since?: string }): Promise<{ [key: string]: Json }[]>;
  replay(traceId: string, options: { user_id: string }): Promise<{ then: { [key: string]: Json }; now: { [key: string]: Json }; [key: string]: Json }>;
  sleep(options?: { user_id?: string; dry_run?: boolean }): Promise<{ [key: string]: Json }>;
  profile(options: { user_id: string; max_tokens?: number }): Promise<{ [key: string]: Json }>;
  audit(options: { user_id: string }): Promise<{ [key: string]: Json }>;
  eraseUser(userId: string): Promise<{ [key: string]: Json }>;
}
