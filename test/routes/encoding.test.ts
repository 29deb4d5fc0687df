import { once } from "node:events";
import net from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "../../src/resources/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { makeCosmetic, makePlayer, makeWorld, unique } from "../helpers/fixtures.js";

/**
 * Bytes a client may get wrong: text that is not UTF-8 in a body or a query
 * string, and a Content-Type that is not a media type. Sent with fetch and raw
 * sockets: supertest would re-encode them.
 */
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-A");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const NOT_UTF8 = { code: 400, message: "body: not valid UTF-8; send the JSON text encoded in UTF-8" };

/** A JSON text whose `é` is written as one Latin-1 byte (E9), as a plugin encoding its strings in ISO-8859-1 sends it. */
const latin1 = (json: string) => Buffer.from(json, "latin1");

function send(method: string, path: string, body: Buffer | string, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/api${path}`, { method, headers: { "X-API-Key": key, "Content-Type": "application/json", ...headers }, body });
}
const answer = async (res: Response) => ({ status: res.status, body: await res.json() });

describe("bodies must be UTF-8", () => {
  it.each(apiRoutes.filter((r) => r.body).map((r) => [`${r.method} ${r.path}`, r] as const))(
    "%s: when the body holds a byte that is not UTF-8, then 400 naming the body",
    async (_name, route) => {
      expect(await answer(await send(route.method, route.path, latin1('{"anything":"caf\u00e9"}')))).toEqual({ status: 400, body: NOT_UTF8 });
    },
  );

  it("when update-cosmetic gets a Latin-1 description, then 400 and nothing is stored; the same text in UTF-8 is stored", async () => {
    const cosmetic = await makeCosmetic(prisma(), { description: "before" });
    const body = `{"id":${cosmetic.id},"description":"caf\u00e9"}`;
    expect(await answer(await send("PATCH", "/cosmetic/update-cosmetic", latin1(body)))).toEqual({ status: 400, body: NOT_UTF8 });
    expect(await prisma().cosmetic.findUnique({ where: { id: cosmetic.id } })).toMatchObject({ description: "before", version: cosmetic.version });

    const utf8 = await answer(await send("PATCH", "/cosmetic/update-cosmetic", Buffer.from(body, "utf8")));
    expect(utf8).toMatchObject({ status: 200, body: { description: "caf\u00e9" } });
    expect((await prisma().cosmetic.findUnique({ where: { id: cosmetic.id } }))!.description).toBe("caf\u00e9");
  });

  it("when create-form gets a Latin-1 answer, then 400 and no form is stored", async () => {
    const player = await makePlayer(prisma());
    const body = `{"playerId":${player.id},"video":"v","question1":"Je suis all\u00e9","question2":"2","question3":"3","question4":"4","question5":"5"}`;
    expect(await answer(await send("POST", "/form/create-form", latin1(body)))).toEqual({ status: 400, body: NOT_UTF8 });
    expect(await prisma().formAnswer.count({ where: { playerId: player.id } })).toBe(0);
  });

  it("when update-world gets a Latin-1 tag, compressed or not, then 400 and the world is unchanged", async () => {
    const world = await makeWorld(prisma(), { tag: "before" });
    const body = latin1(`{"id":${world.id},"tag":"f\u00eate"}`);
    expect(await answer(await send("PATCH", "/freebuild/update-world", body))).toEqual({ status: 400, body: NOT_UTF8 });
    // The bytes checked are the inflated ones.
    const gzipped = await send("PATCH", "/freebuild/update-world", gzipSync(body), { "Content-Encoding": "gzip" });
    expect(await answer(gzipped)).toEqual({ status: 400, body: NOT_UTF8 });
    expect((await prisma().world.findUnique({ where: { id: world.id } }))!.tag).toBe("before");
  });
});

/** One request written byte for byte on a socket; the answer's status and body. */
async function rawGet(target: Buffer | string): Promise<{ status: number; body: unknown }> {
  const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
  await once(socket, "connect");
  socket.write(
    Buffer.concat([Buffer.from("GET "), Buffer.from(target), Buffer.from(` HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`)]),
  );
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await once(socket, "close");
  const [head = "", body = ""] = Buffer.concat(chunks).toString("utf8").split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), body: JSON.parse(body) };
}

describe("query strings must be UTF-8", () => {
  it("when nick is percent-encoded Latin-1, then 400 naming nick; the same name percent-encoded as UTF-8 finds the player", async () => {
    const player = await makePlayer(prisma(), { pseudo: unique("Zo\u00e9") });
    const latin1Nick = escape(player.pseudo);
    expect(latin1Nick).toContain("%E9");
    expect(await rawGet(`/api/player/get-player-by-nick?nick=${latin1Nick}`)).toEqual({
      status: 400,
      body: { code: 400, message: "nick: not valid UTF-8 once percent-decoded; percent-encode the UTF-8 bytes of each character (U+00E9 is %C3%A9)" },
    });
    expect(await rawGet(`/api/player/get-player-by-nick?nick=${encodeURIComponent(player.pseudo)}`)).toMatchObject({
      status: 200,
      body: { id: player.id, pseudo: player.pseudo },
    });
  });

  it("when a query is refused for its bytes, then the message names the parameter whose bytes they are", async () => {
    const res = await rawGet("/api/player/get-all-full-players-by-gradeId?gradeId=1&x%C3=1");
    expect(res).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^x\uFFFD: not valid UTF-8 once percent-decoded/) } });
  });

  it("when a value holds a malformed escape (100%, %zz), then it is taken as it is, as before", async () => {
    expect(await rawGet("/api/player/get-player-by-nick?nick=100%25%zz%")).toEqual({ status: 404, body: { code: 404, message: "Player not found" } });
  });

  it("when the request target holds a raw non-ASCII byte, then 400 saying to percent-encode it", async () => {
    for (const target of [latin1("/api/player/get-player-by-nick?nick=Zo\u00e9"), Buffer.from("/api/player/get-player-by-nick?nick=Zo\u00e9", "utf8")]) {
      expect(await rawGet(target)).toEqual({
        status: 400,
        body: {
          code: 400,
          message: "Malformed HTTP request: the request target must be a path such as /api/... in printable ASCII (percent-encode anything else as UTF-8)",
        },
      });
    }
  });
});

describe("Content-Type", () => {
  const register = (contentType: string, username = unique("ct")) =>
    send("POST", "/inscription", JSON.stringify({ username }), { "Content-Type": contentType });

  it.each([
    "application/json;;;==",
    "application/json; charset",
    "application/json; =utf-8",
    "application/json; charset=utf-8 x",
    'application/json; charset="utf-8',
    "application/json/x",
    "application/ json",
  ])("when it is %j (not a media type), then 400 naming Content-Type, and nothing is stored", async (contentType) => {
    const username = unique("ct");
    expect(await answer(await register(contentType, username))).toEqual({
      status: 400,
      body: { code: 400, message: "Content-Type: not a well-formed media type; send application/json (optionally with charset=utf-8)" },
    });
    expect(await prisma().apiUser.count({ where: { username } })).toBe(0);
  });

  it.each([
    "application/json",
    "Application/JSON",
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
    'application/json; charset="utf-8"',
    "application/json;",
    "application/json; charset=utf-8; profile=x",
  ])("when it is %j, then the body is read", async (contentType) => {
    expect((await register(contentType)).status).toBe(201);
  });

  it("when it is sent twice (even the same twice), then 400 naming Content-Type, and nothing is stored", async () => {
    for (const second of ["text/plain", "application/json"]) {
      const username = unique("ct2");
      const body = JSON.stringify({ username });
      const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
      await once(socket, "connect");
      socket.write(
        `POST /api/inscription HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Type: ${second}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      const chunks: Buffer[] = [];
      socket.on("data", (c: Buffer) => chunks.push(c));
      await once(socket, "close");
      const [head = "", text = ""] = Buffer.concat(chunks).toString("utf8").split("\r\n\r\n");
      expect({ status: Number(head.split(" ")[1]), body: JSON.parse(text) as unknown }).toEqual({
        status: 400,
        body: { code: 400, message: "Content-Type: send it once" },
      });
      expect(await prisma().apiUser.count({ where: { username } })).toBe(0);
    }
  });

  it("when the charset is another than UTF-8, even one that could decode the body (UTF-16), then 415 and nothing is stored", async () => {
    const username = unique("u16");
    const res = await send("POST", "/inscription", Buffer.from(JSON.stringify({ username }), "utf16le"), {
      "Content-Type": "application/json; charset=utf-16le",
    });
    expect(await answer(res)).toEqual({ status: 415, body: { code: 415, message: 'Unsupported charset "utf-16le"' } });
    expect(await prisma().apiUser.count({ where: { username } })).toBe(0);
  });
});
