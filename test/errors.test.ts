import { once } from "node:events";
import { createServer } from "node:http";
import net from "node:net";
import { gzipSync } from "node:zlib";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ERROR_CATALOGUE, type ErrorKind } from "../src/core/errors.js";
import { openDatabase } from "../src/db/database.js";
import { clearWriteFreeze, setWriteFreeze } from "../src/db/service-state.js";
import { FROZEN_RETRY_AFTER_S } from "../src/http/error-handler.js";
import { defineRoute } from "../src/http/route.js";
import { apiRoutes } from "../src/resources/index.js";
import { answerStarting } from "../src/service/http-server.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makeCosmetic, makePlayer } from "./helpers/fixtures.js";
import { EXPECTED_SECURITY_HEADERS } from "./helpers/security-headers.js";
import { EXPIRED_EVENT_ID, openStream } from "./helpers/sse.js";

const WHERE_TO_GO = "the API's documentation is at /api/docs, the admin console at /admin, the health check at /readyz";
const ELSEWHERE = `the API's paths start with /api; ${WHERE_TO_GO}`;

/** Lets the held full lists of the heavy probe below finish. */
const heldLists: (() => void)[] = [];

/** Routes that exist only in this test, to reach the failures no spec route can produce yet. */
const probes = [
  defineRoute({
    method: "GET",
    path: "/probe/held-list",
    summary: "a full list that holds its slot until the test lets it go",
    description: "test probe",
    response: z.unknown(),
    callers: ["A"],
    heavy: true,
    handler: () => new Promise((resolve) => heldLists.push(() => resolve([]))),
  }),
  defineRoute({
    method: "POST",
    path: "/probe/missing-record",
    summary: "update a cosmetic that does not exist",
    description: "test probe",
    response: z.unknown(),
    errors: { 404: "always" },
    callers: ["A"],
    handler: async (_input, { db }) => db.cosmetic.update({ where: { id: 999_999 }, data: { price: 1 } }),
  }),
  defineRoute({
    method: "POST",
    path: "/probe/duplicate-cosmetic",
    summary: "insert the same cosmetic name twice",
    description: "test probe",
    response: z.unknown(),
    errors: { 409: "always" },
    callers: ["A"],
    body: z.strictObject({ name: z.string() }),
    async handler({ body }, { db }) {
      const data = { name: body.name, type: "hat", rarity: "rare", game: "lobby", argumentFr: "", argumentEn: "", image: "halo.png" };
      await db.cosmetic.create({ data });
      return db.cosmetic.create({ data });
    },
  }),
  defineRoute({
    method: "GET",
    path: "/probe/crash",
    summary: "an unexpected failure",
    description: "test probe",
    response: z.unknown(),
    callers: ["A"],
    handler: () => Promise.reject(new Error("secret internal detail")),
  }),
];

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ routes: [...apiRoutes, ...probes] });
  key = await t.key("user-A");
});
afterAll(() => t.close());

const api = () => request(t.url);

/**
 * What the HTTP server answers to bytes that are not a valid request (Express
 * never sees them), read off a raw socket, in the shape the cases return.
 */
async function raw(url: string, bytes: string): Promise<request.Response> {
  const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
  await once(socket, "connect");
  socket.write(bytes);
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await once(socket, "close");
  const text = Buffer.concat(chunks).toString("utf8");
  const [head = "", body = ""] = text.split("\r\n\r\n");
  const [statusLine, ...lines] = head.split("\r\n");
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
  return { status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(body) as unknown } as unknown as request.Response;
}

