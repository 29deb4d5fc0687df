import type { ReadClient } from "../db/client.js";
import { STATISTICS, type Statistic } from "../entities/infected.js";
import { Prisma } from "../generated/prisma/client.js";
import { rowsAbove } from "./value-counts.js";

/**
 * The boards (docs/CALLING.md, "Leaderboards"): players ranked by one statistic, highest first, ties
 * sharing a rank (1, 2, 2, 4) and ordered by player id. All-time from infected_stats, a period's from
 * what each player gained during it (leaderboard_entries). Both are read through an index on
 * ((-value), "playerId") (migration 20261203100000_leaderboards): the board's order is the index's, so a
 * top, a rank (how many rows have a higher value) and the rows around one are index ranges, never a sort
 * of the table.
 */

export { STATISTICS, type Statistic };

/** Where a board's rows are: all-time, or one period's gains. */
export type BoardSource = { kind: "all" } | { kind: "period"; periodId: number };

export interface BoardEntry {
  rank: number;
  playerId: number;
  pseudo: string;
  value: number;
}

interface Row {
  playerId: number;
  value: number;
}

const quoted = (stat: Statistic) => Prisma.raw(`"${stat}"`);

/** The rows of the board's source, as (playerId, value), with the condition `where` over them. */
function rows(source: BoardSource, stat: Statistic): { from: Prisma.Sql; where: Prisma.Sql } {
  const column = quoted(stat);
  return source.kind === "all"
    ? { from: Prisma.sql`SELECT "playerId", ${column} AS value FROM infected_stats`, where: Prisma.sql`true` }
    : { from: Prisma.sql`SELECT "playerId", ${column} AS value FROM leaderboard_entries`, where: Prisma.sql`"periodId" = ${source.periodId}::int` };
}

/** The board's order as the index holds it: (-value, playerId), to compare rows with, and to sort them by. */
const key = (stat: Statistic) => Prisma.sql`(-${quoted(stat)}, "playerId")`;
const inOrder = (stat: Statistic) => Prisma.sql`-${quoted(stat)}, "playerId"`;

/** The rows of the board with a value above `value`: from the counts kept per version (value-counts.ts), or counted. */
async function above(db: ReadClient, source: BoardSource, stat: Statistic, value: number): Promise<number> {
  const { from, where } = rows(source, stat);
  const board = source.kind === "all" ? `all:${stat}` : `period:${source.periodId}:${stat}`;
  return (await rowsAbove(db, board, from, where, value)) ?? count(db, source, stat, Prisma.sql`-${quoted(stat)} < ${-value}::int`);
}

async function count(db: ReadClient, source: BoardSource, stat: Statistic, before: Prisma.Sql): Promise<number> {
  const { from, where } = rows(source, stat);
  const [row] = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM (${from} WHERE ${where} AND ${before}) r`;
  return row?.n ?? 0;
}

async function pseudos(db: ReadClient, list: Row[]): Promise<Map<number, string>> {
  const found = await db.$queryRaw<
    { id: number; pseudo: string }[]
  >`SELECT id, pseudo::text FROM players WHERE id IN (${Prisma.join(list.map((r) => r.playerId))})`;
  return new Map(found.map((p) => [p.id, p.pseudo]));
}

/** Ranks contiguous rows of the board (in its order), the first of which has `before` rows before it. */
async function ranked(db: ReadClient, source: BoardSource, stat: Statistic, list: Row[], before: number): Promise<BoardEntry[]> {
  if (list.length === 0) return [];
  const first = list[0]!;
  // The rows of the first one's value before it (ties) share its rank; every later value starts its own.
  const higher = before === 0 ? 0 : await above(db, source, stat, first.value);
  const pseudoOf = await pseudos(db, list);
  let rank = higher + 1;
  return list.map((row, i) => {
    if (i > 0 && row.value !== list[i - 1]!.value) rank = before + i + 1;
    return { rank, playerId: row.playerId, pseudo: pseudoOf.get(row.playerId) ?? "", value: row.value };
  });
}

/** The first `limit` rows of the board. */
export async function topOf(db: ReadClient, source: BoardSource, stat: Statistic, limit: number): Promise<BoardEntry[]> {
  const { from, where } = rows(source, stat);
  const list = await db.$queryRaw<Row[]>`${from} WHERE ${where} ORDER BY ${inOrder(stat)} LIMIT ${limit}`;
  return ranked(db, source, stat, list, 0);
}

/** The player's row of the board, or undefined when the board has none (no statistics, or no gain in the period). */
async function rowOf(db: ReadClient, source: BoardSource, stat: Statistic, playerId: number): Promise<Row | undefined> {
  const { from, where } = rows(source, stat);
  const [row] = await db.$queryRaw<Row[]>`${from} WHERE ${where} AND "playerId" = ${playerId}::int`;
  return row;
}

/** The player's rank and value. */
export async function rankOf(db: ReadClient, source: BoardSource, stat: Statistic, playerId: number): Promise<BoardEntry | undefined> {
  const row = await rowOf(db, source, stat, playerId);
  if (!row) return undefined;
  const higher = await above(db, source, stat, row.value);
  return { rank: higher + 1, playerId, pseudo: (await pseudos(db, [row])).get(playerId) ?? "", value: row.value };
}

/** The player's row with up to `k` rows above and `k` below it, in the board's order. */
export async function aroundOf(db: ReadClient, source: BoardSource, stat: Statistic, playerId: number, k: number): Promise<BoardEntry[] | undefined> {
  const row = await rowOf(db, source, stat, playerId);
  if (!row) return undefined;
  const { from, where } = rows(source, stat);
  const at = Prisma.sql`(${-row.value}::int, ${playerId}::int)`;
  const higher = await db.$queryRaw<Row[]>`${from} WHERE ${where} AND ${key(stat)} < ${at} ORDER BY -${quoted(stat)} DESC, "playerId" DESC LIMIT ${k}`;
  const below = await db.$queryRaw<Row[]>`${from} WHERE ${where} AND ${key(stat)} > ${at} ORDER BY ${inOrder(stat)} LIMIT ${k}`;
  const list = [...higher.reverse(), row, ...below];
  // Before the first row: those above its value, and its ties of a lower id.
  const first = list[0]!;
  const before =
    (await above(db, source, stat, first.value)) +
    (await count(db, source, stat, Prisma.sql`-${quoted(stat)} = ${-first.value}::int AND "playerId" < ${first.playerId}::int`));
  return ranked(db, source, stat, list, before);
}
