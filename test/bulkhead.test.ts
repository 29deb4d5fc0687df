import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineRoute } from "../src/http/route.js";
import { apiRoutes } from "../src/resources/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

/** A heavy route whose handlers wait until the test lets them finish; each call is recorded. */
const running: { id: string; finish: () => void }[] = [];
const heavyProbe = defineRoute({
  method: "GET",
  path: "/probe/heavy",
  summary: "a full list that takes its time",
  description: "test probe",
  callers: ["A"],
  query: z.strictObject({ id: z.string() }),
  response: z.unknown(),
  heavy: true,
  handler: ({ query }) => new Promise((resolve) => running.push({ id: query.id, finish: () => resolve({ id: query.id }) })),
});

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ env: { HEAVY_LISTS_AT_ONCE: "1" }, routes: [...apiRoutes, heavyProbe] });
  key = await t.key("user-A");
});
afterAll(() => t.close());

const ask = (id: string, signal?: AbortSignal) =>
  fetch(`${t.url}/api/probe/heavy?id=${id}`, { headers: { "X-API-Key": key }, ...(signal ? { signal } : {}) });
const settle = () => new Promise((r) => setTimeout(r, 150));

describe("the heavy-list bulkhead", () => {
  it("when the limit is reached, then the next client waits; when one leaves while waiting, then its list is never built", async () => {
    const first = ask("first");
    await settle();
    const quitter = new AbortController();
    const leaving = ask("leaver", quitter.signal).catch(() => "left");
    const third = ask("third");
    await settle();
    expect(running.map((r) => r.id)).toEqual(["first"]);

    quitter.abort();
    expect(await leaving).toBe("left");
    await settle(); // the server notices the closed connection
    running[0]!.finish();
    expect((await first).status).toBe(200);
    await settle();
    // The leaver's turn passed to the third client, without building anything for nobody.
    expect(running.map((r) => r.id)).toEqual(["first", "third"]);
    running[1]!.finish();
    expect((await third).status).toBe(200);
  });
});
