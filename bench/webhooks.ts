// Webhook delivery, measured: latency from a write's commit to its receipt, and throughput.
//   npx tsx bench/webhooks.ts [--instances 2] [--latency 300] [--burst 3000] [--concurrency 32]
// Creates a database on the PostgreSQL server of DATABASE_URL (default: the local one), starts the
// service (src/main.ts, `--instances` processes sharing it), a receiver on 127.0.0.1 answering 204,
// and one endpoint (reward_log.created). Then:
//   latency: `--latency` reward logs, one at a time, 20 ms apart; for each, the receipt time minus the
//            time its 201 arrived (the commit happened before: an upper bound on commit → receipt is
//            receipt − request sent, shown too);
//   throughput: `--burst` reward logs at `--concurrency` at once, spread over the instances; writes/s,
//            and deliveries/s from the first write to the last receipt.
// Writes the section between its markers in bench/results.md. Load goes to 127.0.0.1 only.
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { ApiUsers } from "../src/users/users.js";
import { addEndpoint } from "../src/webhooks/manage.js";
import { loadAverage } from "./proc.js";
import { scratchDatabase, startService as startServiceOn } from "./service.js";
import { percentile, round } from "./stats.js";

const { values } = parseArgs({
  options: {
    instances: { type: "string", default: "2" },
    latency: { type: "string", default: "300" },
    burst: { type: "string", default: "3000" },
    concurrency: { type: "string", default: "32" },
    out: { type: "string", default: "bench/results.md" },
  },
});
const root = path.resolve(import.meta.dirname, "..");
const scratch = scratchDatabase("bench_webhooks");
const dbUrl = scratch.url;

const received = new Map<number, number>(); // rewardId → receipt (ms, performance.now)
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = performance.now();
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { rewardId: number } };
    if (!received.has(message.data.rewardId)) received.set(message.data.rewardId, at);
    res.writeHead(204).end();
  });
});

const startService = () => startServiceOn(dbUrl, { WEBHOOKS_ALLOW_PRIVATE: "true" });

async function waitFor(test: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!test()) {
    if (Date.now() > until) throw new Error(`deliveries did not all arrive in time (${received.size} received)`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function main(): Promise<void> {
  const instances = Number(values.instances);
  await scratch.create();
  const services: ChildProcess[] = [];
  const db = openDatabase({ kind: "postgres", url: dbUrl, poolMax: 2 });
  try {
    await migrate(db, createLogger("silent"));
    receiver.listen(0, "127.0.0.1");
    await new Promise((r) => receiver.once("listening", r));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await addEndpoint(
      db.prisma,
      { webhooksAllowPrivate: true, webhooksSecretKey: undefined },
      { url: hook, events: ["reward_log.created"] },
      { actor: "bench" },
    );
    const { apiKey } = await new ApiUsers(db.prisma).create("user-B");
    const player = await db.prisma.player.create({
      data: { pseudo: "bench", token: "t", ip: "203.0.113.1", firstConnection: new Date(), totalTimeConnection: 0 },
    });
    const urls: string[] = [];
    for (let i = 0; i < instances; i++) {
      const s = await startService();
      services.push(s.child);
      urls.push(s.url);
    }
    let next = 1;
    const write = async (url: string) => {
      const rewardId = next++;
      const sent = performance.now();
      const res = await fetch(`${url}/api/website/create-reward-log`, {
        method: "POST",
        headers: { "X-API-Key": apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ playerId: player.id, rewardId }),
      });
      if (res.status !== 201) throw new Error(`write answered ${res.status}: ${await res.text()}`);
      return { rewardId, sent, answered: performance.now() };
    };

    // Warm-up: connections, JIT.
    for (let i = 0; i < 50; i++) await write(urls[i % urls.length]!);
    await waitFor(() => received.size === 50, 30_000);

    // Latency, one write at a time.
    const samples: { rewardId: number; sent: number; answered: number }[] = [];
    for (let i = 0; i < Number(values.latency); i++) {
      samples.push(await write(urls[i % urls.length]!));
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitFor(() => samples.every((s) => received.has(s.rewardId)), 60_000);
    const fromAnswer = samples.map((s) => received.get(s.rewardId)! - s.answered).sort((a, b) => a - b);
    const fromRequest = samples.map((s) => received.get(s.rewardId)! - s.sent).sort((a, b) => a - b);

    // Throughput, a burst.
    const burst = Number(values.burst);
    const first = next;
    const started = performance.now();
    let issued = 0;
    await Promise.all(
      Array.from({ length: Number(values.concurrency) }, async (_, worker) => {
        while (issued < burst) {
          issued++;
          await write(urls[worker % urls.length]!);
        }
      }),
    );
    const written = performance.now();
    const ids = Array.from({ length: next - first }, (_, i) => first + i);
    await waitFor(() => ids.every((id) => received.has(id)), 300_000);
    const lastReceipt = Math.max(...ids.map((id) => received.get(id)!));
    const writesPerSecond = ids.length / ((written - started) / 1000);
    const deliveriesPerSecond = ids.length / ((lastReceipt - started) / 1000);

    const load = loadAverage();
    const section = [
      "<!-- bench/webhooks.ts: start -->",
      "## Webhooks",
      "",
      `Run of ${new Date().toISOString().slice(0, 16)}Z (\`npx tsx bench/webhooks.ts --instances ${instances} --latency ${values.latency} --burst ${burst} --concurrency ${values.concurrency}\`): ` +
        `${instances} instance(s) of the service on one PostgreSQL, one endpoint on a receiver answering 204, all on this machine; Node ${process.version}; load average ${load} at the end.`,
      "",
      "| measure | p50 ms | p99 ms | max ms |",
      "|---|---|---|---|",
      `| latency, one write at a time: receipt − the write's 201 (commit is before it) | ${round(percentile(fromAnswer, 50))} | ${round(percentile(fromAnswer, 99))} | ${round(fromAnswer.at(-1)!)} |`,
      `| latency, one write at a time: receipt − the write's request sent | ${round(percentile(fromRequest, 50))} | ${round(percentile(fromRequest, 99))} | ${round(fromRequest.at(-1)!)} |`,
      "",
      `Burst of ${ids.length} create-reward-log at ${values.concurrency} at once: ${Math.round(writesPerSecond)} writes/s; all ${ids.length} delivered ` +
        `${((lastReceipt - written) / 1000).toFixed(2)} s after the last write's answer, ${Math.round(deliveriesPerSecond)} deliveries/s from the first write to the last receipt.`,
      "<!-- bench/webhooks.ts: end -->",
    ].join("\n");
    console.log(section);
    const file = path.resolve(root, values.out);
    const current = existsSync(file) ? readFileSync(file, "utf8") : "";
    const marked = /<!-- bench\/webhooks\.ts: start -->[\s\S]*<!-- bench\/webhooks\.ts: end -->/;
    writeFileSync(file, marked.test(current) ? current.replace(marked, section) : `${current.trimEnd()}\n\n${section}\n`.trimStart());
  } catch (error) {
    console.error(await db.prisma.$queryRaw`SELECT status, "lastResponse", count(*)::int FROM webhook_deliveries GROUP BY 1, 2`);
    throw error;
  } finally {
    for (const s of services) s.kill("SIGTERM");
    await Promise.all(services.map((s) => new Promise((r) => (s.exitCode !== null ? r(null) : s.once("exit", r)))));
    receiver.close();
    await db.close();
    await scratch.drop();
  }
}

await main();
