/**
 * What npm run bench measures on each server (bench/run.ts): the routes it drives (point reads, lists,
 * writes, conditional GETs of lists), and one load run of a route on a server, with the CPU the
 * server's process and its PostgreSQL backends spent per request.
 */
import type autocannon from "autocannon";
import type { community } from "./community.js";
import { drive, type LoadTool } from "./load.js";
import { backendCpu, backendCpuSpent, cpuMicros } from "./proc.js";

export interface Scenario {
  name: string;
  kind: "point" | "list" | "write" | "conditional";
  connections: number;
  request: () => autocannon.Request[];
  /** For wrk, a Lua `request` function instead of requests written out (see load.ts). */
  wrkRequest?: () => string;
  headers?: (url: string) => Promise<Record<string, string>>;
  expect: number;
}

/** The routes driven, on the community `data` of `players` players, with the API key `key`. */
export function scenarios(data: ReturnType<typeof community>, players: number, key: string): Scenario[] {
  const nicks = Array.from({ length: 200 }, (_, i) => (i % 2 ? `player${(i * 37) % players}` : `NICK${(i * 53) % players}`));
  const cosmeticIds = data.cosmetics.map((c) => c.id);
  const worldIds = data.worlds.map((w) => w.id);
  // Every request built takes the next number: reward ids never repeat, whichever server gets them.
  let counter = 0;
  let wrkRuns = 0;
  const pick = <T>(xs: T[]) => xs[counter++ % xs.length]!;
  const get = (path: string, query?: () => string): autocannon.Request[] => [
    { method: "GET", path, setupRequest: (req) => ({ ...req, path: query ? `${path}?${query()}` : path }) },
  ];
  const json = (req: autocannon.Request, body: unknown) => ({
    ...req,
    headers: { ...req.headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

  const scenarios: Scenario[] = [
    {
      name: "get-player-by-nick",
      kind: "point",
      connections: 32,
      expect: 200,
      request: () => get("/api/player/get-player-by-nick", () => `nick=${pick(nicks)}`),
    },
    { name: "get-cosmetic", kind: "point", connections: 32, expect: 200, request: () => get("/api/cosmetic/get-cosmetic", () => `id=${pick(cosmeticIds)}`) },
    { name: "get-all-players", kind: "list", connections: 4, expect: 200, request: () => get("/api/player/get-all-players") },
    {
      name: "get-all-full-players-by-gradeId",
      kind: "list",
      connections: 8,
      expect: 200,
      request: () => get("/api/player/get-all-full-players-by-gradeId", () => `gradeId=${counter++ % 10}`),
    },
    { name: "get-all-infectes", kind: "list", connections: 4, expect: 200, request: () => get("/api/infecte2/get-all-infectes") },
    { name: "get-active-items", kind: "list", connections: 32, expect: 200, request: () => get("/api/temporary-item/get-active-items") },
    { name: "get-all-maps", kind: "list", connections: 32, expect: 200, request: () => get("/api/parkour/get-all-maps") },
    {
      name: "create-reward-log",
      kind: "write",
      connections: 16,
      expect: 201,
      request: () => [
        {
          method: "POST",
          path: "/api/website/create-reward-log",
          setupRequest: (req) => json(req, { playerId: 1 + (counter % players), rewardId: 1_000_000 + counter++ }),
        },
      ],
      // Reward ids never repeat: each run of wrk takes ten million of its own.
      wrkRequest: () => {
        const base = 100_000_000 + 10_000_000 * wrkRuns++;
        return [
          'headers["content-type"] = "application/json"',
          "request = function()",
          "  n = n + 1",
          `  return wrk.format("POST", "/api/website/create-reward-log", headers, string.format('{"playerId":%d,"rewardId":%d}', 1 + n % ${players}, ${base} + n))`,
          "end",
        ].join("\n");
      },
    },
    {
      name: "update-world",
      kind: "write",
      connections: 16,
      expect: 200,
      request: () => [
        {
          method: "PATCH",
          path: "/api/freebuild/update-world",
          setupRequest: (req) => json(req, { id: pick(worldIds), gamerulePvp: counter % 2 === 0, tag: `t${counter++ % 100}` }),
        },
      ],
    },
  ];
  for (const path of ["/api/player/get-all-players", "/api/infecte2/get-all-infectes", "/api/parkour/get-all-maps", "/api/temporary-item/get-active-items"]) {
    scenarios.push({
      name: `${path.split("/").pop()} (If-None-Match)`,
      kind: "conditional",
      connections: 32,
      expect: 304,
      request: () => get(path),
      headers: async (target): Promise<Record<string, string>> => {
        const etag = (await fetch(`${target}${path}`, { headers: { "X-API-Key": key } })).headers.get("etag");
        return etag ? { "If-None-Match": etag } : {};
      },
    });
  }
  return scenarios;
}

/** The scenarios --only names (route names or parts of them); all without it. */
export function selectScenarios(scenarios: Scenario[], only: string | undefined): Scenario[] {
  const wanted = only
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  // A part that is a route's whole name selects that route alone ("get-all-players" without its If-None-Match variant).
  const selected = scenarios.filter((s) => !wanted || wanted.some((w) => s.name === w || (!scenarios.some((o) => o.name === w) && s.name.includes(w))));
  if (!selected.length) throw new Error(`--only ${only} matches no route`);
  return selected;
}

export type Sample = { rps: number; p50: number; p99: number; cpu: number; dbCpu: number; bad: number };

/**
 * One load run of scenario `s` on the server at `url` (process `pid`, whose PostgreSQL connections are
 * named `appName` on `serverUrl`), `duration` seconds: its figures, CPU per request included.
 */
export async function loadRun(
  tool: LoadTool,
  s: Scenario,
  server: { url: string; pid: number; appName: string; serverUrl: string },
  options: { duration: number; expect: number; headers: Record<string, string> },
): Promise<Sample> {
  const { url, pid, appName, serverUrl } = server;
  const { duration, expect, headers } = options;
  const cpuBefore = cpuMicros(pid);
  const dbBefore = await backendCpu(serverUrl, appName);
  // A whole list of a large community can take longer than autocannon's 10 s: it is not a failure.
  const timeout = s.kind === "list" || s.kind === "conditional" ? Math.max(120, 2 * duration) : 10;
  const result = await drive(tool, {
    url,
    connections: s.connections,
    duration,
    timeout,
    headers,
    requests: s.request(),
    wrkRequest: s.wrkRequest?.(),
    expect,
  });
  const cpu = (cpuMicros(pid) - cpuBefore) / Math.max(1, result.total);
  const dbCpu = backendCpuSpent(dbBefore, await backendCpu(serverUrl, appName)) / Math.max(1, result.total);
  // Requests completed over the run: a list of a large community takes seconds, so a per-second mean would round to 0.
  const rps = result.total / result.seconds;
  return { rps, p50: result.p50, p99: result.p99, cpu, dbCpu, bad: result.bad };
}
