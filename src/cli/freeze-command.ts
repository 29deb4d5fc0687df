import { type AuditSource, recordAudit } from "../audit/audit.js";
import { ApiError } from "../core/errors.js";
import { isDatabaseUnavailable } from "../db/prisma-errors.js";
import { clearWriteFreeze, setWriteFreeze, type WriteFreeze, writeFreeze } from "../db/service-state.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { parse, printable, UsageError } from "./args.js";

export const FREEZE_USAGE = `  freeze [--reason TEXT]                 refuse every write on every instance of this database (503
                                         WRITES_FROZEN, with TEXT) until thaw, reads going on; returns once
                                         the writes in flight have committed; it survives a restart
  freeze --status                        whether writes are frozen: since when, by whom, why
  thaw                                   let writes through again`;

/** The longest reason: it is shown in every refused write's message. */
const MAX_REASON = 200;
const DEFAULT_REASON = "the operator is moving or checking the database";

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const described = (f: WriteFreeze) => `since ${f.since} by ${printable(f.by)} (${printable(f.reason)})`;

/** `freeze [--reason TEXT] | --status`: the write freeze of src/db/service-state.ts, audited. */
export async function freezeCommand(args: string[], prisma: PrismaClient, by: AuditSource, io: Io): Promise<number> {
  const { values, positionals } = parse(args, { reason: { type: "string" }, status: { type: "boolean" } });
  if (positionals.length > 0) throw new UsageError("freeze takes no argument (the reason goes after --reason)");
  if (values.status) {
    if (values.reason !== undefined) throw new UsageError("freeze --status takes no --reason");
    const current = await writeFreeze(prisma);
    io.stdout(current ? `Writes are frozen ${described(current)}.\n` : "Writes are not frozen.\n");
    return 0;
  }
  const reason = (values.reason ?? DEFAULT_REASON).trim();
  // eslint-disable-next-line no-control-regex
  if (reason.length === 0 || reason.length > MAX_REASON || /[\u0000-\u001f\u007f-\u009f]/.test(reason)) {
    throw new ApiError("VALIDATION", `Invalid --reason: expected 1 to ${MAX_REASON} characters on one line`);
  }
  let outcome: Awaited<ReturnType<typeof setWriteFreeze>>;
  try {
    outcome = await prisma.$transaction(
      async (tx) => {
        const result = await setWriteFreeze(tx, reason, by.actor);
        if (result.set) await recordAudit(tx, { ...by, action: "service.freeze", target: "service:writes", changes: { reason } });
        return result;
      },
      // The writes in flight (an import, say) are waited for, within the statement timeout.
      { maxWait: 10_000, timeout: 3_600_000 },
    );
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    io.stderr(
      "Refused: writes still in flight did not end within the statement timeout (an import?), or the database did not answer; nothing was changed: try again.\n",
    );
    return 1;
  }
  const { set, current } = outcome;
  if (current) {
    io.stderr(`Refused: writes are already frozen ${described(current)}; nothing was changed (thaw first to freeze anew).\n`);
    return 1;
  }
  io.stdout(
    `Writes are frozen ${described(set!)}: every instance on this database answers a write 503 WRITES_FROZEN, reads go on, ` +
      "and every write acknowledged before is in a backup taken from now on. thaw lets writes through again.\n",
  );
  return 0;
}

/** `thaw`: ends the freeze; says so when there was none. */
export async function thawCommand(args: string[], prisma: PrismaClient, by: AuditSource, io: Io): Promise<number> {
  parse(args, {});
  if (args.length > 0) throw new UsageError("thaw takes no argument");
  const ended = await prisma.$transaction(async (tx) => {
    const was = await clearWriteFreeze(tx);
    if (was) await recordAudit(tx, { ...by, action: "service.thaw", target: "service:writes", before: { reason: was.reason, since: was.since } });
    return was;
  });
  io.stdout(ended ? `Writes are let through again (they were frozen ${described(ended)}).\n` : "Writes were not frozen; nothing was changed.\n");
  return 0;
}
