import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { cliSource, OPERATOR } from "../src/audit/audit.js";
import { runCli } from "../src/cli/cli.js";
import { hashApiKey } from "../src/core/api-keys.js";
import { createLogger } from "../src/core/logger.js";
import { defineRoute } from "../src/http/route.js";
import { startSeason } from "../src/leaderboards/periods.js";
import { apiRoutes } from "../src/resources/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makeCosmetic, makePlayer, makeWorld, unique } from "./helpers/fixtures.js";

/** A write that stores two records, then fails: neither may remain. */
const probes = [
  defineRoute({
    method: "PATCH",
    path: "/probe/half-write",
    summary: "two writes, then a failure",
    description: "test probe",
    response: z.unknown(),
    callers: ["B"],
    body: z.strictObject({ name: z.string() }),
    async handler({ body }, { db, audit }) {
      const map = await db.parkourMap.create({ data: { name: body.name } });
      await audit({ action: "world.update", target: `parkour_map:${map.id}`, changes: { name: body.name } });
      await db.parkourMap.create({ data: { name: `${body.name} 2` } });
      throw new Error("failure after two statements");
    },
  }),
];

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ routes: [...apiRoutes, ...probes] });
  key = await t.key("user-B");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const send = (method: "post" | "patch", path: string, body: unknown, requestId: string) =>
  request(t.url)
    [method](`/api${path}`)
    .set("X-API-Key", key)
    .set("X-Request-Id", requestId)
    .send(body as object);
const entriesOf = (requestId: string) => prisma().auditLog.findMany({ where: { requestId } });

async function cli(argv: string[], now?: () => Date) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(
    argv,
    { config: t.config, db: t.database.db, logger: createLogger("silent"), now },
    {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
    },
  );
  return { code, stdout, stderr };
}

type Write = {
  body: unknown;
  action: string;
  target: (res: request.Response) => string;
  changes: (res: request.Response) => unknown;
  /** The same fields' values before an update; null for a write that creates or sends. */
  before: unknown;
};

