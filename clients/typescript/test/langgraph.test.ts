import assert from "node:assert/strict";
import { test } from "node:test";

import { Forbidden, MemgovClient } from "../src/index.js";
import { MemgovStore } from "../src/langgraph.js";
import { AGENT, fresh, OWNER, URL_ } from "./helpers.js";

test("the store puts candidates, gets the revision in force, searches, and may not delete for an agent", async () => {
  const owner = new MemgovClient({ url: URL_(), token: OWNER() });
  const name = fresh("store");
  const namespace = ["acme", "slides", name];
  const store = new MemgovStore({ url: URL_(), token: AGENT() });

  await store.put(namespace, "export_format", { text: "Export the slides as PDF", kind: "convention" });
  const item = await store.get(namespace, "export_format");
  assert.ok(item);
  assert.equal(item.value.text, "Export the slides as PDF");
  assert.deepEqual([item.value._memgov.status, item.value._memgov.in_force], ["candidate", false]);
  assert.deepEqual(item.namespace, namespace);

  await owner.memories.confirm(item.value._memgov.memory_id, "the user said so");
  await store.put(namespace, "export_format", { text: "Export the slides as PPTX", kind: "convention" });
  const inForce = await store.get(namespace, "export_format");
  assert.equal(inForce!.value.text, "Export the slides as PDF", "the confirmed revision, not the new candidate");

  await store.put(namespace, "settings", { fonts: ["Inter"], numbered: true });
  assert.deepEqual((await store.get(namespace, "settings"))!.value.fonts, ["Inter"]);

  const listed = await store.search(namespace, { filter: { numbered: true } });
  assert.deepEqual(listed.map((i) => i.key), ["settings"]);
  const found = await store.search(namespace, { query: "export slides", limit: 5 });
  assert.ok(found.some((i) => i.key === "export_format" && typeof i.score === "number"));

  await assert.rejects(store.delete(namespace, "export_format"), Forbidden);
  const spaces = await store.listNamespaces({ prefix: ["acme", "slides"] });
  assert.ok(spaces.some((ns) => ns.join("/") === namespace.join("/")));
  assert.deepEqual(await store.get(["globex", "slides"], "export_format"), null);

  const curator = new MemgovStore({ url: URL_(), token: OWNER() });
  await curator.delete(namespace, "settings");
  assert.equal(await store.get(namespace, "settings"), null);
});
