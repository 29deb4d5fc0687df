import { readFile } from "node:fs/promises";
import type { AuditSource } from "../audit/audit.js";
import { temporaryItem } from "../entities/temporary-item.js";
import { formatTimestamp, timestampSql } from "../fields/timestamp.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { TRANSFER_RESOURCES } from "./resources.js";
import { ImportError, type ImportSummary, importData } from "./transfer.js";

/** The shipped sample community, in the import format (same depth from src/ and dist/). */
export const SAMPLE_FILE = new URL("../../sample/community.json", import.meta.url);

/**
 * The day the sample's temporary items are written around. Loading moves them
 * by whole days to today, so that the active ones are active and the expired
 * ones expired whenever the sample is loaded; every other date stays as written.
 */
const SAMPLE_DAY = Date.parse("2026-11-01T00:00:00Z");
const DAY_MS = 86_400_000;

/** The temporary item's timestamps. */
const DATES = Object.entries(temporaryItem.fields).flatMap(([name, f]) => (f.spec.sql === timestampSql ? [name] : []));

/** The sample with its temporary items moved to `now`. */
async function readSample(now: Date): Promise<Record<string, unknown>> {
  const sample = JSON.parse(await readFile(SAMPLE_FILE, "utf8")) as { temporaryItems: Record<string, string>[] } & Record<string, unknown>;
  const shift = Math.floor((now.getTime() - SAMPLE_DAY) / DAY_MS) * DAY_MS;
  const move = (at: string) => formatTimestamp(new Date(Date.parse(at) + shift));
  const moved = (item: Record<string, string>) => ({ ...item, ...Object.fromEntries(DATES.map((n) => [n, move(item[n]!)])) });
  return { ...sample, temporaryItems: sample.temporaryItems.map(moved) };
}

/** Loads the sample into a database that holds no community data yet (API users do not count). */
export async function loadSample(prisma: PrismaClient, now: Date, by?: AuditSource): Promise<ImportSummary> {
  const held: string[] = [];
  for (const r of TRANSFER_RESOURCES) {
    const [{ n }] = await prisma.$queryRawUnsafe<[{ n: number }]>(`SELECT count(*)::int AS n FROM ${r.entity.table}`);
    if (n > 0) held.push(`${n} ${r.key}`);
  }
  if (held.length > 0) {
    throw new ImportError([
      `the database already holds data (${held.join(", ")}): the sample is loaded into an empty database only, so that it overwrites nothing`,
    ]);
  }
  return importData(prisma, await readSample(now), by);
}
