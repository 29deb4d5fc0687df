import { type AuditSource, cliSource } from "../audit/audit.js";
import { CallerDirectory } from "../auth/callers.js";
import { tableCounts, writeBackup } from "../backup/backup.js";
import { BackupFileError } from "../backup/format.js";
import { type CheckedBackup, checkBackup, checkTarget, type RestoredBackup, RestoreRefused, restoreBackup } from "../backup/restore.js";
import { type KeptFor, schemaVersion } from "../backup/tables.js";
import type { Config } from "../core/config.js";
import type { Database } from "../db/database.js";
import { LedgerError } from "../privacy/ledger.js";
import { erasuresToReapply, type ReappliedErasures } from "../privacy/reapply.js";
import { parse, printable, UsageError } from "./args.js";
import { fileFailure } from "./owned-files.js";
import type { CliFiles } from "./transfer-command.js";

export const BACKUP_USAGE = `  backup <file>                          everything the service stores (data, API users, webhooks, audit
                                         log, …) from one snapshot, to a gzip'd file; works while it serves
  restore <file>                         all of a backup into an empty database, in one transaction
  restore --check <file>                 read a backup through and check it, writing nothing
  restore [--check] --unsigned <file>    take a file BACKUP_SIGNING_KEY did not sign (said in a warning)
  counts                                 this database's rows per table, counted as a backup counts them
                                         (compare with what restore --check prints)`;

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const counted = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([table, n]) => `${n} ${table}`)
    .join(", ");

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/** `backup <file>`: writeBackup to the caller's file. */
export async function backupCommand(args: string[], db: Database, files: CliFiles, config: Config, io: Io): Promise<number> {
  const { positionals } = parse(args, {});
  if (positionals.length !== 1) throw new UsageError("backup takes one file");
  const file = positionals[0]!;
  const started = performance.now();
  let counts: Record<string, number>;
  try {
    counts = await writeBackup(db, (pieces) => files.write(file, pieces), { kept: config, signingKey: config.backupSigningKey });
  } catch (error) {
    // The file system's refusal (here, or where the CLI runs when the server makes the backup): not the database's.
    const failure = fileFailure(error);
    if (failure === undefined) throw error;
    io.stderr(`Cannot write ${printable(file)}: ${printable(failure)}\n`);
    return 1;
  }
  io.stdout(`Backed up to ${printable(file)} in ${seconds(started)}: ${counted(counts)}.\n`);
  return 0;
}

/** `counts`: the live database's rows per backed-up table, with the backup's own skips, in restore --check's words. */
export async function countsCommand(args: string[], db: Database, kept: KeptFor, io: Io): Promise<number> {
  if (args.length > 0) throw new UsageError("counts takes no argument");
  io.stdout(`This database holds: ${counted(await tableCounts(db, kept))}.\n`);
  return 0;
}

/** At most this many names of each kind: the count says the rest. */
const SHOWN = 20;
const some = <T>(all: T[], line: (x: T) => string) =>
  `${all.slice(0, SHOWN).map(line).join(", ")}${all.length > SHOWN ? `, and ${all.length - SHOWN} more` : ""}`;

/** What `--check` shows a restore would install: who could call the API, where data would be sent; every value printable. */
function installsText(installs: CheckedBackup["installs"], callers: CallerDirectory): string {
  const user = (u: CheckedBackup["installs"]["users"][number]) => {
    const groups = [...callers.groupsOf(u.username)];
    return `${printable(u.username)} (${groups.length ? `group ${groups.join(", ")}` : "no group"}${u.revoked ? ", revoked" : ""})`;
  };
  const endpoint = (e: CheckedBackup["installs"]["endpoints"][number]) =>
    `${e.id} → ${printable(e.url)} (${e.events.length ? printable(e.events.join(", ")) : "every event"})`;
  return (
    `A restore would install ${installs.users.length} API user(s)${installs.users.length ? `: ${some(installs.users, user)}` : ""}; ` +
    `${installs.endpoints.length} webhook endpoint(s)${installs.endpoints.length ? `: ${some(installs.endpoints, endpoint)}` : ""}.\n`
  );
}