/** One case per catalogue entry: the Record type makes a new entry without a test a compile error. */
const cases: Record<ErrorKind, () => Promise<{ res: request.Response; message: string | RegExp }>> = {
  VALIDATION: async () => ({
    res: await api().post("/api/inscription").set("X-API-Key", key).send({ username: 42 }),
    message: "username: expected string, received number",
  }),
  MALFORMED_JSON: async () => ({
    res: await api().post("/api/inscription").set("X-API-Key", key).set("Content-Type", "application/json").send('{"username":'),
    message: "Malformed JSON in request body: it ends at line 1, column 13 before the JSON is complete",
  }),
  MALFORMED_REQUEST: async () => ({
    res: await raw(t.url, "GET /api/player/get-all-players THIS IS NOT HTTP\r\n\r\n"),
    message: "Malformed HTTP request",
  }),
  REQUEST_TIMEOUT: async () => {
    const slow = await startTestApp({ database: t.database, env: { HEADERS_TIMEOUT_MS: "1000" } });
    try {
      // Headers begun and never finished.
      return { res: await raw(slow.url, "GET /api/player/get-all-players HTTP/1.1\r\nHost: x\r\n"), message: "Request not received in time" };
    } finally {
      await slow.close();
    }
  },
  HEADERS_TOO_LARGE: async () => ({
    res: await raw(t.url, `GET /api/player/get-all-players HTTP/1.1\r\nHost: x\r\nX-Padding: ${"p".repeat(20_000)}\r\n\r\n`),
    message: "Request headers larger than 16 KB",
  }),
  UNAUTHENTICATED: async () => ({
    res: await api().get("/api/player/get-all-players"),
    message: "API key missing or invalid: send a valid key in the X-API-Key header",
  }),
  FORBIDDEN: async () => ({
    res: await api()
      .get("/api/player/get-all-players")
      .set("X-API-Key", await t.key("nobody-special")),
    message: /^This API user is in no caller group, .* CALLERS_USER_A, /,
  }),
  NOT_FOUND: async () => ({
    res: await api().post("/api/probe/missing-record").set("X-API-Key", key),
    message: "Record not found",
  }),
  ROUTE_NOT_FOUND: async () => ({ res: await api().get("/api/no/such/route?x=1"), message: "No route GET /api/no/such/route" }),
  METHOD_NOT_ALLOWED: async () => ({
    res: await api().delete("/api/inscription").set("X-API-Key", key),
    message: "Method DELETE not allowed on /api/inscription",
  }),
  DUPLICATE: async () => ({
    res: await api().post("/api/probe/duplicate-cosmetic").set("X-API-Key", key).send({ name: "Halo" }),
    message: "Cosmetic name 'Halo' is already used (unique constraint cosmetics_name_key)",
  }),
  REFERENCE_NOT_FOUND: async () => ({
    res: await api().post("/api/website/create-reward-log").set("X-API-Key", key).send({ playerId: 999_999, rewardId: 1 }),
    message: /^playerId: .*999999/,
  }),
  CONFLICT: async () => {
    await t.users.create("revoked-twice");
    const revoke = () => api().post("/api/admin/users/revoke").set("X-API-Key", key).send({ username: "revoked-twice" });
    expect((await revoke()).status).toBe(200);
    return { res: await revoke(), message: "API user 'revoked-twice' is already revoked" };
  },
  PLAYER_ERASED: async () => {
    const player = await makePlayer(t.database.db.prisma);
    const erase = () => api().post("/api/admin/players/erase").set("X-API-Key", key).send({ id: player.id });
    const receipt = (await erase()).body as { id: string; erasedAt: string };
    return { res: await erase(), message: `Player ${player.id} was erased at ${receipt.erasedAt} (receipt ${receipt.id}): nothing of theirs is left` };
  },
  SECRET_NOT_REPLAYED: async () => {
    const post = () => api().post("/api/inscription").set("X-API-Key", key).set("Idempotency-Key", "catalogue-secret").send({ username: "secret-once" });
    expect((await post()).status).toBe(201);
    return { res: await post(), message: /^Username 'secret-once' was registered by an earlier request with this Idempotency-Key/ };
  },
  PRECONDITION_FAILED: async () => {
    const cosmetic = await makeCosmetic(t.database.db.prisma);
    const res = await api()
      .patch("/api/cosmetic/update-cosmetic")
      .set("X-API-Key", key)
      .set("If-Match", `"cosmetic-${cosmetic.id}-v${cosmetic.version + 1}"`)
      .send({ id: cosmetic.id, price: 1 });
    return { res, message: `Cosmetic ${cosmetic.id} changed since the ETag sent in If-Match; nothing was written` };
  },
  PAYLOAD_TOO_LARGE: async () => ({
    res: await api()
      .post("/api/inscription")
      .set("X-API-Key", key)
      .set("Content-Type", "application/json")
      .send(JSON.stringify({ username: "x".repeat(101 * 1024) })),
    message: "Request body larger than 100 KB",
  }),
  UNSUPPORTED_MEDIA_TYPE: async () => ({
    res: await api().post("/api/inscription").set("X-API-Key", key).set("Content-Type", "application/json; charset=latin1").send('{"username":"abc"}'),
    message: 'Unsupported charset "latin1"',
  }),
  IDEMPOTENCY_KEY_REUSED: async () => {
    const post = (body: object) => api().post("/api/inscription").set("X-API-Key", key).set("Idempotency-Key", "catalogue-1").send(body);
    await post({ username: "idem-first" });
    return {
      res: await post({ username: "idem-other" }),
      message: "Idempotency-Key already used in the last 24 hours with another body on POST /inscription: use a new key for a new request",
    };
  },
  RATE_LIMITED: async () => {
    const limited = await startTestApp({ database: t.database, env: { RATE_LIMIT_PER_MINUTE: "1" } });
    try {
      await request(limited.url).get("/api/parkour/get-all-maps").set("X-API-Key", key);
      const res = await request(limited.url).get("/api/parkour/get-all-maps").set("X-API-Key", key);
      expect(res.headers["retry-after"]).toMatch(/^\d+$/);
      return { res, message: /^Too many requests: this API user may send 1 a minute; retry in \d+ s$/ };
    } finally {
      await limited.close();
    }
  },
  INTERNAL: async () => {
    const res = await api().get("/api/probe/crash").set("X-API-Key", key);
    return { res, message: `Internal server error (request id ${res.headers["x-request-id"]})` };
  },
  DATABASE_UNAVAILABLE: async () => {
    // A database server that is not there: port 1 on this machine refuses connections.
    const dead = openDatabase({ kind: "postgres", url: "postgresql://postgres@127.0.0.1:1/none", poolMax: 1 });
    const down = await startTestApp({ database: { db: dead, url: undefined, drop: () => dead.close() } });
    try {
      const res = await request(down.url).get("/api/player/get-all-players").set("X-API-Key", key);
      return { res, message: "Database unavailable, retry later" };
    } finally {
      await down.close();
      await dead.close();
    }
  },
  LISTS_BUSY: async () => {
    const busy = await startTestApp({
      database: t.database,
      routes: [...apiRoutes, ...probes],
      env: { HEAVY_LISTS_AT_ONCE: "1", HEAVY_LIST_WAIT_MS: "300" },
    });
    try {
      const holder = request(busy.url)
        .get("/api/probe/held-list")
        .set("X-API-Key", key)
        .then((r) => r);
      while (heldLists.length === 0) await new Promise((r) => setTimeout(r, 10));
      const res = await request(busy.url).get("/api/player/get-all-players").set("X-API-Key", key);
      expect(res.headers["retry-after"]).toBe("1");
      heldLists.shift()!();
      expect((await holder).status).toBe(200);
      return { res, message: "Too many full lists in progress on this instance: retry in 1 s" };
    } finally {
      await busy.close();
    }
  },
  SYNC_TOKEN_EXPIRED: async () => {
    // A token of the format given before tokens were bound to their database.
    const since = `s1.${Buffer.from("999999999999:0:0:").toString("base64url")}`;
    return {
      res: await api().get(`/api/parkour/get-all-maps?since=${since}`).set("X-API-Key", key),
      message: "since: this token was given before tokens were bound to their database; take the full list again, without since",
    };
  },
  EVENT_ID_EXPIRED: async () => ({
    // An event of another database (another deployment, or this one before a restore).
    res: await api().get("/api/events").set("X-API-Key", key).set("Last-Event-ID", EXPIRED_EVENT_ID),
    message:
      "Last-Event-ID: the stream cannot resume after this event: not from this database (another one, or this one restored from a backup since); reload by sync, then open the stream without it",
  }),
  TOO_MANY_STREAMS: async () => {
    const capped = await startTestApp({ database: t.database, env: { EVENTS_STREAMS_PER_USER: "1" } });
    const held = await openStream(capped.url, key);
    try {
      expect(held.status).toBe(200);
      const res = await request(capped.url).get("/api/events").set("X-API-Key", key);
      expect(res.headers["retry-after"]).toBe("5");
      return { res, message: "This API user already has 1 event stream open on this instance: close one, or retry in 5 s" };
    } finally {
      await held.close();
      await capped.close();
    }
  },
  // The listener of an instance that has its port but not its app yet (test/startup-errors.test.ts starts a real one).
  STARTING: async () => {
    const starting = createServer(answerStarting).listen(0, "127.0.0.1");
    await once(starting, "listening");
    try {
      const port = (starting.address() as net.AddressInfo).port;
      return {
        res: await request(`http://127.0.0.1:${port}`).get("/api/player/get-all-players"),
        message: "Not ready: this instance is starting (opening the database, applying migrations); retry in a moment",
      };
    } finally {
      starting.close();
    }
  },
  WRITES_FROZEN: async () => {
    const prisma = t.database.db.prisma;
    await prisma.$transaction((tx) => setWriteFreeze(tx, "moving to a new database", "cli:test"));
    try {
      const res = await api().post("/api/website/create-reward-log").set("X-API-Key", key).send({ playerId: 1, rewardId: 1 });
      return {
        res,
        message:
          /^Writes are paused by the operator since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(moving to a new database\); reads go on and nothing was written: retry later$/,
      };
    } finally {
      await prisma.$transaction((tx) => clearWriteFreeze(tx));
    }
  },
  SHUTTING_DOWN: async () => {
    const stopping = await startTestApp({ database: t.database, lifecycle: { stopping: true } });
    try {
      return { res: await request(stopping.url).get("/readyz"), message: "Not ready: this instance is shutting down" };
    } finally {
      await stopping.close();
    }
  },
};

