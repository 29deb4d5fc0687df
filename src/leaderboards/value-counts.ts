import type { ReadClient } from "../db/client.js";
import { tableVersion } from "../db/versions.js";
import { infectedStats } from "../entities/infected.js";
import { Prisma } from "../generated/prisma/client.js";

/**
 * How many rows of a board have a value above v, answered from the board's values counted once per
 * version of the statistics (a rank is 1 + that count). Counting the rows above v in the index takes
 * as long as there are rows above (about 35 ms of PostgreSQL CPU per rank at 1,000,000 players, most of
 * them low on a board); the statistics change only when they are written (an import), so one GROUP BY
 * per board, statistic and version, kept in this process, answers every rank until the next write by a
 * binary search. Boards with more distinct values than MAX_DISTINCT are counted each time instead (a
 * board's arrays take 8 bytes per distinct value), and at most MAX_BOARDS are kept.
 */
const MAX_DISTINCT = 250_000;
const MAX_BOARDS = 32;

interface Counts {
  /** Distinct values, highest first. */
  values: Int32Array;
  /** above[i]: the rows whose value is above values[i]; above[values.length]: every row. */
  above: Int32Array;
}

/** Per database client (a process may hold several: tests, a read replica), each board's counts. */
const keptBy = new WeakMap<object, Map<string, Promise<Counts | undefined>>>();

/** The counts of a board (`from`: its rows as (value), `where` on them), or undefined when it has too many distinct values. */
async function countsOf(db: ReadClient, from: Prisma.Sql, where: Prisma.Sql, maxDistinct: number): Promise<Counts | undefined> {
  const rows = await db.$queryRaw<{ value: number; n: number }[]>`
    SELECT value, count(*)::int AS n FROM (${from} WHERE ${where}) r GROUP BY value ORDER BY value DESC LIMIT ${maxDistinct + 1}`;
  if (rows.length > maxDistinct) return undefined;
  const values = new Int32Array(rows.length);
  const above = new Int32Array(rows.length + 1);
  rows.forEach((row, i) => {
    values[i] = row.value;
    above[i + 1] = above[i]! + row.n;
  });
  return { values, above };
}

/**
 * The rows of the board above `value`, or undefined when this board is not counted here (too many
 * distinct values): the caller counts them in the index then. `board` names the board and statistic.
 */
export async function rowsAbove(
  db: ReadClient,
  board: string,
  from: Prisma.Sql,
  where: Prisma.Sql,
  value: number,
  maxDistinct = MAX_DISTINCT,
): Promise<number | undefined> {
  const key = `${board}@${await tableVersion(db, infectedStats)}`;
  let kept = keptBy.get(db);
  if (!kept) keptBy.set(db, (kept = new Map<string, Promise<Counts | undefined>>()));
  let counts = kept.get(key);
  if (!counts) {
    counts = countsOf(db, from, where, maxDistinct);
    kept.set(key, counts);
    counts.catch(() => kept.delete(key));
    // The oldest goes first (a Map keeps its insertion order); a board's older versions are of no more use.
    for (const old of kept.keys()) if (kept.size > MAX_BOARDS || (old.startsWith(`${board}@`) && old !== key)) kept.delete(old);
  }
  const found = await counts;
  if (!found) return undefined;
  // The first distinct value not above `value` (values are highest first): the rows before it are above.
  let lo = 0;
  let hi = found.values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (found.values[mid]! > value) lo = mid + 1;
    else hi = mid;
  }
  return found.above[lo]!;
}