/** One case per write route: a route that writes without an audit entry fails here. */
const writes: Record<string, () => Promise<Write>> = {
  "PATCH /cosmetic/update-cosmetic": async () => {
    const cosmetic = await makeCosmetic(prisma(), { description: "Shiny" });
    return {
      body: { id: cosmetic.id, price: 450, argument_EN: "A glowing halo", description: "null" },
      action: "cosmetic.update",
      target: () => `cosmetic:${cosmetic.id}`,
      changes: () => ({ price: 450, argumentEn: "A glowing halo", description: null }),
      before: { price: 250, argumentEn: "A hat", description: "Shiny" },
    };
  },
  "PATCH /freebuild/update-world": async () => {
    const world = await makeWorld(prisma());
    return {
      body: { id: world.id, gamerulePvp: "false", tag: "event", lastUsed: "2026-11-20T19:42:00+01:00" },
      action: "world.update",
      target: () => `world:${world.id}`,
      // As the world is answered: the moment in UTC, whole seconds.
      changes: () => ({ gamerulePvp: false, tag: "event", lastUsed: "2026-11-20T18:42:00Z" }),
      before: { gamerulePvp: true, tag: "event", lastUsed: "2026-05-05T10:00:00Z" },
    };
  },
  "POST /form/create-form": async () => {
    const player = await makePlayer(prisma());
    const answer = { video: "v", question1: "a", question2: "b", question3: "c", question4: "d", question5: "e" };
    return {
      body: { playerId: player.id, ...answer, stage1: true },
      action: "form.create",
      target: (res) => `form_answer:${res.body.id}`,
      changes: () => ({ playerId: player.id, ...answer, stage1: true, stage2: null, stage3: null, comment: "" }),
      before: null,
    };
  },
  "POST /website/create-reward-log": async () => {
    const player = await makePlayer(prisma());
    return {
      body: { playerId: player.id, rewardId: 42, rewardedAt: "2026-11-22T10:15:30.250+01:00" },
      action: "reward_log.create",
      target: (res) => `reward_log:${res.body.id}`,
      changes: () => ({ playerId: player.id, rewardId: 42, rewardedAt: "2026-11-22T09:15:30Z" }),
      before: null,
    };
  },
  "POST /admin/users/rotate-key": async () => {
    const username = unique("rotated-");
    await t.users.create(username);
    return {
      body: { username, graceSeconds: 60 },
      action: "api_user.rotate",
      target: () => `api_user:${username}`,
      changes: () => ({ key: "replaced", rotatedAt: expect.any(String), revokedAt: null, previousKeyExpiresAt: expect.any(String) }),
      // No key: what a rotation replaces is key material.
      before: { rotatedAt: null, revokedAt: null, previousKeyExpiresAt: null },
    };
  },
  "POST /admin/users/revoke": async () => {
    const username = unique("revoked-");
    await t.users.create(username);
    return {
      body: { username },
      action: "api_user.revoke",
      target: () => `api_user:${username}`,
      changes: () => ({ revokedAt: expect.any(String) }),
      before: { revokedAt: null },
    };
  },
  "PATCH /admin/users/allowed-addresses": async () => {
    const username = unique("pinned-");
    await t.users.create(username);
    return {
      body: { username, allowedAddresses: ["203.0.113.7"] },
      action: "api_user.allow_ip",
      target: () => `api_user:${username}`,
      changes: () => ({ allowedIps: "203.0.113.7/32" }),
      before: { allowedIps: null },
    };
  },
  "POST /admin/webhooks/add": () =>
    Promise.resolve({
      // A public address (example.com's): no delivery worker runs in this test.
      body: { url: "https://93.184.215.14/audited", events: ["form.created"] },
      action: "webhook.add",
      target: (res) => `webhook:${res.body.endpoint.id}`,
      changes: () => ({ url: "https://93.184.215.14/audited", events: ["form.created"] }),
      before: null,
    }),
  "POST /admin/webhooks/remove": async () => {
    const endpoint = await prisma().webhookEndpoint.create({ data: { url: "https://203.0.113.10/removed", secret: "plain:whsec_x" } });
    return {
      body: { endpointId: endpoint.id },
      action: "webhook.remove",
      target: () => `webhook:${endpoint.id}`,
      changes: () => ({ url: "https://203.0.113.10/removed" }),
      before: null,
    };
  },
  "POST /admin/webhooks/redeliver": async () => {
    const endpoint = await prisma().webhookEndpoint.create({ data: { url: "https://203.0.113.10/failed", secret: "plain:whsec_x", events: ["none.ever"] } });
    const event = await prisma().webhookEvent.create({ data: { type: "form.created", data: "{}" } });
    const delivery = await prisma().webhookDelivery.create({ data: { eventId: event.id, endpointId: endpoint.id, status: "failed", attempts: 3 } });
    return {
      body: { deliveryId: String(delivery.id) },
      action: "webhook.redeliver",
      target: () => `webhook_delivery:${delivery.id}`,
      changes: () => ({ previousStatus: "failed" }),
      before: null,
    };
  },
  "POST /admin/players/export": async () => {
    const player = await makePlayer(prisma());
    return {
      body: { id: player.id },
      action: "player.export",
      target: () => `player:${player.id}`,
      changes: () => ({ player: 1, infectedStats: 0, formAnswers: 0, rewardLogs: 0, worlds: 0, auditEntries: 0, events: 0 }),
      before: null,
    };
  },
  "POST /admin/players/erase": async () => {
    const player = await makePlayer(prisma());
    return {
      body: { id: player.id },
      action: "player.erase",
      target: () => `player:${player.id}`,
      changes: (res: request.Response) => ({ receipt: res.body.id, player: 1, infectedStats: 0, formAnswers: 0, rewardLogs: 0, worlds: 0 }),
      before: null,
    };
  },
  "POST /admin/seasons/start": () => {
    const name = unique("season-");
    return Promise.resolve({
      body: { name, endsAt: "2999-01-01T00:00:00Z" },
      action: "season.start",
      target: () => `season:${name}`,
      changes: (res: request.Response) => ({ startsAt: res.body.startsAt, endsAt: "2999-01-01T00:00:00.000Z" }),
      before: null,
    });
  },
  "POST /admin/seasons/end": async () => {
    const name = unique("season-");
    await startSeason(prisma(), { name }, OPERATOR);
    return {
      body: { name },
      action: "season.end",
      target: () => `season:${name}`,
      changes: (res: request.Response) => ({ endsAt: res.body.endsAt }),
      before: { endsAt: null },
    };
  },
  "POST /inscription": () => {
    const username = unique("audited-");
    return Promise.resolve({
      body: { username, role: "PLUGIN" },
      action: "api_user.register",
      target: () => `api_user:${username}`,
      changes: () => ({ username, role: "PLUGIN" }),
      before: null,
    });
  },
};

