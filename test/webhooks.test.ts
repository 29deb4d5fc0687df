import { Registry } from "prom-client";
import { Webhook } from "standardwebhooks";
import request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/cli.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { playerSummary } from "../src/entities/player.js";
import { pruneOutbox } from "../src/privacy/retention.js";
import { exportData, ImportError, importData } from "../src/transfer/transfer.js";
import { isPrivateAddress } from "../src/webhooks/address-guard.js";
import { webhookMetrics } from "../src/webhooks/metrics.js";
import { backoffMs, DeliveryWorker, type Outcome, UNRECORDABLE_ANSWER } from "../src/webhooks/worker.js";
import { LogCapture, startTestApp, type TestApp } from "./helpers/app.js";
import { makeCosmetic, makePlayer, makeWorld, unique } from "./helpers/fixtures.js";
import { FAST_WEBHOOKS, type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * Webhooks end to end, in one process: the API's writes, the real delivery
 * worker, and a real HTTP receiver on 127.0.0.1 (WEBHOOKS_ALLOW_PRIVATE=true).
 * A burst of writes: webhooks-burst.test.ts.
 */

let t: TestApp;
let key: string;
let receiver: Receiver;
const workers: DeliveryWorker[] = [];
const logs = new LogCapture();

beforeAll(async () => {
  t = await startTestApp({ env: FAST_WEBHOOKS });
  key = await t.key("user-A");
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await receiver?.close();
  // Each test starts without endpoints (their deliveries go with them).
  await t.database.db.prisma.webhookEndpoint.deleteMany();
});

async function cli(argv: string[], env: Record<string, string> = FAST_WEBHOOKS) {
  let stdout = "";
  let stderr = "";
  const config = loadConfig({ NODE_ENV: "test", ...env });
  const code = await runCli(
    argv,
    { config, db: t.database.db, logger: createLogger("silent") },
    {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
    },
  );
  return { code, stdout, stderr };
}

/** `webhook add` through the CLI: the endpoint's id and its secret, as printed. */
async function addWebhook(url: string, events?: string): Promise<{ id: number; secret: string }> {
  const result = await cli(["webhook", "add", url, ...(events ? ["--events", events] : [])]);
  expect(result.code, result.stderr).toBe(0);
  const [id, secret] = result.stdout.trim().split("\n");
  return { id: Number(id), secret: secret! };
}

function startWorker(env: Record<string, string> = {}, onOutcome?: (outcome: Outcome) => void): DeliveryWorker {
  const config = loadConfig({ NODE_ENV: "test", ...FAST_WEBHOOKS, ...env });
  const worker = new DeliveryWorker(t.database.db, config, createLogger("debug", logs), onOutcome);
  workers.push(worker);
  void worker.start();
  return worker;
}

const api = () => ({
  patch: (path: string, body: object) => request(t.url).patch(`/api${path}`).set("X-API-Key", key).send(body),
  post: (path: string, body: object) => request(t.url).post(`/api${path}`).set("X-API-Key", key).send(body),
});

interface Message {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

describe("webhooks", () => {
  it("when each kind of write commits, then its event arrives signed, verifiable with the secret, carrying the resource as the API answered it", async () => {
    receiver = await startReceiver();
    const { secret } = await addWebhook(receiver.url);
    startWorker();
    const prisma = t.database.db.prisma;
    const player = await makePlayer(prisma);
    const world = await makeWorld(prisma, { ownerId: player.id });
    const cosmetic = await makeCosmetic(prisma);
    const answers: Record<string, unknown> = {};
    answers["world.updated"] = (await api().patch("/freebuild/update-world", { id: world.id, tag: "spring" }).expect(200)).body;
    answers["cosmetic.updated"] = (await api().patch("/cosmetic/update-cosmetic", { id: cosmetic.id, price: 7 }).expect(200)).body;
    answers["form.created"] = (
      await api()
        .post("/form/create-form", { playerId: player.id, video: "v", question1: "a", question2: "b", question3: "c", question4: "d", question5: "e" })
        .expect(201)
    ).body;
    answers["reward_log.created"] = (await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 9 }).expect(201)).body;
    const username = unique("site-");
    await api().post("/inscription", { username }).expect(201);
    answers["api_user.created"] = { username, role: "USER" };

    await receiver.waitFor("five events", () => receiver.delivered().size === 5);
    const verifier = new Webhook(secret);
    const messages = receiver.received.map((r) => {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(String(r.headers["webhook-id"])).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(String(r.headers["webhook-signature"])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      // The library throws unless the signature (of id.timestamp.body) and the timestamp hold.
      return verifier.verify(r.body, r.headers as Record<string, string>) as Message;
    });
    expect(Object.fromEntries(messages.map((m) => [m.type, m.data]))).toEqual(answers);
    // The key of the new API user is nowhere in what was sent.
    expect(receiver.received.map((r) => r.body).join("")).not.toMatch(/gsk_/);
    // Another secret does not verify it.
    const other = new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`);
    expect(() => other.verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>)).toThrow();
  });

  it("when the URL carries credentials (user info, query), then the receiver gets them, and every place that shows the URL masks them", async () => {
    receiver = await startReceiver();
    const target = new URL(receiver.url);
    target.username = "hook-user";
    target.password = "s3cret";
    // A bare token (the parameter is the secret) and a repeated name.
    target.search = "?token=abc123&team=red&team=blue&BareS3cret";
    const shown = `http://***@${target.host}/hook?token=***&team=***&team=***&***`;
    const added = await cli(["webhook", "add", target.href, "--events", "reward_log.created"]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain(shown);
    const id = Number(added.stdout.split("\n")[0]);
    startWorker();
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 3 }).expect(201);
    await receiver.waitFor("the event", () => receiver.delivered().size === 1);
    expect(receiver.received[0]!.url).toBe("/hook?token=abc123&team=red&team=blue&BareS3cret");
    expect(receiver.received[0]!.headers.authorization).toBe(`Basic ${Buffer.from("hook-user:s3cret").toString("base64")}`);

    const listed = await cli(["webhook", "list", "--json"]);
    expect((JSON.parse(listed.stdout) as { url: string }[]).map((e) => e.url)).toEqual([shown]);
    expect((await cli(["webhook", "remove", String(id)])).stdout).toBe(`Removed webhook ${id} (${shown}).\n`);
    const audit = await t.database.db.prisma.auditLog.findMany({ where: { target: `webhook:${id}` }, orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.action, (a.changes as { url: string }).url])).toEqual([
      ["webhook.add", shown],
      ["webhook.remove", shown],
    ]);
    expect(JSON.stringify(audit.map((a) => a.changes))).not.toMatch(/s3cret|abc123|hook-user|BareS3cret/);
  });

  it("when an import writes records, then each one is announced as created or updated, in the API's shape", async () => {
    receiver = await startReceiver();
    await addWebhook(receiver.url, "player.created,player.updated,cosmetic.updated");
    startWorker();
    const existing = await makePlayer(t.database.db.prisma);
    // Records in the import format, from an export: the existing player renamed, and a new one.
    const { players } = (await exportData(t.database.db.prisma)) as { players: Record<string, unknown>[] };
    const old = players.find((p) => p.id === existing.id)!;
    const fresh = 900_000 + Math.floor(Math.random() * 1000);
    await importData(t.database.db.prisma, {
      players: [
        { ...old, pseudo: unique("old") },
        { ...old, id: fresh, pseudo: unique("new"), token: unique("tok"), uuid: undefined },
      ].map((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined))),
    });
    await receiver.waitFor("two events", () => receiver.delivered().size === 2);
    const byType = Object.fromEntries(receiver.received.map((r) => JSON.parse(r.body) as Message).map((m) => [m.type, m.data]));
    expect(Object.keys(byType).sort()).toEqual(["player.created", "player.updated"]);
    // Each record as the API answers every caller: a player's summary, never its token or ip.
    const after = (await exportData(t.database.db.prisma)) as { players: Record<string, unknown>[] };
    const summary = (id: number) => pick(after.players.find((p) => p.id === id)!, playerSummary.names);
    expect(byType["player.created"]).toEqual(summary(fresh));
    expect(byType["player.updated"]).toEqual(summary(existing.id));
    expect(byType["player.created"]).not.toHaveProperty("token");
  });

  it("when a write rolls back, or is refused, then nothing is announced", async () => {
    receiver = await startReceiver();
    const { id } = await addWebhook(receiver.url);
    const prisma = t.database.db.prisma;
    const [a, b] = [await makeCosmetic(prisma), await makeCosmetic(prisma)];
    const existing = await makePlayer(prisma);
    const { players } = (await exportData(prisma)) as { players: Record<string, unknown>[] };
    // An import applied in order collides on a swap of names after its player was written (and announced): all rolled back.
    const failing = importData(prisma, {
      players: [{ ...players.find((p) => p.id === existing.id)!, pseudo: unique("renamed") }].map((p) =>
        Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)),
      ),
      cosmetics: [
        { ...cosmeticRecord(a), name: b.name },
        { ...cosmeticRecord(b), name: a.name },
      ],
    });
    await expect(failing).rejects.toBeInstanceOf(ImportError);
    await api().patch("/freebuild/update-world", { id: 2_000_000_000, tag: "x" }).expect(404);
    await api().post("/website/create-reward-log", { playerId: 2_000_000_000, rewardId: 1 }).expect(409);
    await api().post("/inscription", { username: "user-A" }).expect(409);
    expect(await prisma.webhookEvent.count({ where: { deliveries: { some: { endpointId: id } } } })).toBe(0);
    expect(await prisma.webhookDelivery.count({ where: { endpointId: id } })).toBe(0);
  });

  it("when the receiver is down for a while, then every event arrives once it is back, with the same webhook-id on each attempt", async () => {
    receiver = await startReceiver();
    let down = true;
    receiver.answer = () => (down ? 503 : 200);
    await addWebhook(receiver.url);
    startWorker();
    const player = await makePlayer(t.database.db.prisma);
    for (let i = 0; i < 5; i++)
      await api()
        .post("/website/create-reward-log", { playerId: player.id, rewardId: 100 + i })
        .expect(201);
    await receiver.waitFor("retries", () => receiver.received.length >= 15);
    down = false;
    await receiver.waitFor("five deliveries", () => receiver.delivered().size === 5);
    const failedIds = new Set(receiver.received.filter((r) => r.status === 503).map((r) => r.headers["webhook-id"]));
    expect([...failedIds].sort()).toEqual([...receiver.delivered().keys()].sort());
    const line = logs.lines.find((l) => l.msg === "webhook delivery attempt failed")!;
    expect(line).toMatchObject({ status: 503, answer: "receiver says 503" });
    expect(logs.raw.join("\n")).not.toMatch(/whsec_/);
  });

  it("when a receiver keeps failing past WEBHOOKS_RETRY_FOR_MS, then the delivery is failed, and redeliver sends it again", async () => {
    receiver = await startReceiver();
    let up = false;
    receiver.answer = () => (up ? 200 : 500);
    const { id } = await addWebhook(receiver.url, "reward_log.created");
    startWorker({ WEBHOOKS_RETRY_FOR_MS: "1000" });
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 1 }).expect(201);
    const prisma = t.database.db.prisma;
    await waitUntil(async () => (await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))?.status === "failed");
    const shown = await cli(["webhook", "deliveries", String(id)]);
    expect(shown.stdout).toMatch(/reward_log\.created\s+msg_\w+\s+failed\s+\d+/);
    expect(shown.stdout).toContain("500 receiver says 500");
    const delivery = (await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))!;
    up = true;
    const again = await cli(["webhook", "redeliver", String(delivery.id)]);
    expect(again.code, again.stderr).toBe(0);
    await receiver.waitFor("the redelivery", () => receiver.delivered().size === 1);
    await waitUntil(async () => (await prisma.webhookDelivery.findUnique({ where: { id: delivery.id } }))?.status === "delivered");
    expect((await cli(["webhook", "redeliver", "999999"])).stderr).toMatch(/not found/);
  });

  it("when a receiver answers with a NUL byte and bytes that are not UTF-8, then the delivery is delivered once, its answer stored without them", async () => {
    receiver = await startReceiver();
    receiver.answer = (r, res) => {
      res.writeHead(200);
      res.end(Buffer.concat([Buffer.from("ok\u0000tail "), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from(" end")]));
      receiver.received.push({ ...r, status: 200 });
      return "handled";
    };
    const { id } = await addWebhook(receiver.url, "reward_log.created");
    startWorker();
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 5 }).expect(201);
    const prisma = t.database.db.prisma;
    await waitUntil(async () => (await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))?.status === "delivered", 10_000);
    const delivery = (await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))!;
    expect(delivery).toMatchObject({ attempts: 1, lastStatus: 200 });
    expect(delivery.lastResponse).toMatch(/^ok\uFFFDtail \uFFFD+ end$/);
    expect(receiver.received).toHaveLength(1);
  });

  it("when the outcome of an attempt cannot be recorded, then it is recorded without the answer, and the delivery backs off and fails as any other", async () => {
    const prisma = t.database.db.prisma;
    // A database that refuses this answer (as PostgreSQL refused a NUL byte): a trigger, on this test's database.
    await prisma.$executeRawUnsafe(`CREATE FUNCTION refuse_unrecordable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW."lastResponse" LIKE '%unrecordable%' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await prisma.$executeRawUnsafe(
      `CREATE TRIGGER refuse_unrecordable BEFORE UPDATE ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_unrecordable()`,
    );
    try {
      receiver = await startReceiver();
      receiver.answer = (r, res) => {
        res.writeHead(500).end("unrecordable");
        receiver.received.push({ ...r, status: 500 });
        return "handled";
      };
      const { id } = await addWebhook(receiver.url, "reward_log.created");
      // A lease of 6 s (timeout + 5 s): the retries, 50 to 200 ms apart, must not wait for it (else one attempt in 1.5 s).
      startWorker({ WEBHOOKS_RETRY_FOR_MS: "1500" });
      const player = await makePlayer(prisma);
      await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 6 }).expect(201);
      await waitUntil(async () => (await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))?.status === "failed");
      const delivery = (await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))!;
      expect(delivery.lastStatus).toBe(500);
      expect(delivery.lastResponse).toBe(UNRECORDABLE_ANSWER);
      expect(delivery.attempts).toBeGreaterThan(2);
      expect(receiver.received).toHaveLength(delivery.attempts);
    } finally {
      await prisma.$executeRawUnsafe("DROP TRIGGER refuse_unrecordable ON webhook_deliveries");
      await prisma.$executeRawUnsafe("DROP FUNCTION refuse_unrecordable()");
    }
  });

  it("when a receiver answers with terminal controls, then webhook deliveries shows them escaped, in the table and in --json", async () => {
    receiver = await startReceiver();
    const hostile = "\u001b[2J\u001b]0;pwned\u0007\u001b[31mred\u009b31m\u202egnp.exe\u007f\u2066x";
    receiver.answer = (r, res) => {
      res.writeHead(500).end(hostile);
      receiver.received.push({ ...r, status: 500 });
      return "handled";
    };
    const { id } = await addWebhook(receiver.url, "reward_log.created");
    startWorker({ WEBHOOKS_RETRY_FOR_MS: "1000" });
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 7 }).expect(201);
    const prisma = t.database.db.prisma;
    await waitUntil(async () => (await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))?.status === "failed");
    // Stored as it came: the CLI escapes what it prints.
    expect((await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))!.lastResponse).toBe(hostile);
    // eslint-disable-next-line no-control-regex
    const controls = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
    const shown = await cli(["webhook", "deliveries", String(id)]);
    expect(shown.stdout).not.toMatch(controls);
    expect(shown.stdout).toContain("500 \\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mred\\x9b31m\\u202egnp.exe\\x7f\\u2066x");
    const json = await cli(["webhook", "deliveries", String(id), "--json"]);
    expect(json.stdout).not.toMatch(controls);
    expect((JSON.parse(json.stdout) as { lastResponse: string }).lastResponse).toBe(hostile);
  });

  it("when a receiver answers a redirect, then it is not followed and the delivery is retried", async () => {
    const elsewhere = await startReceiver("/elsewhere");
    receiver = await startReceiver();
    receiver.answer = (_r, res) => {
      res.writeHead(302, { Location: elsewhere.url }).end();
      receiver.received.push({ ..._r, status: 302 });
      return "handled";
    };
    const { id } = await addWebhook(receiver.url, "reward_log.created");
    startWorker();
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 2 }).expect(201);
    await receiver.waitFor("two attempts", () => receiver.received.length >= 2);
    expect(elsewhere.received).toEqual([]);
    const [delivery] = (await cli(["webhook", "deliveries", String(id), "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(delivery).toMatchObject({ status: "pending", lastStatus: 302 });
    expect(String(delivery!.lastResponse)).toContain("not followed");
    await elsewhere.close();
  });

  it("when a receiver does not answer in time, then the attempt counts as failed", async () => {
    receiver = await startReceiver();
    receiver.answer = () => "hang";
    const { id } = await addWebhook(receiver.url, "reward_log.created");
    startWorker({ WEBHOOKS_TIMEOUT_MS: "200" });
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 3 }).expect(201);
    const prisma = t.database.db.prisma;
    await waitUntil(async () =>
      ((await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))?.lastResponse ?? "").includes("no answer within 200 ms"),
    );
  });

  it("when private, loopback or link-local targets are not allowed, then webhook add refuses them, and so does delivery", async () => {
    const strict = { WEBHOOKS_ALLOW_PRIVATE: "false" };
    for (const url of [
      "http://127.0.0.1:9/hook",
      "http://localhost/hook",
      "http://169.254.169.254/latest",
      "http://[::1]/x",
      "http://10.1.2.3/",
      "http://192.168.0.4/",
      "http://[fe80::1]/",
    ]) {
      const result = await cli(["webhook", "add", url], strict);
      expect(result.code, url).toBe(1);
      expect(result.stderr, url).toMatch(/private, loopback or link-local/);
    }
    for (const [url, message] of [
      ["ftp://example.org/", /expected http:\/\/ or https:\/\//],
      ["not a url", /url: not a URL/],
    ] as const) {
      expect((await cli(["webhook", "add", url], strict)).stderr).toMatch(message);
    }
    expect((await cli(["webhook", "add", "https://example.org/", "--events", "world.updated,nope"])).stderr).toMatch(/events: unknown nope/);
    // A refused URL and a misspelt event: the event is named first (and the known ones listed), not the URL.
    const misspelt = await cli(["webhook", "add", "http://127.0.0.1:9/hook", "--events", "reward.created"], strict);
    expect(misspelt.code).toBe(1);
    expect(misspelt.stderr).toMatch(/^events: unknown reward\.created; known: reward_log\.created, /);
    // Added while allowed, delivered by an instance where it is not: refused at connect time.
    receiver = await startReceiver();
    const { id } = await addWebhook(receiver.url, "reward_log.created");
    startWorker(strict);
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 4 }).expect(201);
    const prisma = t.database.db.prisma;
    await waitUntil(async () => ((await prisma.webhookDelivery.findFirst({ where: { endpointId: id } }))?.lastResponse ?? "").startsWith("refused"));
    expect(receiver.received).toEqual([]);
  });

  it("when endpoints are listed and removed, then the CLI shows them with their counts, and a removed one gets nothing more", async () => {
    receiver = await startReceiver();
    const { id, secret } = await addWebhook(receiver.url, "world.updated,cosmetic.updated");
    const listed = await cli(["webhook", "list"]);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+${receiver.url.replace(/[.]/g, "\\.")}\\s+world\\.updated,cosmetic\\.updated\\s`, "m"));
    expect(listed.stdout).not.toContain(secret);
    const json = JSON.parse((await cli(["webhook", "list", "--json"])).stdout) as { id: number; events: string[] }[];
    expect(json.find((e) => e.id === id)?.events).toEqual(["world.updated", "cosmetic.updated"]);
    expect((await cli(["webhook", "remove", String(id)])).stdout).toContain(`Removed webhook ${id}`);
    expect((await cli(["webhook", "remove", String(id)])).stderr).toMatch(/Webhook \d+ not found/);
    expect((await cli(["webhook", "remove", "abc"])).stderr).toMatch(/Invalid webhook id 'abc'/);
    expect((await cli(["webhook", "list"])).stdout).toBe("No webhooks.\n");
  });

  it("when deliveries wait and fail, then the metrics show the backlog, its oldest age and the attempts by outcome", async () => {
    receiver = await startReceiver();
    let up = false;
    receiver.answer = () => (up ? 200 : 500);
    await addWebhook(receiver.url, "reward_log.created");
    const registry = new Registry();
    const count = webhookMetrics(registry, t.database.db);
    const metric = async (name: string, labels = "") =>
      Number(new RegExp(`^${name}${labels.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(await registry.metrics())?.[1]);
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 77 }).expect(201);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 78 }).expect(201);
    expect(await metric("webhook_outbox_backlog")).toBe(2);
    await new Promise((r) => setTimeout(r, 50));
    expect(await metric("webhook_outbox_oldest_pending_seconds")).toBeGreaterThan(0);
    startWorker({}, count);
    await receiver.waitFor("failed attempts", () => receiver.received.length >= 2);
    up = true;
    await receiver.waitFor("two deliveries", () => receiver.delivered().size === 2);
    await waitUntil(async () => (await metric("webhook_outbox_backlog")) === 0);
    expect(await metric("webhook_delivery_attempts_total", '{outcome="delivered"}')).toBe(2);
    expect(await metric("webhook_delivery_attempts_total", '{outcome="retrying"}')).toBeGreaterThanOrEqual(2);
    expect(await metric("webhook_outbox_oldest_pending_seconds")).toBe(0);
  });

  it("when WEBHOOKS_SECRET_KEY is set, then the secret is stored encrypted, and deliveries are signed with it all the same", async () => {
    const keyed = { ...FAST_WEBHOOKS, WEBHOOKS_SECRET_KEY: "an operator's key of 32 characters or more" };
    receiver = await startReceiver();
    const added = await cli(["webhook", "add", receiver.url, "--events", "reward_log.created"], keyed);
    const [id, secret] = added.stdout.trim().split("\n");
    const stored = (await t.database.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: Number(id) } })).secret;
    expect(stored).toMatch(/^v1:/);
    expect(stored).not.toContain(secret!.slice("whsec_".length, 20));
    startWorker(keyed);
    const player = await makePlayer(t.database.db.prisma);
    await api().post("/website/create-reward-log", { playerId: player.id, rewardId: 5 }).expect(201);
    await receiver.waitFor("the delivery", () => receiver.delivered().size === 1);
    expect(() => new Webhook(secret!).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>)).not.toThrow();
  });

  it("when retries back off, then each wait doubles up to the cap, between half and all of it; and mapped or private addresses count as private", () => {
    const config = { webhooksBackoffBaseMs: 1000, webhooksBackoffMaxMs: 10_000 };
    expect([1, 2, 3, 4, 5, 60].map((n) => backoffMs(n, config, () => 1))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect([1, 2, 5].map((n) => backoffMs(n, config, () => 0))).toEqual([500, 1000, 5000]);
    for (const address of [
      "127.0.0.1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "169.254.169.254",
      "fd00::1",
      "::",
      "0.0.0.0",
      "100.64.1.1",
      // IPv6 forms that embed an IPv4 address: compatible, translated (SIIT), local-use NAT64, 6to4.
      "::7f00:1",
      "::ffff:0:a00:1",
      "64:ff9b:1::a00:1",
      "2002:a00:1::1",
      // Site-local, Teredo, and the documentation ranges (never a real receiver).
      "fec0::1",
      "2001::1",
      "2001:db8::1",
      "192.0.2.1",
      "198.51.100.7",
      "203.0.113.1",
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ["93.184.215.14", "2606:4700::1111", "::ffff:93.184.215.14"]) expect(isPrivateAddress(address), address).toBe(false);
  });

  it("when events are older than WEBHOOKS_RETAIN_DAYS, then those with no pending delivery are pruned with their deliveries, the others kept", async () => {
    receiver = await startReceiver();
    await addWebhook(receiver.url, "reward_log.created");
    const worker = startWorker({ WEBHOOKS_RETAIN_DAYS: "7" });
    const player = await makePlayer(t.database.db.prisma);
    for (const rewardId of [71, 72, 73]) await api().post("/website/create-reward-log", { playerId: player.id, rewardId }).expect(201);
    await receiver.waitFor("three deliveries", () => receiver.delivered().size === 3);
    await worker.stop();
    const prisma = t.database.db.prisma;
    const events = await prisma.$queryRaw<{ id: bigint; rewardId: number }[]>`
      SELECT id, (data::jsonb->>'rewardId')::int AS "rewardId" FROM webhook_events WHERE type = 'reward_log.created' AND (data::jsonb->>'rewardId')::int IN (71, 72, 73)`;
    const idOf = (rewardId: number) => events.find((e) => e.rewardId === rewardId)!.id;
    // 71 (and every event before it): delivered 8 days ago; 72: 8 days old but its delivery pending again; 73: delivered today.
    await prisma.$executeRaw`UPDATE webhook_events SET "createdAt" = now() - interval '8 days' WHERE id <= ${idOf(72)}`;
    await prisma.$executeRaw`UPDATE webhook_deliveries SET status = 'pending', "nextAttemptAt" = now() + interval '1 day' WHERE "eventId" = ${idOf(72)}`;
    const before = await prisma.webhookEvent.count({ where: { id: { lt: idOf(72) } } });
    expect(await pruneOutbox(prisma, 7)).toBe(before);
    const left = await prisma.$queryRaw<{ eventId: bigint }[]>`
      SELECT "eventId" FROM webhook_deliveries WHERE "eventId" IN (${idOf(71)}, ${idOf(72)}, ${idOf(73)}) ORDER BY "eventId"`;
    expect(left.map((d) => d.eventId)).toEqual([idOf(72), idOf(73)]);
  });
});

/** A cosmetic in the import format: the row without its version. */
function cosmeticRecord(c: Awaited<ReturnType<typeof makeCosmetic>>): Record<string, unknown> {
  const record: Record<string, unknown> = { ...c };
  delete record.version;
  return record;
}

async function waitUntil(test: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > until) throw new Error(`condition not met after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function pick(record: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((n) => [n, record[n]]));
}
