// Drives the TypeScript client against a live `hymem serve` with user ids that hold URL-reserved
// characters: node ids_check.mjs URL ADMIN_KEY. For each id: add, flush, audit, profile,
// eraseUser, then search; prints one JSON object that tests/integration/test_ids_in_paths.py
// asserts on. `.` and `..` cannot travel as a path segment through fetch (WHATWG URLs fold
// them, `%2E` included), so the client refuses them before sending anything.
import { HymemClient } from "../../engine/client/typescript/index.js";

const [url, key] = process.argv.slice(2);
const mem = new HymemClient({ baseUrl: url, apiKey: key });
const IDS = ["team/alice", "a?b=c", "a#frag", "100%", "50%2F50", "two words", "ünï/名前", "a/../b", "x/audit"];
const caught = async (fn) => {
  try {
    await fn();
    return null;
  } catch (exc) {
    return { cls: exc.constructor.name, status: exc.status ?? null, message: String(exc.message) };
  }
};

const out = { reached: {}, refused: {} };
for (const user_id of IDS) {
  await mem.add("I keep bees on the roof of my flat", { user_id });
  await mem.flush({ user_id });
  const audit = await mem.audit({ user_id });
  const profile = await mem.profile({ user_id });
  const erased = await mem.eraseUser(user_id);
  const left = await mem.search("bees roof", { user_id });
  out.reached[user_id] = {
    audit: audit.users.map((u) => u.user_id),
    profile: profile.user_id,
    erased: erased.turns,
    left: left.length,
  };
}
for (const user_id of [".", ".."]) {
  out.refused[user_id] = {
    add: await caught(() => mem.add("hello", { user_id })),
    erase: await caught(() => mem.eraseUser(user_id)),
    audit: await caught(() => mem.audit({ user_id })),
  };
}
console.log(JSON.stringify(out));
