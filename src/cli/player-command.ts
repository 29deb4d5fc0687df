import { type AuditSource, recordAudit } from "../audit/audit.js";
import type { Config } from "../core/config.js";
import { ApiError } from "../core/errors.js";
import type { Database } from "../db/database.js";
import { erasedMessage, erasePlayer, type PlayerSelector } from "../privacy/erasure.js";
import { BEING_ERASED, exportCounts, exportDocument, readPlayerRows } from "../privacy/export.js";
import { readReceipts, receiptOf } from "../privacy/receipts.js";
import { parse, printable, table, terminalJson, UsageError } from "./args.js";
import type { CliFiles } from "./transfer-command.js";

export const PLAYER_USAGE = `  player export (--id N | --pseudo NAME) [file.json]
                                         one player's personal data, as POST /api/admin/players/export
                                         answers it (stdout when no file; audited: player.export)
  player erase (--id N | --pseudo NAME) --yes
                                         erase one player for good (docs/PRIVACY.md); prints the receipt
  player erasures [--json]               the erasure receipts, newest first`;

type Io = { stdout: (text: string) => void; stderr: (text: string) => void };

function selector(values: { id?: string | undefined; pseudo?: string | undefined }): PlayerSelector {
  if ((values.id === undefined) === (values.pseudo === undefined)) throw new UsageError("name the player with --id or --pseudo, one of them");
  if (values.id !== undefined) {
    if (!/^\d{1,10}$/.test(values.id) || Number(values.id) < 1 || Number(values.id) > 2_147_483_647) {
      throw new ApiError("VALIDATION", `Invalid --id '${values.id}': expected a positive whole number`);
    }
    return { id: Number(values.id) };
  }
  return { pseudo: values.pseudo! };
}

const named = (s: PlayerSelector) => ("id" in s ? `Player ${s.id}` : `Player '${s.pseudo}'`);

/** `player export|erase|erasures`: what the admin routes do for a player's data, from the operator's command line. */
export async function playerCommand(
  args: string[],
  db: Database,
  config: Pick<Config, "erasureLedger" | "drillMode">,
  files: CliFiles,
  source: AuditSource,
  io: Io,
): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { id: { type: "string" }, pseudo: { type: "string" }, yes: { type: "boolean" }, json: { type: "boolean" } });
  switch (sub) {
    case "export": {
      if (positionals.length > 1) throw new UsageError("player export takes at most one file");
      const which = selector(values);
      const doc = await db.prisma.$transaction(async (tx) => {
        const found = await readPlayerRows(tx, which);
        if (found === BEING_ERASED) throw new ApiError("CONFLICT", `${named(which)} is being erased: there is nothing to export`);
        if (!found) {
          const receipt = "id" in which ? await receiptOf(tx, which.id) : undefined;
          throw receipt ? new ApiError("PLAYER_ERASED", erasedMessage(receipt)) : new ApiError("NOT_FOUND", `${named(which)} not found`);
        }
        await recordAudit(tx, { ...source, action: "player.export", target: `player:${found.player.id as number}`, changes: exportCounts(found) });
        return exportDocument(found, source.actor, new Date());
      });
      const text = `${terminalJson(doc, 2)}\n`;
      if (positionals[0] === undefined) io.stdout(text);
      else {
        await files.write(positionals[0], [text]);
        io.stderr(
          `Wrote ${printable(positionals[0])}: ${Object.entries(doc.manifest.counts)
            .map(([k, n]) => `${n} ${k}`)
            .join(", ")}.\n`,
        );
      }
      return 0;
    }
    case "erase": {
      if (positionals.length > 0) throw new UsageError("player erase takes no argument besides --id or --pseudo, and --yes");
      const which = selector(values);
      if (!values.yes) throw new UsageError("player erase is final: add --yes to erase");
      const ledger = config.drillMode ? undefined : config.erasureLedger;
      const outcome = await db.prisma.$transaction((tx) => erasePlayer(tx, which, source, { ledger }), { timeout: 600_000, maxWait: 60_000 });
      if (outcome.kind === "none") throw new ApiError("NOT_FOUND", `${named(which)} not found`);
      if (outcome.kind === "already") throw new ApiError("PLAYER_ERASED", erasedMessage(outcome.receipt));
      const r = outcome.receipt;
      io.stdout(`Erased player ${r.playerId}: receipt ${r.id} at ${r.erasedAt}; removed ${counted(r.removed)}; scrubbed ${counted(r.scrubbed)}.\n`);
      if (!ledger)
        io.stderr("Warning: no erasure ledger (ERASURE_LEDGER=off, or a drill): a restore of a backup made before this would bring the player back.\n");
      return 0;
    }
    case "erasures": {
      if (positionals.length > 0) throw new UsageError("player erasures takes no argument");
      const receipts = (await readReceipts(db.prisma, { limit: 100_000 }))!;
      if (values.json) io.stdout(receipts.map((r) => `${terminalJson(r)}\n`).join(""));
      else if (receipts.length === 0) io.stdout("No erasures.\n");
      else io.stdout(table(receipts.map((r) => ({ receipt: r.id, player: String(r.playerId), at: r.erasedAt, by: r.erasedBy, removed: counted(r.removed) }))));
      return 0;
    }
    default:
      throw new UsageError(`player takes export, erase or erasures${sub === undefined ? "" : `, not '${sub}'`}`);
  }
}

const counted = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
