/**
 * The large-list measures of `npm run bench -- --lists` (issue 12), on the community loaded: 4 whole
 * lists of players at once on the lean service and on each reference server (time to first byte,
 * time to the last, the server's RSS meanwhile), then on the service a walk of every page
 * (limit=1000) and a sync of 1 % changed rows against the whole list. Returns the markdown lines of
 * its section.
 */
import { spawn } from "node:child_process";
import pg from "pg";
import { median } from "./stats.js";
import { type Timed, timedGet } from "./timed-get.js";

/** Time a list reader may take, from its start to its answer. */
const READER_LIMIT_MS = 10 * 60_000;

/**
 * `count` readers of the same URL, each a process of its own (bench/read-list.ts), sent at once: four
 * website back ends, not one process whose own event loop, busy with the first list's chunks, held the
 * others' first bytes back (by up to 0.8 s at 1,000,000 players).
 */
async function readersAtOnce(count: number, url: string, key: string): Promise<Omit<Timed, "headers">[]> {
  const readers = Array.from({ length: count }, () =>
    spawn(process.execPath, ["--import", "tsx", "bench/read-list.ts", url, key], { stdio: ["pipe", "pipe", "inherit"] }),
  );
  // A reader that neither answers nor fails within READER_LIMIT_MS is a failure of the run, not a wait forever.
  const limit = setTimeout(() => readers.forEach((r) => r.kill("SIGKILL")), READER_LIMIT_MS);
  try {
    const outputs = readers.map((reader) => {
      let out = "";
      let told: () => void;
      const ready = new Promise<void>((resolve) => (told = resolve));
      reader.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("ready\n")) told();
      });
      const done = new Promise<string>((resolve, reject) => {
        reader.once("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`a list reader of ${url} ended with ${code ?? "a signal"}: ${out}`))));
      });
      done.catch(() => undefined);
      return { ready: Promise.race([ready, done.then(() => undefined)]), done };
    });
    await Promise.all(outputs.map((o) => o.ready));
    for (const reader of readers) reader.stdin.end("go\n");
    const results = await Promise.all(outputs.map((o) => o.done));
    return results.map((out) => JSON.parse(out.split("\n").filter(Boolean).at(-1)!) as Omit<Timed, "headers">);
  } finally {
    clearTimeout(limit);
  }
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/** A server that answers the same lists: its label, its base URL and its RSS now (MB). */
export interface ListServer {
  label: string;
  base: string;
  rssMb: () => number;
}

/** 4 whole lists of players at once on one server: each list's first and last byte, the four's time, the server's peak RSS meanwhile. */
async function fourAtOnce(server: ListServer, key: string): Promise<{ four: Omit<Timed, "headers">[]; ms: number; before: number; peak: number }> {
  let peak = server.rssMb();
  const before = peak;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, server.rssMb());
    } catch {
      // The server is gone: the lists fail, and say so.
    }
  }, 20);
  const t0 = performance.now();
  try {
    const four = await readersAtOnce(4, `${server.base}/api/player/get-all-players`, key);
    return { four, ms: performance.now() - t0, before, peak };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * The service first, then each reference server (same data, same runtime), one after another: 4 whole
 * lists of players at once on each, read by fetch (autocannon's parser, not the servers, bounds whole
 * lists of a large community).
 */
export async function measureLists(
  service: ListServer,
  references: { start: () => Promise<ListServer>; stop: () => Promise<void> }[],
  key: string,
  dbUrl: string,
): Promise<string[]> {
  const players = `${service.base}/api/player/get-all-players`;
  const lines = ["", "## Large lists (issue 12)", ""];

  const runs = [{ server: service, run: await fourAtOnce(service, key) }];
  for (const reference of references) {
    const server = await reference.start();
    try {
      runs.push({ server, run: await fourAtOnce(server, key) });
    } finally {
      await reference.stop();
    }
  }
  const serviceMs = runs[0]!.run.ms;
  lines.push(
    `4 whole lists of players at once (${mb(runs[0]!.run.four[0]!.bytes)} MB each), on each server in turn:`,
    "",
    "| server | first byte (ms) | last byte (s) | all four (s) | lists/s | service ÷ this, lists/s | RSS before → peak (MB) |",
    "|---|---|---|---|---|---|---|",
    ...runs.map(
      ({ server, run }) =>
        `| ${server.label} | ${run.four.map((r) => r.firstByteMs.toFixed(0)).join(", ")} | ${run.four.map((r) => (r.totalMs / 1000).toFixed(1)).join(", ")} | ` +
        `${(run.ms / 1000).toFixed(1)} | ${((4 * 1000) / run.ms).toFixed(2)} | ${(run.ms / serviceMs).toFixed(2)}× | ${run.before.toFixed(0)} → ${run.peak.toFixed(0)} |`,
    ),
    "",
  );
  const alone = await timedGet(players, key);
  lines.push(`One whole list alone: first byte ${alone.firstByteMs.toFixed(0)} ms, last after ${(alone.totalMs / 1000).toFixed(2)} s.`);

  // Every page, limit=1000, following Link.
  const w0 = performance.now();
  let pages = 0;
  let rows = 0;
  let walkBytes = 0;
  for (let url: string | undefined = `${players}?limit=1000`; url; pages++) {
    const res = await fetch(url, { headers: { "X-API-Key": key } });
    const text = await res.text();
    walkBytes += text.length;
    rows += (JSON.parse(text) as unknown[]).length;
    const link = /^<([^>]*)>; rel="next"$/.exec(res.headers.get("link") ?? "");
    url = link ? new URL(link[1]!, url).toString() : undefined;
  }
  const walkMs = performance.now() - w0;
  lines.push(
    `Paged walk, limit=1000: ${pages} pages, ${rows} rows, ${mb(walkBytes)} MB in ${(walkMs / 1000).toFixed(1)} s ` +
      `(${(walkMs / pages).toFixed(1)} ms a page; one client, one page at a time).`,
  );

  // A sync after 1 % of the players changed, against the whole list.
  const token = (await fetch(`${players}?limit=1`, { headers: { "X-API-Key": key } })).headers.get("sync-token")!;
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  const changed = (await client.query("UPDATE players SET credit = credit + 1 WHERE id % 100 = 0")).rowCount ?? 0;
  await client.end();
  const syncs = [] as Timed[];
  for (let i = 0; i < 3; i++) syncs.push(await timedGet(`${players}?since=${encodeURIComponent(token)}`, key));
  const fulls = [alone, await timedGet(players, key)];
  const syncMs = median(syncs.map((s) => s.totalMs));
  const fullMs = median(fulls.map((s) => s.totalMs));
  lines.push(
    `Sync after ${changed} players (1 %) changed: ${mb(syncs[0]!.bytes)} MB in ${syncMs.toFixed(0)} ms (median of 3), against the whole list's ` +
      `${mb(alone.bytes)} MB in ${fullMs.toFixed(0)} ms: ${(fullMs / syncMs).toFixed(0)}× faster, ${(alone.bytes / syncs[0]!.bytes).toFixed(0)}× fewer bytes.`,
  );
  return lines;
}
