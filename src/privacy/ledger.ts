import { appendFile, mkdir, open, readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Logger } from "../core/logger.js";

/** What an erasure removed, and the copies it scrubbed: counts per part (docs/PRIVACY.md). */
export interface ErasureReceipt {
  /** "era_" and 32 hex digits. */
  id: string;
  playerId: number;
  /** ISO 8601, UTC, milliseconds. */
  erasedAt: string;
  /** The API username, or cli:<os user>. */
  erasedBy: string;
  removed: Record<string, number>;
  scrubbed: Record<string, number>;
}

export const ERASURE_ID = /^era_[0-9a-f]{32}$/;

const counts = z.record(z.string().regex(/^[a-zA-Z]{1,32}$/), z.number().int().nonnegative()).refine((c) => Object.keys(c).length <= 16);

/** A receipt as the ledger (and a backup) holds it: checked, since the file is read back by a restore. */
export const receiptSchema = z.strictObject({
  id: z.string().regex(ERASURE_ID),
  playerId: z.number().int().positive().max(2_147_483_647),
  erasedAt: z.iso.datetime({ precision: 3 }),
  erasedBy: z.string().min(1).max(255),
  removed: counts,
  scrubbed: counts,
});

/**
 * Appends a receipt to the ledger and waits for it to reach the disk (fsync): called before the erasure
 * commits, so a receipt the database holds is in the ledger too (one the ledger holds whose erasure then
 * rolled back is re-applied by a restore: the player asked for it). One line of JSON per erasure; a line
 * left half-written by a crash is ended first, so the next one stays whole.
 */
export async function appendToLedger(file: string, receipt: ErasureReceipt): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const handle = await open(file, "a+");
  try {
    const { size } = await handle.stat();
    let ended = true;
    if (size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, size - 1);
      ended = last[0] === 0x0a;
    }
    await handle.write(`${ended ? "" : "\n"}${JSON.stringify(receipt)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes the ledger's file if there is none (a server at its start): a restore that then finds none knows the
 * ledger is elsewhere (another DATA_DIR), not merely empty. A failure is a warning: erasures fail until it is fixed.
 */
export async function ensureLedger(file: string, logger: Logger): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await appendFile(file, "");
  } catch (error) {
    logger.warn({ ledger: file }, `the erasure ledger cannot be written (${(error as Error).message}): every erasure fails until it can`);
  }
}

export class LedgerError extends Error {
  override name = "LedgerError";
}

/**
 * The receipts of the ledger, in its order; none when there is no file. A last line without its end is one
 * a crash cut (its erasure never committed): left out. Any other line that is not a receipt is refused,
 * with its number: a restore does not guess which erasures a damaged ledger held.
 */
export async function readLedger(file: string): Promise<ErasureReceipt[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const lines = text.split("\n");
  lines.pop();
  const receipts: ErasureReceipt[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    const receipt = receiptSchema.safeParse(parsed);
    if (!receipt.success) throw new LedgerError(`${file}, line ${index + 1}: not an erasure receipt; repair the line (or remove it) and run again`);
    receipts.push(receipt.data);
  });
  return receipts;
}
