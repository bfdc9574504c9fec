// Drives the TypeScript client (engine/client/typescript) against a live `hymem serve`:
// node client_check.mjs URL. Prints one JSON object of what each call returned or raised;
// tests/integration/test_typescript_client.py asserts on it.
import {
  AuthError,
  HymemClient,
  HymemError,
  NotFoundError,
  ServerUnavailable,
  UserInputError,
} from "../../engine/client/typescript/index.js";

const url = process.argv[2];
const out = {};
const caught = async (fn) => {
  try {
    await fn();
    return null;
  } catch (exc) {
    return {
      cls: exc.constructor.name,
      kind: exc.kind,
      status: exc.status,
      hymem: exc instanceof HymemError,
      userInput: exc instanceof UserInputError,
      message: String(exc.message),
    };
  }
};

const mem = new HymemClient({ baseUrl: url, apiKey: "ka" });
out.health = await mem.health();
const added = await mem.add(
  [
    { role: "user", content: "My sister Ines lives in Porto and teaches piano." },
    { role: "assistant", content: "Porto is lovely." },
  ],
  { user_id: "alice", session_id: "s1" },
);
out.added = { turns: added.turn_ids.length, newTurns: added.new_turn_ids.length };
out.flushed = (await mem.flush({ user_id: "alice" })).summaries_written.length;
const hits = await mem.search("where does Ines live", { user_id: "alice", k: 5 });
out.hits = hits.map((h) => h.text);
const answer = await mem.ask("Where does Ines live?", { user_id: "alice" });
out.answer = { text: answer.text, path: answer.path, evidence: answer.evidence.length };
const replayed = await mem.replay(answer.trace_id, { user_id: "alice" });
out.replay = { then: replayed.then.trace_id === answer.trace_id, now: replayed.now.answer === answer.text };
const first = hits[0];
const updated = await mem.update(first.id, "Ines lives in Lisbon now.", { user_id: "alice" });
out.updated = updated.text;
out.history = (await mem.history(updated.id, { user_id: "alice" })).length;
out.page = (await mem.getAll({ user_id: "alice", limit: 2 })).items.length;
out.notFound = await caught(() => mem.get("sum-does-not-exist", { user_id: "alice" }));
out.forbidden = await caught(() => mem.search("x", { user_id: "bob" }));
out.badArgument = await caught(() => mem.search("x", { user_id: "alice", k: 0 }));
out.badKey = await caught(() =>
  new HymemClient({ baseUrl: url, apiKey: "nope" }).search("x", { user_id: "alice" }),
);
out.emptyId = await caught(() => mem.get("", { user_id: "alice" }));
out.unreachable = await caught(() => new HymemClient({ baseUrl: "http://127.0.0.1:9", timeoutMs: 2000 }).health());
out.erased = (await mem.eraseUser("alice")).turns;
out.classes = { notFound: NotFoundError.name, auth: AuthError.name, down: ServerUnavailable.name };
console.log(JSON.stringify(out));
