// The TypeScript client's add() names its request like the Python client's: node
// request_id_check.mjs URL. Prints one JSON object; tests/integration/test_typescript_request_id.py
// asserts on it.
import { HymemClient } from "../../engine/client/typescript/index.js";

const mem = new HymemClient({ baseUrl: process.argv[2], apiKey: "ka" });
const said = [
  { role: "user", content: "Thanks!" },
  { role: "assistant", content: "You're welcome." },
];
const first = await mem.add(said, { user_id: "alice", request_id: "ts-1" });
const again = await mem.add(said, { user_id: "alice", request_id: "ts-1" });
const repeat = await mem.add(said, { user_id: "alice" });
console.log(
  JSON.stringify({
    sameIds: JSON.stringify(again.turn_ids) === JSON.stringify(first.turn_ids),
    againNew: again.new_turn_ids.length,
    repeatNew: repeat.new_turn_ids.length,
  }),
);