describe("the error catalogue", () => {
  it.each(Object.keys(ERROR_CATALOGUE) as ErrorKind[])("when %s happens, then its status and { code, message }", async (kind) => {
    const { res, message } = await cases[kind]();
    expect(res.status).toBe(ERROR_CATALOGUE[kind].status);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(Object.keys(res.body).sort()).toEqual(["code", "message"]);
    expect(res.body.code).toBe(res.status);
    if (typeof message === "string") expect(res.body.message).toBe(message);
    else expect(res.body.message).toMatch(message);
    // Every answer carries a request id, those of the HTTP server to broken HTTP included; a 503 says when to retry.
    expect(res.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    // Its kind by name, for a program: the only way to tell apart the kinds that share a status (409).
    expect(res.headers["error-name"]).toBe(kind);
    if (res.status === 503) expect(res.headers["retry-after"]).toBe(kind === "WRITES_FROZEN" ? String(FROZEN_RETRY_AFTER_S) : "1");
  });

  it("when a path exists with another method, then 405 names the allowed methods", async () => {
    const res = await api().put("/api/player/get-all-players").set("X-API-Key", key);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("GET, HEAD");
  });

  it("when a path exists with another method but no key is sent, then 401 comes first", async () => {
    const res = await api().delete("/api/inscription");
    expect(res.status).toBe(401);
    expect(res.headers.allow).toBeUndefined();
  });

  it("when a compressed body does not inflate, then 400, not 500", async () => {
    for (const encoding of ["gzip", "deflate", "br"]) {
      const res = await api()
        .post("/api/inscription")
        .set("X-API-Key", key)
        .set("Content-Type", "application/json")
        .set("Content-Encoding", encoding)
        .send("this is not compressed");
      expect(res.status, encoding).toBe(400);
      expect(res.body).toEqual({ code: 400, message: "body: could not be decoded (check Content-Encoding)" });
    }
    // fetch, not supertest: supertest re-serialises a Buffer sent as JSON.
    const good = await fetch(`${t.url}/api/inscription`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json", "Content-Encoding": "gzip" },
      body: gzipSync(JSON.stringify({ username: "gzipped-user" })),
    });
    expect(good.status).toBe(201);
  });

  it("when a JSON body is read, then it is read as body-parser reads it: a leading BOM is dropped, an empty body is {}, a chunked body past 100 KB is a 413", async () => {
    const inscription = () => api().post("/api/inscription").set("X-API-Key", key).set("Content-Type", "application/json");
    expect((await inscription().send('\uFEFF{"username":"bom-user"}')).status).toBe(201);
    const empty = await inscription().send("");
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/^username: /);
    // Chunked: no Content-Length to refuse it up front; counted while read, and the rest read off so the connection answers.
    const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
    await once(socket, "connect");
    const chunk = "x".repeat(8 * 1024);
    let text = "";
    socket.on("data", (c: Buffer) => (text += c.toString("utf8")));
    socket.write(`POST /api/inscription HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const first = `{"username":"${chunk}`;
    socket.write(`${first.length.toString(16)}\r\n${first}\r\n`);
    for (let i = 0; i < 14; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    socket.write(`2\r\n"}\r\n0\r\n\r\n`);
    socket.write(`GET /api/player/get-player-by-nick?nick=nobody HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`);
    await once(socket, "close");
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([413, 404]);
    expect(text).toContain("Request body larger than 100 KB");
  });

  it("when a route's path differs by letter case or a trailing slash, then it is the same route, with the same answers", async () => {
    const canonical = await api().get("/api/player/get-all-players?limit=3").set("X-API-Key", key);
    for (const path of ["/api/Player/get-all-players?limit=3", "/api/player/get-all-players/?limit=3"]) {
      const res = await api().get(path).set("X-API-Key", key);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toEqual(canonical.body);
      expect((await api().get(path)).status, path).toBe(401);
    }
    // Not the documented spelling, so not checked against the OpenAPI document when the app closes.
    t.seen.splice(0, t.seen.length, ...t.seen.filter((answer) => !/\/api\/Player\/|players\/$/.test(answer.path)));
    const malformed = await api().post("/api/Inscription/").set("X-API-Key", key).set("Content-Type", "application/json").send("{");
    expect(malformed.body).toEqual({ code: 400, message: "Malformed JSON in request body: it ends at line 1, column 2 before the JSON is complete" });
  });

  it("when an unknown content encoding is sent, then 415", async () => {
    const res = await api()
      .post("/api/inscription")
      .set("X-API-Key", key)
      .set("Content-Type", "application/json")
      .set("Content-Encoding", "compress")
      .send("{}");
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ code: 415, message: 'Unsupported content encoding "compress"' });
  });

  it("when the old reward path /website/create-reward is called, then 404", async () => {
    const res = await api().post("/api/website/create-reward").set("X-API-Key", key).send({ playerId: 1, rewardId: 1 });
    expect(res.status).toBe(404);
  });

  it("when a request fails unexpectedly, then the log holds the details and the response does not", async () => {
    const res = await api().get("/api/probe/crash").set("X-API-Key", key);
    expect(JSON.stringify(res.body)).not.toContain("secret internal detail");
    const line = t.logs.lines.find((l) => l.reqId === res.headers["x-request-id"] && l.level === 50);
    expect(JSON.stringify(line)).toContain("secret internal detail");
  });

  it("when a body is not JSON-typed, then 400 says so", async () => {
    const res = await api().post("/api/inscription").set("X-API-Key", key).set("Content-Type", "text/plain").send("username=abc");
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("body: expected a JSON object sent with Content-Type: application/json");
  });

  it("when the JSON body is not an object, then 400 names the body", async () => {
    for (const body of ["[]", '"text"', "42", "null"]) {
      const res = await api().post("/api/inscription").set("X-API-Key", key).set("Content-Type", "application/json").send(body);
      expect(res.status, body).toBe(400);
      expect(res.body.message).toMatch(/^body: expected object, received /);
    }
  });
});

