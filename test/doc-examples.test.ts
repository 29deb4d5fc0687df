import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSample } from "../src/transfer/sample.js";
import { createFirstUser } from "../src/users/bootstrap.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase } from "./helpers/database.js";
import { docExamples, matchesShown, unrunBlocks } from "./helpers/doc-examples.js";

/**
 * Every request the documentation shows is sent, in the order shown, to a
 * fresh start loaded with the sample community (`npm run seed`), with the key
 * the first start prints as $KEY and the default rate limits; each must get
 * the status, the headers and the body the text shows.
 */
const SHOWN_ORIGIN = "http://localhost:3000";
const FILES = ["README.md", "docs/CALLING.md", "docs/API.md"];

/** The docs whose every shell and HTTP example is run, or marked as not runnable with the reason. */
const CHECKED = ["README.md", "docs/CALLING.md", "docs/OPERATIONS.md", "docs/WEBHOOKS.md"];

describe("the shell and HTTP examples of the docs", () => {
  it.each(CHECKED)("when %s is read, then each is run by a test, or marked <!-- not run: reason -->", (file) => {
    expect(unrunBlocks(file, readFileSync(file, "utf8"), FILES.includes(file), (test) => readFileSync(test, "utf8"))).toEqual([]);
  });
});

for (const file of FILES) {
  describe(`the requests shown in ${file}`, () => {
    let t: TestApp;
    let key: string;
    beforeAll(async () => {
      const database = await createTestDatabase();
      await loadSample(database.db.prisma, new Date());
      t = await startTestApp({ database, env: { RATE_LIMIT_PER_MINUTE: "600", AUTH_FAILURES_PER_MINUTE: "30" } });
      // The key of the first start, made as the first start makes it.
      const first = await createFirstUser(t.users, t.config);
      key = first!.apiKey;
    });
    afterAll(async () => {
      await t?.close();
      await t?.database.drop();
    });

    const examples = () => docExamples(file, readFileSync(file, "utf8"), { KEY: key });

    it("when read, then every curl command in it has its answer beside it, in a form the test understands", () => {
      const shown = docExamples(file, readFileSync(file, "utf8"), { KEY: "gsk_placeholder" });
      for (const example of shown) expect(example.request.url.startsWith(SHOWN_ORIGIN), example.at).toBe(true);
      if (file !== "docs/API.md") expect(shown.length).toBeGreaterThanOrEqual(3);
    });

    it("when each request is sent in turn, then it gets the answer shown", async () => {
      for (const { at, command, request, answer } of examples()) {
        const res = await fetch(t.url + request.url.slice(SHOWN_ORIGIN.length), {
          method: request.method,
          headers: request.headers,
          body: request.body,
        });
        const text = await res.text();
        const context = `${at}\n${command}\n→ ${res.status} ${text.slice(0, 2000)}`;
        expect(res.status, context).toBe(answer.status);
        for (const [name, value] of Object.entries(answer.headers)) {
          expect(matchesShown(value, res.headers.get(name) ?? undefined), `${context}\nheader ${name}: ${res.headers.get(name)}`).toBe(true);
        }
        const body = text === "" ? undefined : (JSON.parse(text) as unknown);
        expect(matchesShown(answer.body, body), `${context}\nshown: ${JSON.stringify(answer.body)}`).toBe(true);
      }
    });
  });
}
