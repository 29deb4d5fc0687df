// What the three reference servers (server.mjs: node:http, express.mjs,
// fastify.mjs) share, so that they differ only by their framework: one pg pool,
// API keys checked by hash and cached in memory, the caller groups, the
// service's SQL (prepared statements; writes with their audit entry in the
// same statement) and its JSON, byte for byte. No validation beyond what the
// routes need to run: the floor of what a request costs here.
import { createHash, randomUUID } from "node:crypto";
import pg from "pg";

export const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });
export const PORT = Number(process.env.PORT);
export const HOST = "127.0.0.1";
export const CONTENT_TYPE = "application/json; charset=utf-8";

const groups = new Map();
for (const [group, names] of Object.entries({
  A: process.env.CALLERS_USER_A ?? "user-A,user_A",
  B: process.env.CALLERS_USER_B ?? "user-B",
  C: process.env.CALLERS_USER_C ?? "user-C",
  D: process.env.CALLERS_USER_D ?? "user-D",
})) {
  for (const name of names.split(",")) groups.set(name.trim().toLowerCase(), (groups.get(name.trim().toLowerCase()) ?? "") + group);
}

const ts = (d) => `${d.toISOString().slice(0, 19)}Z`;
const summary = (p) => ({
  id: p.id,
  pseudo: p.pseudo,
  credit: p.credit,
  gradeId: p.gradeId,
  modStatus: p.modStatus,
  staff: p.staff,
  alert: p.alert,
  nickname: p.nickname,
  status: p.status,
  chatId: p.chatId,
  language: p.language,
  streamerPoint: p.streamerPoint,
  tag: p.tag,
  color: p.color,
  highclub: p.highclub,
  vote: p.vote,
});
const full = (p) => ({
  id: p.id,
  pseudo: p.pseudo,
  token: p.token,
  credit: p.credit,
  gradeId: p.gradeId,
  modStatus: p.modStatus,
  staff: p.staff,
  alert: p.alert,
  nickname: p.nickname,
  firstConnection: ts(p.firstConnection),
  totalTimeConnection: p.totalTimeConnection,
  status: p.status,
  ip: p.ip,
  chatId: p.chatId,
  language: p.language,
  streamerPoint: p.streamerPoint,
  tag: p.tag,
  color: p.color,
  highclub: p.highclub,
  vote: p.vote,
});
const world = (w) => ({
  id: w.id,
  name: w.name,
  ownerId: w.ownerId,
  type: w.type,
  state: w.state,
  lastUsed: ts(w.lastUsed),
  status: w.status,
  spawnLocation: w.spawnLocation,
  gameruleRandomTickSpeed: w.gameruleRandomTickSpeed,
  gameruleDaylightCycle: w.gameruleDaylightCycle,
  gamerulePvp: w.gamerulePvp,
  gamerulePlayerDamage: w.gamerulePlayerDamage,
  tag: w.tag,
});

const SUMMARY = `id, pseudo::text, credit, "gradeId", "modStatus", staff, alert, nickname::text, status, "chatId", language, "streamerPoint", tag, color, highclub, vote`;
const FULL = `id, pseudo::text, token, credit, "gradeId", "modStatus", staff, alert, nickname::text, "firstConnection", "totalTimeConnection", status, ip, "chatId", language, "streamerPoint", tag, color, highclub, vote`;
// The write and its audit entry in one statement, as the service's auditedWrite.
// `source` names the placeholders of the actor, the request id and the client address.
const audited = (write, action, target, changes, source) => `
  WITH w AS (${write}),
       a AS (INSERT INTO audit_log (actor, action, target, changes, "requestId", "clientAddress")
             SELECT ${source.actor}, '${action}', ${target}, ${changes}, ${source.requestId}, ${source.clientAddress} FROM w)
  SELECT * FROM w`;
const q = (name, text) => ({ name, text });
const SQL = {
  key: q("key", `SELECT username::text, "revokedAt" FROM api_users WHERE "keyHash" = $1`),
  byNick: q("byNick", `SELECT ${SUMMARY} FROM players WHERE pseudo = $1 OR nickname = $1 LIMIT 2`),
  cosmetic: q(
    "cosmetic",
    `SELECT id, name, type, rarity, game, "argumentFr", "argumentEn", image, lootbox, price, description, collection, render, permanent FROM cosmetics WHERE id = $1`,
  ),
  players: q("players", `SELECT ${SUMMARY} FROM players ORDER BY id`),
  byGrade: q("byGrade", `SELECT ${FULL} FROM players WHERE "gradeId" = $1 ORDER BY id`),
  // The answer's columns (the tables also hold "writtenBy", the sync stamp, which no answer shows).
  infected: q(
    "infected",
    `SELECT "playerId", kill, assist, death, game, "eligibleGame", "winZ", "winH", playtime, coin, point, objectif, "newPlayer" FROM infected_stats ORDER BY "playerId"`,
  ),
  items: q("items", `SELECT * FROM temporary_items WHERE "startDate" <= $1 AND "endDate" > $1 ORDER BY id`),
  maps: q("maps", `SELECT id, name, enable, "spawnLocation", difficulty FROM parkour_maps ORDER BY id`),
  reward: q(
    "reward",
    audited(
      `INSERT INTO reward_logs ("playerId", "rewardId", "rewardedAt") VALUES ($1, $2, $3) RETURNING *`,
      "reward_log.create",
      `'reward_log:' || w.id`,
      `jsonb_build_object('playerId', w."playerId", 'rewardId', w."rewardId", 'rewardedAt', to_char(w."rewardedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))`,
      { actor: "$4", requestId: "$5", clientAddress: "$6" },
    ),
  ),
};