describe("errors that point at the fix", () => {
  it("when the key is missing or wrong, then the same 401 names the X-API-Key header", async () => {
    const missing = await api().get("/api/player/get-all-players");
    const wrong = await api()
      .get("/api/player/get-all-players")
      .set("X-API-Key", `gsk_${"0".repeat(43)}`);
    expect(missing.status).toBe(401);
    expect(wrong.body).toEqual(missing.body);
    expect(missing.body).toEqual({ code: 401, message: "API key missing or invalid: send a valid key in the X-API-Key header" });
  });

  it("when a route's path is called without /api, then the 404 names the path under /api; a path that is no route there gets none", async () => {
    const res = await api().get("/player/get-all-players?limit=5").set("X-API-Key", key);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      code: 404,
      message: "No route GET /player/get-all-players: the API's paths start with /api, did you mean /api/player/get-all-players?",
    });
    expect((await api().post("/website/create-reward-log")).body.message).toBe(
      "No route POST /website/create-reward-log: the API's paths start with /api, did you mean /api/website/create-reward-log?",
    );
    expect((await api().get("/docs")).body.message).toBe("No route GET /docs: the API's paths start with /api, did you mean /api/docs?");
    expect((await api().get("/player/no-such-thing")).body.message).toBe(`No route GET /player/no-such-thing: ${ELSEWHERE}`);
  });

  it("when a newcomer opens / or /api, then the 404 says where the documentation, the console and the health check are", async () => {
    for (const path of ["/", "/api", "/api/"]) {
      const res = await api().get(path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).toEqual({ code: 404, message: `No route GET ${path}: ${WHERE_TO_GO}` });
    }
    // Under /api a path that is no route is a client's mistake, not a newcomer's: the message stays short.
    expect((await api().get("/api/nothing")).body.message).toBe("No route GET /api/nothing");
  });

  it("when the JSON body is malformed, then the message gives the line and column where it stops being JSON", async () => {
    const send = (body: string) => api().post("/api/inscription").set("X-API-Key", key).set("Content-Type", "application/json").send(body);
    const res = await send('{\n  "username": "zoe",\n  "password" "secret"\n}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: "Malformed JSON in request body at line 3, column 14" });
    expect((await send('{"username": "zoe",}')).body.message).toBe("Malformed JSON in request body at line 1, column 20");
    expect((await send("{'username': 'zoe'}")).body.message).toBe("Malformed JSON in request body at line 1, column 2");
    expect((await send("[1, 2")).body.message).toBe("Malformed JSON in request body: it ends at line 1, column 6 before the JSON is complete");
  });
});

