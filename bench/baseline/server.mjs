// The baseline the service is measured against: plain node:http + pg, prepared
// statements, the same SQL work as the service, byte-identical JSON built in
// Node, API keys checked by hash and cached. No validation beyond what the
// routes need to run: it is the floor of what a request costs here.
import { createHash } from "node:crypto";
import http from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });
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
  id: p.id, pseudo: p.pseudo, credit: p.credit, gradeId: p.gradeId, modStatus: p.modStatus, staff: p.staff, alert: p.alert,
  nickname: p.nickname, status: p.status, chatId: p.chatId, language: p.language, streamerPoint: p.streamerPoint,
  tag: p.tag, color: p.color, highclub: p.highclub, vote: p.vote,
});
const full = (p) => ({
  id: p.id, pseudo: p.pseudo, token: p.token, credit: p.credit, gradeId: p.gradeId, modStatus: p.modStatus, staff: p.staff,
  alert: p.alert, nickname: p.nickname, firstConnection: ts(p.firstConnection), totalTimeConnection: p.totalTimeConnection,
  status: p.status, ip: p.ip, chatId: p.chatId, language: p.language, streamerPoint: p.streamerPoint, tag: p.tag,
  color: p.color, highclub: p.highclub, vote: p.vote,
});
const world = (w) => ({
  id: w.id, name: w.name, ownerId: w.ownerId, type: w.type, state: w.state, lastUsed: ts(w.lastUsed), status: w.status,
  spawnLocation: w.spawnLocation, gameruleRandomTickSpeed: w.gameruleRandomTickSpeed,
  gameruleDaylightCycle: w.gameruleDaylightCycle, gamerulePvp: w.gamerulePvp, gamerulePlayerDamage: w.gamerulePlayerDamage, tag: w.tag,
});

const SUMMARY = `id, pseudo::text, credit, "gradeId", "modStatus", staff, alert, nickname::text, status, "chatId", language, "streamerPoint", tag, color, highclub, vote`;
const FULL = `id, pseudo::text, token, credit, "gradeId", "modStatus", staff, alert, nickname::text, "firstConnection", "totalTimeConnection", status, ip, "chatId", language, "streamerPoint", tag, color, highclub, vote`;
const q = (name, text) => ({ name, text });
const SQL = {
  key: q("key", `SELECT username::text, "revokedAt" FROM api_users WHERE "keyHash" = $1`),
  byNick: q("byNick", `SELECT ${SUMMARY} FROM players WHERE pseudo = $1 OR nickname = $1 LIMIT 2`),
  cosmetic: q("cosmetic", `SELECT id, name, type, rarity, game, "argumentFr", "argumentEn", image, lootbox, price, description, collection, render, permanent FROM cosmetics WHERE id = $1`),
  players: q("players", `SELECT ${SUMMARY} FROM players ORDER BY id`),
  byGrade: q("byGrade", `SELECT ${FULL} FROM players WHERE "gradeId" = $1 ORDER BY id`),
  infected: q("infected", `SELECT * FROM infected_stats ORDER BY "playerId"`),
  items: q("items", `SELECT * FROM temporary_items WHERE "startDate" <= $1 AND "endDate" > $1 ORDER BY id`),
  maps: q("maps", `SELECT * FROM parkour_maps ORDER BY id`),
  reward: q("reward", `INSERT INTO reward_logs ("playerId", "rewardId", "rewardedAt") VALUES ($1, $2, $3) RETURNING *`),
};

const keyCache = new Map();
async function callerOf(req) {
  const key = req.headers["x-api-key"] ?? req.headers.authorization?.replace(/^Bearer /i, "");
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

function send(res, status, body) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
const fail = (res, status, message) => send(res, status, { code: status, message });

async function readJson(req) {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  return JSON.parse(raw);
}

const routes = {
  "GET /api/player/get-player-by-nick": ["ABCD", async (url) => {
    const nick = url.searchParams.get("nick");
    const { rows } = await pool.query({ ...SQL.byNick, values: [nick] });
    const p = rows.find((r) => r.pseudo.toLowerCase() === nick.toLowerCase()) ?? rows[0];
    return p ? [200, summary(p)] : [404, { code: 404, message: "Player not found" }];
  }],
  "GET /api/cosmetic/get-cosmetic": ["ABCD", async (url) => {
    const { rows } = await pool.query({ ...SQL.cosmetic, values: [Number(url.searchParams.get("id"))] });
    return rows[0] ? [200, rows[0]] : [404, { code: 404, message: "Cosmetic not found" }];
  }],
  "GET /api/player/get-all-players": ["ABCD", async () => [200, (await pool.query(SQL.players)).rows.map(summary)]],
  "GET /api/player/get-all-full-players-by-gradeId": ["ABD", async (url) => {
    const { rows } = await pool.query({ ...SQL.byGrade, values: [Number(url.searchParams.get("gradeId"))] });
    return [200, rows.map(full)];
  }],
  "GET /api/infecte2/get-all-infectes": ["ABD", async () => [200, (await pool.query(SQL.infected)).rows]],
  "GET /api/temporary-item/get-active-items": ["ABD", async () => {
    const { rows } = await pool.query({ ...SQL.items, values: [new Date()] });
    return [200, rows.map((t) => ({ id: String(t.id), itemName: t.itemName, itemDescription: t.itemDescription, price: t.price, startDate: ts(t.startDate), endDate: ts(t.endDate) }))];
  }],
  "GET /api/parkour/get-all-maps": ["ABC", async () => [200, (await pool.query(SQL.maps)).rows]],
  "POST /api/website/create-reward-log": ["ABD", async (_url, req) => {
    const b = await readJson(req);
    const at = b.rewardedAt ? new Date(b.rewardedAt) : new Date(Math.floor(Date.now() / 1000) * 1000);
    try {
      const { rows: [r] } = await pool.query({ ...SQL.reward, values: [b.playerId, b.rewardId, at] });
      return [201, { id: r.id, playerId: r.playerId, rewardId: r.rewardId, rewardedAt: ts(r.rewardedAt) }];
    } catch (e) {
      if (e.code === "23505" || e.code === "23503") return [409, { code: 409, message: "Conflict" }];
      throw e;
    }
  }],
  "PATCH /api/freebuild/update-world": ["AB", async (_url, req) => {
    const { id, ...fields } = await readJson(req);
    const names = Object.keys(fields);
    const sets = names.map((n, i) => `"${n}" = $${i + 2}`).join(", ");
    const { rows } = await pool.query({ name: `world:${names.join(",")}`, text: `UPDATE worlds SET ${sets} WHERE id = $1 RETURNING *`, values: [id, ...names.map((n) => fields[n])] });
    return rows[0] ? [200, world(rows[0])] : [404, { code: 404, message: "World not found" }];
  }],
};

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, "http://x");
    const route = routes[`${req.method} ${url.pathname}`];
    if (!route) return fail(res, 404, `No route ${req.method} ${url.pathname}`);
    const user = await callerOf(req);
    if (!user) return fail(res, 401, "API key missing or invalid");
    if (![...route[0]].some((g) => (groups.get(user.toLowerCase()) ?? "").includes(g))) return fail(res, 403, "This API user may not call this route");
    const [status, body] = await route[1](url, req);
    send(res, status, body);
  } catch (error) {
    console.error(error);
    fail(res, 500, "Internal server error");
  }
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log(`baseline listening on ${server.address().port}`));
process.on("SIGTERM", () => server.close(() => pool.end().then(() => process.exit(0))));
