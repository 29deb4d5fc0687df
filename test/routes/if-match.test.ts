import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiError } from "../../src/core/errors.js";
import type { Cosmetic } from "../../src/generated/prisma/client.js";
import { parseIfMatch } from "../../src/http/if-match.js";
import { cosmeticUpdate, notUpdated } from "../../src/resources/cosmetic/queries.js";
import { importData } from "../../src/transfer/transfer.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { makeCosmetic } from "../helpers/fixtures.js";

/** Optimistic concurrency on cosmetics: a per-row ETag, and If-Match on update-cosmetic. */
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-A");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const getCosmetic = (id: number, headers: Record<string, string> = {}) =>
  request(t.url)
    .get("/api/cosmetic/get-cosmetic")
    .query({ id: String(id) })
    .set({ "X-API-Key": key, ...headers });
const patch = (body: object, ifMatch?: string, apiKey = key) => {
  const req = request(t.url).patch("/api/cosmetic/update-cosmetic").set("X-API-Key", apiKey);
  return (ifMatch === undefined ? req : req.set("If-Match", ifMatch)).send(body);
};
const stored = (id: number) => prisma().cosmetic.findUniqueOrThrow({ where: { id } });
const changed = (id: number) => `Cosmetic ${id} changed since the ETag sent in If-Match; nothing was written`;

describe("the ETag of a cosmetic", () => {
  it("when a cosmetic is read, then its ETag names it and its version, and If-None-Match still gives 304", async () => {
    const c = await makeCosmetic(prisma());
    const res = await getCosmetic(c.id);
    expect(res.headers.etag).toBe(`"cosmetic-${c.id}-v1"`);
    expect((await getCosmetic(c.id, { "If-None-Match": res.headers.etag! })).status).toBe(304);
  });

  it("when another cosmetic changes, then this one's ETag does not (the version is per row)", async () => {
    const [a, b] = [await makeCosmetic(prisma()), await makeCosmetic(prisma())];
    const before = (await getCosmetic(a.id)).headers.etag;
    expect((await patch({ id: b.id, price: 9 })).status).toBe(200);
    expect((await getCosmetic(a.id)).headers.etag).toBe(before);
  });

  it("when the operator's import rewrites a cosmetic, then its version moves too", async () => {
    const c = await makeCosmetic(prisma());
    const before = (await getCosmetic(c.id)).headers.etag!;
    const record: Record<string, unknown> = { ...(await stored(c.id)), price: 77 };
    delete record.version;
    await importData(prisma(), { cosmetics: [record] });
    const after = await getCosmetic(c.id, { "If-None-Match": before });
    expect(after.status).toBe(200);
    expect(after.headers.etag).toBe(`"cosmetic-${c.id}-v2"`);
    expect((await patch({ id: c.id, price: 1 }, before)).status).toBe(412);
  });
});