/** `restore [--check] <file>`: checks the file whole, then (without --check) restores it into this empty database. */
export async function restoreCommand(
  args: string[],
  db: Database,
  files: CliFiles,
  config: Pick<Config, "webhooksSecretKey" | "drillMode" | "backupSigningKey" | "callers" | "erasureLedger">,
  io: Io,
  actor: AuditSource = cliSource(),
): Promise<number> {
  const { values, positionals } = parse(args, { check: { type: "boolean" }, unsigned: { type: "boolean" } });
  if (positionals.length !== 1) throw new UsageError("restore takes one file");
  const file = positionals[0]!;
  const started = performance.now();
  const secretKey = config.webhooksSecretKey;
  let checked: CheckedBackup & Partial<Pick<RestoredBackup, "erasures">>;
  try {
    const trust = { signingKey: config.backupSigningKey, unsigned: values.unsigned === true };
    if (values.check) {
      checked = await checkBackup(files.read(file), secretKey, trust, checkTarget(db.prisma, await schemaVersion(db.prisma)));
      checked.erasures = await erasuresToReapply(config.erasureLedger, checked.installs.erasures);
    } else
      checked = await restoreBackup(db, () => files.read(file), secretKey, { drill: config.drillMode, ledger: config.erasureLedger, source: actor, ...trust });
  } catch (error) {
    if (error instanceof BackupFileError) {
      io.stderr(`Refused ${printable(file)}, nothing was written: ${printable(error.message)}.\n`);
      return 1;
    }
    if (error instanceof LedgerError) {
      io.stderr(`Refused: the erasure ledger (ERASURE_LEDGER) cannot be read: ${printable(error.message)}. Nothing was written.\n`);
      return 1;
    }
    if (error instanceof RestoreRefused) {
      io.stderr(`${printable(error.message)} Nothing was written.\n`);
      return 1;
    }
    throw error;
  }
  for (const warning of checked.warnings) io.stderr(`Warning: ${warning}\n`);
  const endpoints = checked.counts.webhook_endpoints ?? 0;
  if (!values.check && endpoints > 0 && !config.drillMode) {
    io.stderr(
      `Warning: ${endpoints} webhook endpoint(s) came with the backup: a server started on this database delivers to them ` +
        "(the deliveries still pending, then every new write), signed as production's are, unless it runs with DRILL_MODE=true. " +
        "For a drill, restore with DRILL_MODE=true: a server then starts on this database only in drill mode.\n",
    );
  }
  const { createdAt, source, schema } = checked.header;
  // From the file: printed through printable, as every value a file brings.
  const made = `made ${printable(createdAt)} from ${source === "embedded" ? "an embedded database" : "PostgreSQL"} at schema ${printable(schema)}`;
  io.stdout(
    values.check
      ? `${printable(file)} is whole${checked.signed ? " and signed with this BACKUP_SIGNING_KEY" : ""} (${made}), read in ${seconds(started)}: ${counted(checked.counts)}.\n`
      : `Restored ${printable(file)} (${made}) in ${seconds(started)}: ${counted(checked.counts)}.\n`,
  );
  if (values.check) io.stdout(installsText(checked.installs, new CallerDirectory(config.callers)));
  if (checked.erasures) reportErasures(checked.erasures, config.erasureLedger, io, values.check === true);
  if (!values.check && config.drillMode) {
    io.stdout(
      "This database is a drill's copy (DRILL_MODE=true): a server starts on it only with DRILL_MODE=true, and then delivers no webhook and shares no counter with production.\n",
    );
  }
  return 0;
}

/** What the restore did with the erasure ledger: a line when it re-applied erasures, a warning when its file is missing. */
function reportErasures({ reapplied, inLedger }: ReappliedErasures, ledger: string | undefined, io: Io, check: boolean): void {
  if (reapplied.length > 0) {
    const list = some(reapplied, (r) => `player ${r.playerId} (${r.id}, ${r.erasedAt})`);
    io.stdout(`${check ? "A restore would re-apply" : "Re-applied"} ${reapplied.length} erasure(s) the backup was made before: ${list}.\n`);
  }
  // ERASURE_LEDGER=off: the operator's choice (another community's backup), said in PRIVACY.md.
  if (ledger && inLedger === undefined) {
    io.stderr(
      `Warning: there is no erasure ledger at ${printable(ledger)} (ERASURE_LEDGER; by default in DATA_DIR): if players were erased ` +
        "since this backup was made, restore again (into a new database) with ERASURE_LEDGER naming the community's ledger.\n",
    );
  }
}