const keyCache = new Map();
/** The API username of the request's key (X-API-Key or Bearer), or undefined. */
export async function callerOf(headers) {
  const key = headers["x-api-key"] ?? headers.authorization?.replace(/^Bearer /i, "");
  if (!key) return undefined;
  const hash = createHash("sha256").update(key).digest("hex");
  let user = keyCache.get(hash);
  if (!user) {
    const { rows } = await pool.query({ ...SQL.key, values: [hash] });
    if (!rows[0] || rows[0].revokedAt) return undefined;
    user = rows[0].username;
    keyCache.set(hash, user);
  }
  return user;
}

export const allowed = (user, callers) => [...callers].some((g) => (groups.get(user.toLowerCase()) ?? "").includes(g));
export const error = (status, message) => [status, { code: status, message }];
export const UNAUTHORIZED = error(401, "API key missing or invalid: send a valid key in the X-API-Key header");
export const FORBIDDEN = error(403, "This API user may not call this route");
export const INTERNAL = error(500, "Internal server error");
export const notFound = (method, path) => error(404, `No route ${method} ${path}`);

/**
 * The routes: method, path, caller groups, and a handler of
 * (query: URLSearchParams, body: parsed JSON, source: { actor, clientAddress })
 * answering [status, body].
 */
export const routes = [
  [
    "GET",
    "/api/player/get-player-by-nick",
    "ABCD",
    async (query) => {
      const nick = query.get("nick");
      const { rows } = await pool.query({ ...SQL.byNick, values: [nick] });
      const p = rows.find((r) => r.pseudo.toLowerCase() === nick.toLowerCase()) ?? rows[0];
      return p ? [200, summary(p)] : error(404, "Player not found");
    },
  ],
  [
    "GET",
    "/api/cosmetic/get-cosmetic",
    "ABCD",
    async (query) => {
      const { rows } = await pool.query({ ...SQL.cosmetic, values: [Number(query.get("id"))] });
      return rows[0] ? [200, rows[0]] : error(404, "Cosmetic not found");
    },
  ],
  ["GET", "/api/player/get-all-players", "ABCD", async () => [200, (await pool.query(SQL.players)).rows.map(summary)]],
  [
    "GET",
    "/api/player/get-all-full-players-by-gradeId",
    "ABD",
    async (query) => {
      const { rows } = await pool.query({ ...SQL.byGrade, values: [Number(query.get("gradeId"))] });
      return [200, rows.map(full)];
    },
  ],
  ["GET", "/api/infecte2/get-all-infectes", "ABD", async () => [200, (await pool.query(SQL.infected)).rows]],
  [
    "GET",
    "/api/temporary-item/get-active-items",
    "ABD",
    async () => {
      const { rows } = await pool.query({ ...SQL.items, values: [new Date()] });
      return [
        200,
        rows.map((t) => ({
          id: String(t.id),
          itemName: t.itemName,
          itemDescription: t.itemDescription,
          price: t.price,
          startDate: ts(t.startDate),
          endDate: ts(t.endDate),
        })),
      ];
    },
  ],
  ["GET", "/api/parkour/get-all-maps", "ABC", async () => [200, (await pool.query(SQL.maps)).rows]],
  [
    "POST",
    "/api/website/create-reward-log",
    "ABD",
    async (_query, b, source) => {
      const at = b.rewardedAt ? new Date(b.rewardedAt) : new Date(Math.floor(Date.now() / 1000) * 1000);
      try {
        const {
          rows: [r],
        } = await pool.query({ ...SQL.reward, values: [b.playerId, b.rewardId, at, source.actor, randomUUID(), source.clientAddress] });
        return [201, { id: r.id, playerId: r.playerId, rewardId: r.rewardId, rewardedAt: ts(r.rewardedAt) }];
      } catch (e) {
        if (e.code === "23505" || e.code === "23503") return error(409, "Conflict");
        throw e;
      }
    },
  ],
  [
    "PATCH",
    "/api/freebuild/update-world",
    "AB",
    async (_query, body, source) => {
      const { id, ...fields } = body;
      const names = Object.keys(fields);
      const sets = names.map((n, i) => `"${n}" = $${i + 5}`).join(", ");
      const text = audited(`UPDATE worlds SET ${sets} WHERE id = $1 RETURNING *`, "world.update", `'world:' || w.id`, "$2::jsonb", {
        actor: "$3",
        requestId: "$4",
        clientAddress: `$${names.length + 5}`,
      });
      const values = [id, JSON.stringify(fields), source.actor, randomUUID(), ...names.map((n) => fields[n]), source.clientAddress];
      const { rows } = await pool.query({ name: `world:${names.join(",")}`, text, values });
      return rows[0] ? [200, world(rows[0])] : error(404, "World not found");
    },
  ],
];

/** Closes the server, then the pool, on SIGTERM. */
export function stopOnSigterm(close) {
  process.on("SIGTERM", () => close(() => pool.end().then(() => process.exit(0))));
}