describe("PATCH /cosmetic/update-cosmetic with If-Match", () => {
  it("when If-Match holds the current ETag, then the update applies and answers with the new ETag", async () => {
    const c = await makeCosmetic(prisma());
    const etag = (await getCosmetic(c.id)).headers.etag!;
    const res = await patch({ id: c.id, price: 450 }, etag);
    expect(res.status).toBe(200);
    expect(res.body.price).toBe(450);
    expect(res.headers.etag).toBe(`"cosmetic-${c.id}-v2"`);
    expect((await getCosmetic(c.id)).headers.etag).toBe(res.headers.etag);
    // The new ETag is good for the next conditional update.
    expect((await patch({ id: c.id, price: 451 }, res.headers.etag)).status).toBe(200);
  });

  it("when the cosmetic changed since the ETag was read, then 412 and nothing is written", async () => {
    const c = await makeCosmetic(prisma(), { price: 100 });
    const etag = (await getCosmetic(c.id)).headers.etag!;
    expect((await patch({ id: c.id, name: `${c.name} (edited)` })).status).toBe(200);
    const res = await patch({ id: c.id, price: 5 }, etag);
    expect(res.status).toBe(412);
    expect(res.body).toEqual({ code: 412, message: changed(c.id) });
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(await stored(c.id)).toMatchObject({ price: 100, name: `${c.name} (edited)`, version: 2 });
  });

  it("when If-Match lists several tags, then one current strong tag is enough", async () => {
    const c = await makeCosmetic(prisma());
    const res = await patch({ id: c.id, price: 3 }, `"cosmetic-${c.id}-v7", "cosmetic-${c.id}-v1" ,W/"x"`);
    expect(res.status).toBe(200);
  });

  it("when If-Match holds a weak tag, another cosmetic's tag, or the tag written differently, then 412 (strong comparison)", async () => {
    const [c, other] = [await makeCosmetic(prisma()), await makeCosmetic(prisma())];
    for (const ifMatch of [`W/"cosmetic-${c.id}-v1"`, `"cosmetic-${other.id}-v1"`, `"cosmetic-${c.id}-v01"`, `"cosmetics-v1-${c.id}"`, '""']) {
      const res = await patch({ id: c.id, price: 3 }, ifMatch);
      expect(res.status, ifMatch).toBe(412);
    }
    expect((await stored(c.id)).version).toBe(1);
  });

  it("when If-Match is *, then any existing cosmetic matches, and a missing one is 404", async () => {
    const c = await makeCosmetic(prisma());
    expect((await patch({ id: c.id, price: 8 }, "*")).status).toBe(200);
    expect((await patch({ id: 2_000_000_000, price: 8 }, "*")).body).toEqual({ code: 404, message: "Cosmetic not found" });
  });

  it("when the cosmetic does not exist, then 404 whatever If-Match says", async () => {
    const res = await patch({ id: 2_000_000_001, price: 8 }, '"cosmetic-2000000001-v1"');
    expect(res.body).toEqual({ code: 404, message: "Cosmetic not found" });
  });

  it.each([["cosmetic-1-v1"], ['"unterminated'], ['"a" "b"'], ['W/ "a"'], [","], [" "], ['"a"; "b"'], ['"tab\tinside"']])(
    "when If-Match is malformed (%j), then 400 naming the header, and nothing is written",
    async (ifMatch) => {
      const c = await makeCosmetic(prisma(), { price: 100 });
      const res = await patch({ id: c.id, price: 5 }, ifMatch);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 400,
        message: 'If-Match: expected * or a comma-separated list of quoted entity tags, such as "cosmetic-3-v2"',
      });
      expect(await stored(c.id)).toMatchObject({ price: 100, version: 1 });
    },
  );

  it("when the body is invalid too, then 400 for the body; a caller without rights gets 403 first", async () => {
    const c = await makeCosmetic(prisma());
    expect((await patch({ id: c.id, price: -1 }, '"stale"')).status).toBe(400);
    expect((await patch({ id: c.id, price: 1 }, "bad", await t.key("user-C"))).status).toBe(403);
  });

  it("when several clients update with the same If-Match at once, then exactly one wins and the row holds its change only", async () => {
    const c = await makeCosmetic(prisma(), { price: 1 });
    const etag = (await getCosmetic(c.id)).headers.etag!;
    const prices = Array.from({ length: 16 }, (_, i) => 101 + i);
    const results = await Promise.all(prices.map((price) => patch({ id: c.id, price, argument_EN: `by ${price}` }, etag)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...prices.slice(1).map(() => 412)]);
    const winner = results.find((r) => r.status === 200)!;
    const row = await stored(c.id);
    expect(row).toMatchObject({ price: winner.body.price, argumentEn: `by ${winner.body.price}`, version: 2 });
    expect(winner.headers.etag).toBe(`"cosmetic-${c.id}-v2"`);
  });

  it("when the conditional updates reach the database at the same moment, then still exactly one applies (check and write are one statement)", async () => {
    // Below HTTP, so that all of them are in flight together: a read-then-write would let them all through.
    const c = await makeCosmetic(prisma(), { price: 1 });
    const prices = Array.from({ length: 12 }, (_, i) => 201 + i);
    // The statement the route runs (without its audit entry), and its answer when it wrote nothing.
    const update = async (price: number) => {
      const [row] = await prisma().$queryRaw<Cosmetic[]>(cosmeticUpdate(c.id, { price }, [1]).alone());
      return row ?? notUpdated(prisma(), c.id, [1]);
    };
    const outcomes = await Promise.allSettled(prices.map(update));
    const won = outcomes.filter((o) => o.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const o of outcomes) if (o.status === "rejected") expect((o.reason as ApiError).kind).toBe("PRECONDITION_FAILED");
    expect(await stored(c.id)).toMatchObject({ price: won[0]!.value.price, version: 2 });
  });

  it("when no If-Match is sent, then the update applies whatever the version, as before", async () => {
    const c = await makeCosmetic(prisma());
    const results = await Promise.all([patch({ id: c.id, price: 11 }), patch({ id: c.id, lootbox: false })]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(await stored(c.id)).toMatchObject({ price: 11, lootbox: false, version: 3 });
  });

  it("when If-None-Match is sent on a PATCH, then it is ignored: the write answers 200, never 304", async () => {
    const c = await makeCosmetic(prisma());
    const res = await request(t.url).patch("/api/cosmetic/update-cosmetic").set({ "X-API-Key": key, "If-None-Match": "*" }).send({ id: c.id, price: 2 });
    expect(res.status).toBe(200);
  });
});

describe("parseIfMatch", () => {
  it("when given the RFC 9110 forms, then the strong tags only", () => {
    expect(parseIfMatch("*")).toEqual({ any: true });
    expect(parseIfMatch(' "a" ')).toEqual({ any: false, strongTags: ["a"] });
    expect(parseIfMatch('"a",W/"b", ,"c,d"')).toEqual({ any: false, strongTags: ["a", "c,d"] });
    expect(parseIfMatch('W/"a"')).toEqual({ any: false, strongTags: [] });
    expect(parseIfMatch('"*"')).toEqual({ any: false, strongTags: ["*"] });
    for (const bad of ["", "*,*", '"a"x', 'w/"a"', '"a"b"']) expect(parseIfMatch(bad), bad).toBeUndefined();
  });
});

describe("If-Match on the other writes", () => {
  it("when a write route without ETags gets If-Match, then 400 and nothing is written, rather than an unconditional write", async () => {
    const { makeWorld } = await import("../helpers/fixtures.js");
    const world = await makeWorld(prisma());
    const res = await request(t.url)
      .patch("/api/freebuild/update-world")
      .set({ "X-API-Key": key, "If-Match": '"anything"' })
      .send({ id: world.id, tag: "conditional" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      message: "If-Match: this route has no ETag to match, so it cannot make the write conditional; send it without If-Match",
    });
    expect((await prisma().world.findUniqueOrThrow({ where: { id: world.id } })).tag).toBe(world.tag);
    const form = await request(t.url).post("/api/form/create-form").set({ "X-API-Key": key, "If-Match": "*" }).send({});
    expect(form.status).toBe(400);
  });
});
