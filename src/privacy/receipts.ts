import type { DbClient } from "../db/client.js";
import { Prisma } from "../generated/prisma/client.js";
import type { ErasureReceipt } from "./ledger.js";

const RECEIPT_COLUMNS = Prisma.raw(
  `id, "playerId", to_char("erasedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "erasedAt", "erasedBy"::text AS "erasedBy", removed, scrubbed`,
);

/**
 * The receipts newest first (by time, then id), one player's if `playerId`; after the receipt `after` (a page's
 * cursor). Undefined: `after` names no receipt.
 */
export async function readReceipts(
  db: Pick<DbClient, "$queryRaw">,
  query: { playerId?: number | undefined; after?: string | undefined; limit: number },
): Promise<ErasureReceipt[] | undefined> {
  const playerId = query.playerId ?? null;
  const after = query.after ?? null;
  const rows = await db.$queryRaw<ErasureReceipt[]>`
    WITH c AS (SELECT "erasedAt", id FROM player_erasures WHERE id = ${after})
    SELECT ${RECEIPT_COLUMNS} FROM player_erasures
     WHERE (${playerId}::int IS NULL OR "playerId" = ${playerId}::int)
       AND (${after}::text IS NULL OR ("erasedAt", id) < (SELECT "erasedAt", id FROM c))
     ORDER BY "erasedAt" DESC, id DESC LIMIT ${query.limit}`;
  if (after !== null && rows.length === 0) {
    const [known] = await db.$queryRaw<{ any: boolean }[]>`SELECT EXISTS (SELECT 1 FROM player_erasures WHERE id = ${after}) AS any`;
    if (!known?.any) return undefined;
  }
  return rows;
}

/** Every receipt, oldest first: what a restore compares with the ledger. */
export async function allReceipts(db: Pick<DbClient, "$queryRaw">): Promise<ErasureReceipt[]> {
  return db.$queryRaw<ErasureReceipt[]>`SELECT ${RECEIPT_COLUMNS} FROM player_erasures ORDER BY "erasedAt", id`;
}

/** The receipt this database holds for a player id, if they were erased. */
export async function receiptOf(db: Pick<DbClient, "$queryRaw">, playerId: number): Promise<ErasureReceipt | undefined> {
  return (await readReceipts(db, { playerId, limit: 1 }))![0];
}

/** Records a receipt (a new erasure's, or one a restore re-applies); one already there stays. */
export async function insertReceipt(tx: Pick<DbClient, "$executeRaw">, r: ErasureReceipt): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO player_erasures (id, "playerId", "erasedAt", "erasedBy", removed, scrubbed)
    VALUES (${r.id}, ${r.playerId}, ${r.erasedAt}::timestamptz, ${r.erasedBy}, ${JSON.stringify(r.removed)}::jsonb, ${JSON.stringify(r.scrubbed)}::jsonb)
    ON CONFLICT DO NOTHING`;
}
