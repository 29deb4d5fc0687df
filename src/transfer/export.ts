import type { PrismaClient } from "../generated/prisma/client.js";
import { TRANSFER_RESOURCES } from "./resources.js";

const BATCH = 1000;

/**
 * The export file in pieces, a batch of records at a time (by key, never the
 * whole table in memory): the same text as `JSON.stringify(exportData(), null, 2)`
 * followed by a line break. Like exportData, not one snapshot: each batch
 * is read as it stands then.
 */
export async function* exportText(prisma: PrismaClient): AsyncGenerator<string> {
  yield "{\n";
  for (const [i, r] of TRANSFER_RESOURCES.entries()) {
    const comma = i < TRANSFER_RESOURCES.length - 1 ? "," : "";
    let after: unknown;
    let first = true;
    for (;;) {
      const rows = await r.exportBatch(prisma, after, BATCH);
      if (rows.length === 0) break;
      after = rows.at(-1)!.__key;
      const records = rows.map(({ __key, ...record }) => JSON.stringify(record, null, 2).replace(/^/gm, "    "));
      yield `${first ? `  ${JSON.stringify(r.key)}: [\n` : ",\n"}${records.join(",\n")}`;
      first = false;
      if (rows.length < BATCH) break;
    }
    yield first ? `  ${JSON.stringify(r.key)}: []${comma}\n` : `\n  ]${comma}\n`;
  }
  yield "}\n";
}
