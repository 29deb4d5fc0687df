import { existsSync } from "node:fs";
import type { AuditSource } from "../audit/audit.js";
import type { DbClient } from "../db/client.js";
import { erasePlayer } from "./erasure.js";
import { appendToLedger, type ErasureReceipt, readLedger } from "./ledger.js";
import { allReceipts, insertReceipt } from "./receipts.js";

/** What a restore did with the erasures: those it re-applied (the backup was older), and the ledger's count. */
export interface ReappliedErasures {
  /** Receipts of the ledger the backup did not hold: their players erased again (if the backup held them), the receipts kept. */
  reapplied: ErasureReceipt[];
  /** Receipts the ledger holds; undefined: there is no ledger file (yet). */
  inLedger: number | undefined;
}

/** What `restore --check` says a restore would re-apply: the ledger's receipts a backup holding `held` (receipt ids) lacks. */
export async function erasuresToReapply(ledger: string | undefined, held: readonly string[]): Promise<ReappliedErasures> {
  if (ledger === undefined || !existsSync(ledger)) return { reapplied: [], inLedger: undefined };
  const fromLedger = await readLedger(ledger);
  const inFile = new Set(held);
  return { reapplied: fromLedger.filter((r) => !inFile.has(r.id)), inLedger: fromLedger.length };
}

/**
 * After a restore has written a backup's rows, in its transaction: every erasure of the ledger the backup
 * does not hold is re-applied (the player erased again with the same receipt, if the backup holds them;
 * the receipt kept either way), and a player the backup holds despite its own receipt (an altered file) is
 * erased again. The ids of erased players are never given again: the players' sequence moves past them.
 * The ledger gains the backup's receipts it lacked, so that it stays whole, unless the file is not known
 * to be this community's (`record: false`: unsigned while BACKUP_SIGNING_KEY is set): its receipts would
 * erase players of this community's next restores.
 */
export async function reapplyErasures(tx: DbClient, ledger: string | undefined, source: AuditSource, record = true): Promise<ReappliedErasures> {
  const found = ledger !== undefined && existsSync(ledger);
  const fromLedger = found ? await readLedger(ledger) : [];
  const inFile = await allReceipts(tx);
  const held = new Set(inFile.map((r) => r.id));
  const reapplied: ErasureReceipt[] = [];
  const seen = new Set<string>();
  for (const receipt of [...inFile, ...fromLedger]) {
    if (seen.has(receipt.id)) continue;
    seen.add(receipt.id);
    const outcome = await erasePlayer(tx, { id: receipt.playerId }, source, { receipt });
    if (!held.has(receipt.id)) {
      if (outcome.kind === "none") await insertReceipt(tx, receipt);
      reapplied.push(receipt);
    }
  }
  await tx.$queryRaw`
    SELECT setval(pg_get_serial_sequence('players', 'id'), greatest(last_value, (SELECT max("playerId") FROM player_erasures)), true)
      FROM players_id_seq WHERE EXISTS (SELECT 1 FROM player_erasures)`;
  if (ledger && record) {
    const known = new Set(fromLedger.map((r) => r.id));
    for (const receipt of inFile) if (!known.has(receipt.id)) await appendToLedger(ledger, receipt);
  }
  return { reapplied, inLedger: found ? fromLedger.length : undefined };
}
