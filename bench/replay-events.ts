/**
 * The events bench/replay.ts replays: written into the outbox in SQL after a resume point taken from
 * the service, and the replays of GET /api/events that read them, alone or in loops.
 */
import http from "node:http";
import type pg from "pg";

export const RARE_TYPE = "parkour_map.created";
/** The name of the parkour map in the last event, written alone after the others: every replay ends with it. */
export const END_NAME = "Replay end";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `events` events, in SQL: six transactions of the mix, then the last (of the rare type) alone. Bodies
 * are the import's (players, infected stats, cosmetics, worlds, temporary items, parkour maps; cycled)
 * or a reward log as create-reward-log answers it; one in `rare` of them of the rare type.
 */
export async function writeEvents(client: pg.Client, o: { events: number; rare: number; players: number }): Promise<void> {
  const { events, rare, players } = o;
  await client.query(`CREATE TEMP TABLE tmpl AS SELECT split_part(type, '.', 1) AS kind, data,
    row_number() OVER (PARTITION BY type ORDER BY id) - 1 AS n FROM webhook_events WHERE type LIKE '%.created'`);
  await client.query(`CREATE TEMP TABLE kinds AS SELECT kind, count(*) AS c FROM tmpl GROUP BY kind`);
  const part = Math.ceil((events - 1) / 6);
  for (let from = 1; from < events; from += part) {
    await client.query(
      `INSERT INTO webhook_events (type, data)
       SELECT CASE s.kind WHEN 'reward_log' THEN 'reward_log.created' WHEN 'parkour_map' THEN '${RARE_TYPE}' ELSE s.kind || '.updated' END,
              COALESCE(t.data, format('{"id":%s,"playerId":%s,"rewardId":%s,"rewardedAt":"%s"}', s.g, 1 + s.g % $3, s.g % 500,
                to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))
         FROM (SELECT g, CASE WHEN g % $4 = 0 THEN 'parkour_map' WHEN g % 100 < 50 THEN 'reward_log' WHEN g % 100 < 75 THEN 'player'
                              WHEN g % 100 < 85 THEN 'infected_stats' WHEN g % 100 < 92 THEN 'cosmetic' WHEN g % 100 < 97 THEN 'world'
                              ELSE 'temporary_item' END AS kind
                 FROM generate_series($1::int, $2::int) g) s
         LEFT JOIN kinds k ON k.kind = s.kind
         LEFT JOIN tmpl t ON t.kind = s.kind AND t.n = s.g % k.c
        ORDER BY s.g`,
      [from, Math.min(events - 1, from + part - 1), players, Math.max(1, Math.floor(events / rare))],
    );
  }
  const end = { id: 1_000_000, name: END_NAME, enable: true, spawnLocation: null, difficulty: "hard" };
  await client.query(`INSERT INTO webhook_events (type, data) VALUES ($1, $2)`, [RARE_TYPE, JSON.stringify(end)]);
}

/** The position a stream opened now starts from: its first `id:` line, as sent (ids are opaque: never built here). */
export function currentPosition(url: string, key: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/events`, { headers: { "X-API-Key": key } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const id = /^id: (.*)$/m.exec((text += chunk))?.[1];
        if (id === undefined) return;
        resolve(id);
        req.destroy();
      });
    });
    req.on("error", reject);
  });
}

/** A replay: its time, the events it received, whether it caught up (the last event came), the wait a 429 told (s). */
export type Replay = { ms: number; events: number; done: boolean; refused?: number };
const EVENT = Buffer.from("\nevent: ");
const END = Buffer.from(`"name":"${END_NAME}"`);

/** One replay: resumes after `from`, counts the events until the last one came (caught up), or `stop`. */
export function replay(url: string, key: string, types: string | undefined, from: string, stop: AbortSignal): Promise<Replay> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let [events, carry] = [0, Buffer.alloc(0)];
    const end = (done: boolean) => {
      req.destroy();
      resolve({ ms: performance.now() - start, events, done });
    };
    const req = http.get(
      `${url}/api/events${types ? `?types=${types}` : ""}`,
      { headers: { "X-API-Key": key, "Last-Event-ID": from }, signal: stop },
      (res) => {
        if (res.statusCode === 429) {
          res.resume();
          return resolve({ ms: 0, events: 0, done: false, refused: Number(res.headers["retry-after"] ?? 1) });
        }
        if (res.statusCode !== 200) return reject(new Error(`replay answered ${res.statusCode}`));
        res.on("data", (chunk: Buffer) => {
          const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
          // Frames split across chunks: the carried bytes are searched again, an event counted only once.
          for (let at = buf.indexOf(EVENT, Math.max(0, carry.length - EVENT.length + 1)); at >= 0; at = buf.indexOf(EVENT, at + 1)) events++;
          const caughtUp = buf.includes(END);
          carry = Buffer.from(buf.subarray(Math.max(0, buf.length - END.length + 1)));
          if (caughtUp) end(true);
        });
        res.on("close", () => end(false));
      },
    );
    req.on("error", () => end(false));
  });
}

/**
 * One loop per key, each replaying again and again until `stop`, each user's at most `perMinute` replays a
 * minute (0: as fast as they go); every replay they made.
 */
export async function loops(url: string, keys: string[], types: string | undefined, from: string, stop: AbortSignal, perMinute: number): Promise<Replay[]> {
  const loop = async (key: string) => {
    const made: Replay[] = [];
    // A user's loops share its budget: each starts a replay at most every `gap` ms, as a client within the rate limit would.
    const gap = perMinute > 0 ? (60_000 * keys.filter((k) => k === key).length) / perMinute : 0;
    while (!stop.aborted) {
      const started = performance.now();
      const r = await replay(url, key, types, from, stop);
      made.push(r);
      if (r.refused !== undefined) await sleep(Math.min(5, r.refused) * 1_000);
      else await sleep(Math.max(0, gap - (performance.now() - started)));
    }
    return made;
  };
  return (await Promise.all(keys.map(loop))).flat();
}