describe("the audit log", () => {
  it("covers every write route", () => {
    const writeRoutes = apiRoutes.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);
    expect(Object.keys(writes).sort()).toEqual(writeRoutes.sort());
  });

  it.each(Object.keys(writes))(
    "when %s succeeds, then exactly one entry names the API user, action, target, fields (before and after) and request",
    async (route) => {
      const [method, path] = route.split(" ") as ["POST" | "PATCH", string];
      const write = await writes[route]!();
      const requestId = randomUUID();
      const sent = Date.now();
      const res = await send(method.toLowerCase() as "post" | "patch", path, write.body, requestId);
      const answered = Date.now();
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      const entries = await entriesOf(requestId);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        actor: "user-B",
        action: write.action,
        target: write.target(res),
        changes: write.changes(res),
        before: write.before,
        requestId,
        clientAddress: expect.stringMatching(/127\.0\.0\.1$/),
      });
      expect(entries[0]!.at.getTime()).toBeGreaterThanOrEqual(sent - 1);
      expect(entries[0]!.at.getTime()).toBeLessThanOrEqual(answered);
    },
  );

  it("when a write fails (404, 409, 400 found by the handler), then it leaves no entry", async () => {
    const cosmetic = await makeCosmetic(prisma());
    const other = await makeCosmetic(prisma());
    const player = await makePlayer(prisma());
    const failures: [string, "post" | "patch", string, unknown][] = [
      ["404", "patch", "/cosmetic/update-cosmetic", { id: 2_000_000_000, price: 1 }],
      ["409", "patch", "/cosmetic/update-cosmetic", { id: cosmetic.id, name: other.name }],
      ["400", "patch", "/freebuild/update-world", { id: (await makeWorld(prisma())).id, ownerId: 2_000_000_000 }],
      ["400", "post", "/form/create-form", { playerId: 2_000_000_000, video: "v", question1: "", question2: "", question3: "", question4: "", question5: "" }],
      ["409", "post", "/website/create-reward-log", { playerId: 2_000_000_000, rewardId: 1 }],
      ["409", "post", "/inscription", { username: "user-B" }],
      ["400", "post", "/inscription", { username: "no" }],
      ["400", "post", "/admin/webhooks/add", { url: "http://127.0.0.1:9/private" }],
      ["404", "post", "/admin/webhooks/remove", { endpointId: 2_000_000_000 }],
      ["404", "post", "/admin/webhooks/redeliver", { deliveryId: "999999999" }],
    ];
    await send("post", "/website/create-reward-log", { playerId: player.id, rewardId: 3, rewardedAt: "2026-01-01T00:00:00Z" }, randomUUID());
    failures.push(["409", "post", "/website/create-reward-log", { playerId: player.id, rewardId: 3, rewardedAt: "2026-01-01T00:00:00Z" }]);
    for (const [status, method, path, body] of failures) {
      const requestId = randomUUID();
      const res = await send(method, path, body, requestId);
      expect(String(res.status), `${path} ${JSON.stringify(body)}`).toBe(status);
      expect(await entriesOf(requestId), path).toEqual([]);
    }
  });

  it("when a write fails after some of its statements, then none of them is stored, nor its audit entry", async () => {
    const requestId = randomUUID();
    const name = unique("half-");
    const res = await send("patch", "/probe/half-write", { name }, requestId);
    expect(res.status).toBe(500);
    expect(await prisma().parkourMap.count({ where: { name: { startsWith: name } } })).toBe(0);
    expect(await entriesOf(requestId)).toEqual([]);
  });

  it("when a write's transaction runs out of time, then 503 and nothing of it is stored", async () => {
    const slow = defineRoute({
      method: "PATCH",
      path: "/probe/slow-write",
      summary: "a write slower than its transaction may last",
      description: "test probe",
      response: z.unknown(),
      callers: ["B"],
      body: z.strictObject({ name: z.string() }),
      async handler({ body }, { db }) {
        await db.parkourMap.create({ data: { name: body.name } });
        await new Promise((resolve) => setTimeout(resolve, 400));
        return db.parkourMap.create({ data: { name: `${body.name} 2` } });
      },
    });
    const hurried = await startTestApp({ routes: [...apiRoutes, slow], env: { DB_STATEMENT_TIMEOUT_MS: "150" }, database: t.database });
    try {
      const name = unique("slow-");
      const res = await request(hurried.url).patch("/api/probe/slow-write").set("X-API-Key", key).send({ name });
      expect(res.body).toEqual({ code: 503, message: "Database unavailable, retry later" });
      expect(await prisma().parkourMap.count({ where: { name: { startsWith: name } } })).toBe(0);
    } finally {
      await hurried.close();
    }
  });

  it("when the operator creates, rotates and revokes a user, then one entry each names the operator", async () => {
    const username = unique("operated-");
    const before = await prisma().auditLog.count();
    expect((await cli(["user", "create", username, "--role", "BOT"])).code).toBe(0);
    expect((await cli(["user", "rotate", username])).code).toBe(0);
    expect((await cli(["user", "revoke", username])).code).toBe(0);
    expect((await cli(["user", "revoke", username])).code).toBe(1);
    expect((await cli(["user", "rotate", "ghost-user"])).code).toBe(1);
    const entries = await prisma().auditLog.findMany({ where: { target: `api_user:${username}` }, orderBy: { id: "asc" } });
    const actor = cliSource().actor;
    expect(entries.map((e) => [e.actor, e.action])).toEqual([
      [actor, "api_user.register"],
      [actor, "api_user.rotate"],
      [actor, "api_user.revoke"],
    ]);
    expect(entries[0]!.changes).toEqual({ username, role: "BOT" });
    expect(entries[1]!.changes).toEqual({ key: "replaced", rotatedAt: expect.any(String), revokedAt: null, previousKeyExpiresAt: expect.any(String) });
    expect(entries[2]!.changes).toEqual({ revokedAt: expect.any(String) });
    expect(await prisma().auditLog.count()).toBe(before + 3);
  });

  it("when the operator sets an IP allow-list and a key is then used from elsewhere, then one entry each: the change, and the refusal with its address", async () => {
    const guarded = await startTestApp({ database: t.database, env: { TRUST_PROXY: "loopback" } });
    try {
      const username = unique("guarded-");
      const guardedKey = await guarded.key(username);
      const set = await cli(["user", "allow-ip", username, "192.0.2.0/24"]);
      expect(set.code, set.stderr).toBe(0);
      const requestId = randomUUID();
      const refused = await request(guarded.url)
        .get("/api/parkour/get-all-maps")
        .set("X-API-Key", guardedKey)
        .set("X-Forwarded-For", "198.51.100.7")
        .set("X-Request-Id", requestId);
      expect(refused.status).toBe(403);
      const entries = await prisma().auditLog.findMany({ where: { target: `api_user:${username}` }, orderBy: { id: "asc" } });
      expect(entries.map((e) => [e.action, e.actor])).toEqual([
        ["api_user.register", "operator"],
        ["api_user.allow_ip", cliSource().actor],
        ["api_user.refused_ip", username],
      ]);
      expect(entries[1]!.changes).toEqual({ allowedIps: "192.0.2.0/24" });
      expect(entries[2]).toMatchObject({ requestId, clientAddress: "198.51.100.7" });
    } finally {
      await guarded.close();
    }
  });

  it("when the operator imports data, then one entry counts what was imported, and a refused import leaves none", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "audit-import-"));
    try {
      const good = path.join(dir, "good.json");
      writeFileSync(
        good,
        JSON.stringify({ parkourMaps: [{ id: 900_001, name: unique("Imported "), enable: true, spawnLocation: "0,0,0", difficulty: "easy" }] }),
      );
      const bad = path.join(dir, "bad.json");
      writeFileSync(bad, JSON.stringify({ parkourMaps: [{ id: -1 }] }));
      const before = await prisma().auditLog.count({ where: { action: "data.import" } });
      expect((await cli(["import", good])).code).toBe(0);
      expect((await cli(["import", bad])).code).toBe(1);
      const entries = await prisma().auditLog.findMany({ where: { action: "data.import" }, orderBy: { id: "asc" } });
      expect(entries).toHaveLength(before + 1);
      expect(entries.at(-1)).toMatchObject({ actor: cliSource().actor, target: "import", changes: { parkourMaps: 1 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("never holds key material nor webhook secrets, before or after a change: no key, hash or hint of any user, no signing secret", async () => {
    const username = unique("secretive-");
    const registered = await send("post", "/inscription", { username }, randomUUID());
    const keys = [key, registered.body.apiKey as string, (await cli(["user", "rotate", username])).stdout.trim()];
    // Rotated again through the API, and revoked: entries with the values they replaced.
    keys.push((await send("post", "/admin/users/rotate-key", { username, graceSeconds: 60 }, randomUUID())).body.apiKey as string);
    expect((await send("post", "/admin/users/revoke", { username }, randomUUID())).status).toBe(200);
    const added = await send("post", "/admin/webhooks/add", { url: "https://93.184.215.14/secretive" }, randomUUID());
    expect(added.status).toBe(201);
    const users = await prisma().apiUser.findMany({ select: { keyHash: true, keyHint: true, previousKeyHash: true, previousKeyHint: true } });
    const endpoints = await prisma().webhookEndpoint.findMany({ select: { secret: true } });
    const secrets = [
      ...keys,
      ...keys.map(hashApiKey),
      ...keys.map((k) => k.slice(4)),
      ...users.flatMap((u) => [u.keyHash, u.keyHint, u.previousKeyHash, u.previousKeyHint].filter((v): v is string => v !== null)),
      added.body.secret as string,
      (added.body.secret as string).replace(/^whsec_/, ""),
      ...endpoints.map((e) => e.secret),
    ];
    const conn = await t.database.db.connect();
    try {
      const [row] = await conn.query<{ text: string }>("SELECT string_agg(row_to_json(a)::text, E'\\n') AS text FROM audit_log a");
      const text = row!.text;
      expect(text).toContain(username);
      for (const secret of secrets) expect(text, secret).not.toContain(secret);
    } finally {
      await conn.release();
    }
  });
});

describe("an update's entry: the values before and after", () => {
  const adminGet = (query: string) => request(t.url).get(`/api/admin/audit?${query}`).set("X-API-Key", key);
  type Entry = { target: string; changes: Record<string, unknown>; before: Record<string, unknown> | null };
  const entriesFor = async (action: string, target: string): Promise<Entry[]> => {
    const res = await adminGet(`action=${action}&limit=500`);
    expect(res.status).toBe(200);
    return (res.body as { entries: Entry[] }).entries.filter((e) => e.target === target).reverse();
  };

  it("when a cosmetic is updated twice, then the admin API shows each change with the value it replaced", async () => {
    const cosmetic = await makeCosmetic(prisma(), { price: 400, collection: "Summer" });
    expect((await send("patch", "/cosmetic/update-cosmetic", { id: cosmetic.id, price: 450, collection: null }, randomUUID())).status).toBe(200);
    expect((await send("patch", "/cosmetic/update-cosmetic", { id: cosmetic.id, price: 500, lootbox: false }, randomUUID())).status).toBe(200);
    expect(await entriesFor("cosmetic.update", `cosmetic:${cosmetic.id}`)).toEqual([
      expect.objectContaining({ changes: { price: 450, collection: null }, before: { price: 400, collection: "Summer" } }),
      expect.objectContaining({ changes: { price: 500, lootbox: false }, before: { price: 450, lootbox: true } }),
    ]);
  });

  it("when updates of one cosmetic arrive at once, then each entry's before is the value the one before it wrote: none is lost or read twice", async () => {
    const cosmetic = await makeCosmetic(prisma(), { price: 1 });
    const prices = Array.from({ length: 8 }, (_, i) => 1001 + i);
    const results = await Promise.all(prices.map((price) => send("patch", "/cosmetic/update-cosmetic", { id: cosmetic.id, price }, randomUUID())));
    expect(results.map((r) => r.status)).toEqual(prices.map(() => 200));
    // In the order they were written (entry ids), each replaced the price of the previous one.
    const entries = await entriesFor("cosmetic.update", `cosmetic:${cosmetic.id}`);
    expect(entries).toHaveLength(prices.length);
    expect(entries.map((e) => e.before!.price)).toEqual([1, ...entries.slice(0, -1).map((e) => e.changes.price)]);
    expect(entries.map((e) => e.changes.price).sort()).toEqual(prices);
    expect((await prisma().cosmetic.findUniqueOrThrow({ where: { id: cosmetic.id } })).price).toBe(entries.at(-1)!.changes.price);
  });

  it("when a world update changes nothing it was not sent, then before names only the fields sent, as the world is answered", async () => {
    const world = await makeWorld(prisma(), { gameruleRandomTickSpeed: 3 });
    const res = await send(
      "patch",
      "/freebuild/update-world",
      { id: world.id, gameruleRandomTickSpeed: 10, lastUsed: "2026-11-24T08:00:00.900Z", spawnLocation: null },
      randomUUID(),
    );
    expect(res.status).toBe(200);
    expect(await entriesFor("world.update", `world:${world.id}`)).toEqual([
      expect.objectContaining({
        changes: { lastUsed: res.body.lastUsed, spawnLocation: null, gameruleRandomTickSpeed: 10 },
        before: { lastUsed: "2026-05-05T10:00:00Z", spawnLocation: "0,64,0", gameruleRandomTickSpeed: 3 },
      }),
    ]);
  });

  it("when an admin changes a user's allowed addresses twice, then the second entry shows the first list as before", async () => {
    const username = unique("moved-");
    await t.users.create(username);
    for (const allowedAddresses of [["203.0.113.7"], ["198.51.100.0/24", "2001:db8::/32"], null]) {
      expect((await send("patch", "/admin/users/allowed-addresses", { username, allowedAddresses }, randomUUID())).status).toBe(200);
    }
    expect((await entriesFor("api_user.allow_ip", `api_user:${username}`)).map((e) => [e.before, e.changes])).toEqual([
      [{ allowedIps: null }, { allowedIps: "203.0.113.7/32" }],
      [{ allowedIps: "203.0.113.7/32" }, { allowedIps: "198.51.100.0/24,2001:db8::/32" }],
      [{ allowedIps: "198.51.100.0/24,2001:db8::/32" }, { allowedIps: null }],
    ]);
  });

  it("when a user's key is rotated a second time, then before holds the first rotation's moments, and no key", async () => {
    const username = unique("twice-");
    await t.users.create(username);
    for (const graceSeconds of [60, 0]) expect((await send("post", "/admin/users/rotate-key", { username, graceSeconds }, randomUUID())).status).toBe(200);
    const [one, two] = await entriesFor("api_user.rotate", `api_user:${username}`);
    expect(one!.changes).toEqual({ key: "replaced", rotatedAt: expect.any(String), revokedAt: null, previousKeyExpiresAt: expect.any(String) });
    // The moments as stored, in one format: what the first rotation wrote is what the second replaced.
    expect(two!.before).toEqual({ rotatedAt: one!.changes.rotatedAt, revokedAt: null, previousKeyExpiresAt: one!.changes.previousKeyExpiresAt });
    expect(two!.changes.previousKeyExpiresAt).toBeNull();
  });

  it("when an entry was recorded before values before were kept, then it reads with before null", async () => {
    const target = `cosmetic:${unique("old-")}`;
    await prisma().$executeRaw`INSERT INTO audit_log (actor, action, target, changes) VALUES ('user-B', 'cosmetic.update', ${target}, '{"price": 5}'::jsonb)`;
    expect(await entriesFor("cosmetic.update", target)).toEqual([expect.objectContaining({ changes: { price: 5 }, before: null })]);
  });
});

describe("npm run cli -- audit", () => {
  it("when filtered by --user and --since, then it prints those entries, newest first", async () => {
    const player = await makePlayer(prisma());
    const website = await t.key("Website-Audit");
    const log = (apiKey: string, rewardId: number) =>
      request(t.url).post("/api/website/create-reward-log").set("X-API-Key", apiKey).send({ playerId: player.id, rewardId });
    // The website is in no caller group: its writes are refused (403) and leave no entry; user-B's are recorded.
    expect((await log(website, 1)).status).toBe(403);
    const old = await log(key, 101);
    const recent = await log(key, 102);
    await prisma().auditLog.updateMany({
      where: { target: `reward_log:${old.body.id}` },
      data: { at: new Date(Date.now() - 3 * 24 * 3600 * 1000) },
    });

    const all = await cli(["audit", "--user", "USER-b", "--limit", "1000"]);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^at\s+actor\s+action\s+target\s+changes\s+request\s+client\n/);
    const recentLine = all.stdout.indexOf(`reward_log:${recent.body.id}`);
    const oldLine = all.stdout.indexOf(`reward_log:${old.body.id}`);
    expect(recentLine).toBeGreaterThan(0);
    expect(oldLine).toBeGreaterThan(recentLine);
    expect(all.stdout).not.toContain("Website-Audit");

    const lastDay = await cli(["audit", "--user", "user-B", "--since", "24h"]);
    expect(lastDay.stdout).toContain(`reward_log:${recent.body.id}`);
    expect(lastDay.stdout).not.toContain(`reward_log:${old.body.id}`);
    expect(lastDay.stdout).toMatch(
      new RegExp(
        `\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+user-B\\s+reward_log\\.create\\s+reward_log:${recent.body.id}\\s+\\{"playerId":${player.id},"rewardId":102,`,
      ),
    );

    const since = new Date(Date.now() - 4 * 24 * 3600 * 1000).toISOString();
    const json = await cli(["audit", "--since", since, "--user", "user-B", "--json", "--limit", "1000"]);
    const lines = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { target: string; at: string; changes: unknown });
    expect(lines.map((l) => l.target)).toEqual(expect.arrayContaining([`reward_log:${old.body.id}`, `reward_log:${recent.body.id}`]));
    expect(lines.find((l) => l.target === `reward_log:${recent.body.id}`)!.changes).toEqual({
      playerId: player.id,
      rewardId: 102,
      rewardedAt: recent.body.rewardedAt,
    });

    const oneDayLater = await cli(["audit", "--since", "1d"], () => new Date(Date.now() + 2 * 24 * 3600 * 1000));
    expect(oneDayLater.stdout).toBe("No audit entries.\n");
  });

  it("when entries share a moment, then the one written last comes first (ids compared as numbers, 1000000000 before 999999999)", async () => {
    const at = new Date("2026-11-20T10:00:00Z");
    await prisma().$executeRaw`
      INSERT INTO audit_log (id, at, actor, action, target)
      VALUES (999999999, ${at}, 'same-moment', 'test.entry', 'entry:first'), (1000000000, ${at}, 'same-moment', 'test.entry', 'entry:second')`;
    const json = await cli(["audit", "--user", "same-moment", "--json"]);
    expect(
      json.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { target: string }).target),
    ).toEqual(["entry:second", "entry:first"]);
  });

  it("when --limit is reached, then stderr says so", async () => {
    const r = await cli(["audit", "--limit", "1"]);
    expect(r.stdout.trim().split("\n")).toHaveLength(2);
    expect(r.stderr).toBe("Showing the newest 1 entries; use --limit or --since for others.\n");
  });

  it("when an option is wrong, then a non-zero exit and a message", async () => {
    expect(await cli(["audit", "--since", "yesterday"])).toMatchObject({
      code: 1,
      stderr: "Invalid --since 'yesterday': expected an ISO 8601 date-time such as 2026-11-22T09:00:00Z, or a duration such as 30m, 24h or 7d\n",
    });
    expect((await cli(["audit", "--since", "2026-02-30T00:00:00Z"])).code).toBe(1);
    expect(await cli(["audit", "--limit", "0"])).toMatchObject({ code: 1, stderr: "Invalid --limit '0': expected a whole number from 1 to 100000\n" });
    const unknown = await cli(["audit", "--verbose"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--verbose'");
    expect((await cli(["audit", "extra"])).code).toBe(2);
    expect((await cli(["help"])).stdout).toContain("audit [--since WHEN] [--user NAME] [--limit N] [--json]");
  });
});