describe("CONNECT", () => {
  it("when a client asks for a tunnel to host:port (as to a proxy), then 405 allowing nothing, in the error shape, and the connection closes", async () => {
    const res = await raw(t.url, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: tunnel-1\r\n\r\n");
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ code: 405, message: "Method CONNECT not allowed on example.com:443" });
    expect(res.headers).toMatchObject({ ...EXPECTED_SECURITY_HEADERS, allow: "", connection: "close", "x-request-id": "tunnel-1" });
    const fresh = await raw(t.url, "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(fresh.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("when CONNECT names an API path, then what any other method gets there: 401 without a key, 405 with the path's Allow", async () => {
    const anonymous = await raw(t.url, "CONNECT /api/player/get-all-players HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ code: 401, message: "API key missing or invalid: send a valid key in the X-API-Key header" });
    const res = await raw(t.url, `CONNECT /api/player/get-all-players HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`);
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ code: 405, message: "Method CONNECT not allowed on /api/player/get-all-players" });
    expect(res.headers).toMatchObject({ ...EXPECTED_SECURITY_HEADERS, allow: "GET, HEAD", connection: "close", "x-request-id": expect.any(String) });
    const line = t.logs.lines.find((l) => l.msg === "request" && l.method === "CONNECT" && l.status === 405);
    expect(line).toMatchObject({ path: "/api/player/get-all-players", user: "user-A" });
  });
});

describe("answers the HTTP server writes itself", () => {
  it("when a request is not HTTP, or CONNECT goes to host:port, then the security headers are there as on every answer", async () => {
    for (const bytes of ["GET / THIS IS NOT HTTP\r\n\r\n", "CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"]) {
      expect((await raw(t.url, bytes)).headers, bytes).toMatchObject(EXPECTED_SECURITY_HEADERS);
    }
  });
});

describe("every response", () => {
  it("carries a request id: the client's own when sane, a new one otherwise", async () => {
    const own = await api().get("/api/player/get-all-players").set("X-Request-Id", "plugin-42.abc:1");
    expect(own.headers["x-request-id"]).toBe("plugin-42.abc:1");
    for (const insane of ["has space", "x".repeat(200), "<script>", `gsk_${"k".repeat(43)}`]) {
      const res = await api().get("/api/player/get-all-players").set("X-Request-Id", insane);
      expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("has no X-Powered-By header and is JSON, even for an unknown route", async () => {
    const res = await api().get("/nothing-here");
    expect(res.headers["x-powered-by"]).toBeUndefined();
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.body).toEqual({ code: 404, message: `No route GET /nothing-here: ${ELSEWHERE}` });
  });
});
