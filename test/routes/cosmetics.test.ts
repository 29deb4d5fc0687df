import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { makeCosmetic, unique } from "../helpers/fixtures.js";

const SHAPE = [
  "id",
  "name",
  "type",
  "rarity",
  "game",
  "argumentFr",
  "argumentEn",
  "image",
  "lootbox",
  "price",
  "description",
  "collection",
  "render",
  "permanent",
];

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-D");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const getCosmetic = (id: string | number) =>
  request(t.url)
    .get("/api/cosmetic/get-cosmetic")
    .query({ id: String(id) })
    .set("X-API-Key", key);
const patch = (body: unknown) =>
  request(t.url)
    .patch("/api/cosmetic/update-cosmetic")
    .set("X-API-Key", key)
    .send(body as object);

describe("GET /cosmetic/get-cosmetic", () => {
  it("when the cosmetic exists, then exactly its fields, argumentEn spelled so, nulls as null", async () => {
    const c = await makeCosmetic(prisma(), { description: null, collection: "Angels" });
    const res = await getCosmetic(c.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(SHAPE);
    expect(res.body).toEqual({
      id: c.id,
      name: c.name,
      type: "hat",
      rarity: "rare",
      game: "lobby",
      argumentFr: "Un chapeau",
      argumentEn: "A hat",
      image: "cosmetics/hat.png",
      lootbox: true,
      price: 250,
      description: null,
      collection: "Angels",
      render: null,
      permanent: false,
    });
  });

  it("when no cosmetic has the id, then 404 'Cosmetic not found'", async () => {
    expect((await getCosmetic(2_000_000_000)).body).toEqual({ code: 404, message: "Cosmetic not found" });
  });

  it.each([
    [undefined, "id: required"],
    ["abc", "id: expected an integer"],
    ["0", "id: expected a positive integer"],
    ["-3", "id: expected a positive integer"],
    ["2147483648", "id: expected at most 2147483647"],
    ["1e3", "id: expected an integer"],
  ])("when id is %j, then 400 '%s'", async (id, message) => {
    const req = request(t.url).get("/api/cosmetic/get-cosmetic").set("X-API-Key", key);
    const res = await (id === undefined ? req : req.query({ id }));
    expect(res.body).toEqual({ code: 400, message });
  });
});

describe("PATCH /cosmetic/update-cosmetic", () => {
  it("when some fields are sent, then only they change, the whole cosmetic is returned, and a read shows it", async () => {
    const c = await makeCosmetic(prisma());
    const res = await patch({ id: c.id, price: 999, argument_EN: "A shiny hat", lootbox: false });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(SHAPE);
    expect(res.body).toMatchObject({ id: c.id, name: c.name, price: 999, argumentEn: "A shiny hat", lootbox: false, argumentFr: "Un chapeau" });
    expect((await getCosmetic(c.id)).body).toEqual(res.body);
  });

  it("when argumentEn is sent, or both spellings alike, then it is accepted; both with different values is a 400", async () => {
    const c = await makeCosmetic(prisma());
    expect((await patch({ id: c.id, argumentEn: "One" })).body.argumentEn).toBe("One");
    expect((await patch({ id: c.id, argumentEn: "Two", argument_EN: "Two" })).body.argumentEn).toBe("Two");
    const res = await patch({ id: c.id, argumentEn: "Three", argument_EN: "Four" });
    expect(res.body).toEqual({ code: 400, message: "argument_EN: differs from argumentEn: send one of them" });
    expect((await getCosmetic(c.id)).body.argumentEn).toBe("Two");
  });

  it('when description, collection or render is null or "null", then it is cleared', async () => {
    const c = await makeCosmetic(prisma(), { description: "d", collection: "c", render: "r" });
    const res = await patch({ id: c.id, description: "null", collection: null, render: "null" });
    expect(res.body).toMatchObject({ description: null, collection: null, render: null });
    expect(await prisma().cosmetic.findUnique({ where: { id: c.id } })).toMatchObject({ description: null, collection: null, render: null });
  });

  it("when the name is another cosmetic's, then 409 naming the value and the constraint, and nothing else changes", async () => {
    const taken = await makeCosmetic(prisma());
    const c = await makeCosmetic(prisma());
    const res = await patch({ id: c.id, name: taken.name, price: 1 });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 409, message: `Cosmetic name '${taken.name}' is already used (unique constraint cosmetics_name_key)` });
    expect(await prisma().cosmetic.findUnique({ where: { id: c.id } })).toMatchObject({ name: c.name, price: 250 });
  });

  it("when no cosmetic has the id, then 404 'Cosmetic not found'", async () => {
    expect((await patch({ id: 2_000_000_001, price: 1 })).body).toEqual({ code: 404, message: "Cosmetic not found" });
  });

  it("when two clients change different fields at once, then both changes survive", async () => {
    const c = await makeCosmetic(prisma());
    for (let round = 0; round < 10; round++) {
      const [a, b] = await Promise.all([patch({ id: c.id, price: round }), patch({ id: c.id, rarity: `r${round}` })]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(await prisma().cosmetic.findUnique({ where: { id: c.id } })).toMatchObject({ price: round, rarity: `r${round}` });
    }
  });

  it.each([
    [{}, "id: required"],
    [{ id: 1 }, "body: expected at least one field to change besides id"],
    [{ id: 1, name: null }, "name: expected a string, received null"],
    [{ id: 1, lootbox: "true" }, "lootbox: expected true or false, received string"],
    [{ id: 1, price: -1 }, "price: expected 0 or more"],
    [{ id: 1, price: 2.5 }, "price: expected an integer"],
    [{ id: 1, price: 2 ** 31 }, "price: expected at most 2147483647"],
    [{ id: 2 ** 31, price: 1 }, "id: expected at most 2147483647"],
    [{ id: "1", price: 1 }, "id: expected an integer, received string"],
    [{ id: 1, name: "" }, "name: expected a non-empty string"],
    [{ id: 1, name: "x".repeat(129) }, "name: expected at most 128 characters"],
    [{ id: 1, description: "x".repeat(1001) }, "description: expected at most 1000 characters"],
    [{ id: 1, description: 5 }, "description: expected a string or null"],
    [{ id: 1, colour: "red" }, "colour: unknown field; body: expected at least one field to change besides id"],
    [{ id: 1, price: 3, colour: "red" }, "colour: unknown field"],
  ])("when the body is %j, then 400 '%s'", async (body, message) => {
    const res = await patch(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message });
  });

  it("when the query names another id than the body (or anything at all), then 400 naming the parameter, and nothing changes", async () => {
    // One after the other: made at once, on PostgreSQL the second may draw the lower id.
    const a = await makeCosmetic(prisma(), { price: 10 });
    const b = await makeCosmetic(prisma(), { price: 20 });
    const res = await request(t.url).patch(`/api/cosmetic/update-cosmetic?id=${b.id}`).set("X-API-Key", key).send({ id: a.id, price: 99 });
    expect(res.body).toEqual({ code: 400, message: "id: unknown query parameter; this route takes none (send its fields in the JSON body)" });
    expect((await prisma().cosmetic.findMany({ where: { id: { in: [a.id, b.id] } }, orderBy: { id: "asc" } })).map((c) => c.price)).toEqual([10, 20]);
  });

  it("when a name is freed and taken in the same second by two clients, then one wins and the other gets 409", async () => {
    const name = unique("Contested ");
    const [a, b] = await Promise.all([makeCosmetic(prisma()), makeCosmetic(prisma())]);
    const results = await Promise.all([patch({ id: a.id, name }), patch({ id: b.id, name })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await prisma().cosmetic.count({ where: { name } })).toBe(1);
  });
});

describe("text fields", () => {
  it("when a string holds the NUL character, which PostgreSQL cannot store, then 400 naming the field", async () => {
    const c = await makeCosmetic(prisma());
    expect((await patch({ id: c.id, type: "a\u0000b" })).body).toEqual({ code: 400, message: "type: must not contain the NUL character (\\u0000)" });
  });
});
