import { type AuditSource, cliSource } from "../audit/audit.js";
import { AddressAllowList } from "../auth/address-allow-list.js";
import { CallerDirectory } from "../auth/callers.js";
import type { Config } from "../core/config.js";
import { ApiError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Database } from "../db/database.js";
import { migrate } from "../db/migrate.js";
import { frozenWrite } from "../db/service-state.js";
import { formatTimestamp } from "../fields/timestamp.js";
import { loadSample } from "../transfer/sample.js";
import { ImportError } from "../transfer/transfer.js";
import { DEFAULT_GRACE_SECONDS, graceSecondsSchema, pendingRotation } from "../users/grace.js";
import { type ApiUserSummary, ApiUsers, DEFAULT_ROLE, roleSchema, usernameSchema } from "../users/users.js";
import { parse, printable, table, terminalJson, UsageError } from "./args.js";
import { auditCommand } from "./audit-command.js";
import { backupCommand, countsCommand, restoreCommand } from "./backup-command.js";
import { freezeCommand, thawCommand } from "./freeze-command.js";
import { playerCommand } from "./player-command.js";
import { retentionCommand } from "./retention-command.js";
import { seasonCommand } from "./season-command.js";
import { type CliFiles, exportCommand, importCommand, localFiles } from "./transfer-command.js";
import { USAGE } from "./usage.js";
import { webhookCommand } from "./webhook-command.js";

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface CliDeps {
  config: Config;
  db: Database;
  logger: Logger;
  /** Who the audit log names for this run's changes; defaults to cli:<os user>. */
  actor?: AuditSource;
  /** For --since durations; defaults to the system clock. */
  now?: () => Date;
  /** Defaults to this process's file system. */
  files?: CliFiles;
}

const formatDate = (d: Date | null) => (d ? formatTimestamp(d) : "");

/** Runs one command and returns the process exit code. */
export async function runCli(argv: string[], deps: CliDeps, io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, deps, io);
  } catch (error) {
    // Messages repeat names and values from the file or the database: printed with their controls escaped.
    if (error instanceof UsageError) {
      io.stderr(`${printable(error.message)}\n\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof ImportError) {
      io.stderr(`${ImportError.HEADING}\n${error.problems.map((p) => `  - ${printable(p)}\n`).join("")}`);
      return 1;
    }
    if (error instanceof ApiError) {
      io.stderr(`${printable(error.message)}\n`);
      return 1;
    }
    const frozen = frozenWrite(error);
    if (frozen) {
      io.stderr(`Refused: writes are frozen since ${frozen.since} (${printable(frozen.reason)}); nothing was written (thaw lets writes through again).\n`);
      return 1;
    }
    throw error;
  }
}

function checked<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } } },
  what: string,
  value: unknown,
): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new ApiError("VALIDATION", `Invalid ${what} '${String(value)}': ${result.error.issues.map((i) => i.message).join("; ")}`);
  return result.data;
}

async function dispatch(argv: string[], deps: CliDeps, io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  const users = new ApiUsers(deps.db.prisma);
  switch (command) {
    case undefined:
    case "help":
    case "--help":
    case "-h":
      io.stdout(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    case "migrate": {
      const { applied } = await migrate(deps.db, deps.logger);
      io.stdout(applied.length ? `Applied: ${applied.join(", ")}\n` : "The database is up to date.\n");
      return 0;
    }
    case "user":
      return userCommand(rest, users, deps, io);
    case "webhook":
      return webhookCommand(rest, deps.db.prisma, deps.config, deps.actor ?? cliSource(), io);
    case "audit":
      return auditCommand(rest, deps.db.prisma, deps.now ?? (() => new Date()), io);
    case "import":
      return importCommand(rest, deps.db.prisma, deps.files ?? localFiles, deps.actor ?? cliSource(), io);
    case "seed": {
      const { positionals } = parse(rest, {});
      if (positionals.length > 0) throw new UsageError("seed takes no argument");
      const summary = await loadSample(deps.db.prisma, deps.now?.() ?? new Date(), deps.actor ?? cliSource());
      io.stdout(
        `Loaded the sample community: ${Object.entries(summary)
          .map(([k, n]) => `${n} ${k}`)
          .join(", ")}.\n`,
      );
      return 0;
    }
    case "player":
      return playerCommand(rest, deps.db, deps.config, deps.files ?? localFiles, deps.actor ?? cliSource(), io);
    case "season":
      return seasonCommand(rest, deps.db, deps.actor ?? cliSource(), io);
    case "retention":
      return retentionCommand(rest, deps.db.prisma, deps.config, io);
    case "export":
      return exportCommand(rest, deps.db.prisma, deps.files ?? localFiles, io);
    case "backup":
      return backupCommand(rest, deps.db, deps.files ?? localFiles, deps.config, io);
    case "restore":
      return restoreCommand(rest, deps.db, deps.files ?? localFiles, deps.config, io, deps.actor ?? cliSource());
    case "counts":
      return countsCommand(rest, deps.db, deps.config, io);
    case "freeze":
      return freezeCommand(rest, deps.db.prisma, deps.actor ?? cliSource(), io);
    case "thaw":
      return thawCommand(rest, deps.db.prisma, deps.actor ?? cliSource(), io);
    default:
      throw new UsageError(`Unknown command '${command}'`);
  }
}

async function userCommand(args: string[], users: ApiUsers, deps: CliDeps, io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  const by = deps.actor ?? cliSource();
  switch (sub) {
    case "create": {
      const { values, positionals } = parse(rest, { role: { type: "string" } });
      if (positionals.length !== 1) throw new UsageError("user create takes one username");
      const username = checked(usernameSchema, "username", positionals[0]);
      const role = checked(roleSchema, "role", values.role ?? DEFAULT_ROLE);
      const { apiKey } = await users.create(username, role, by);
      io.stdout(`${apiKey}\n`);
      const groups = [...new CallerDirectory(deps.config.callers).groupsOf(username)];
      io.stderr(
        groups.length
          ? `Created '${username}' (groups ${groups.join(", ")}). The key above is shown only once.\n`
          : `Created '${username}'. It is in no caller group yet: add it to one of CALLERS_USER_A..D, or every route answers 403.\n`,
      );
      return 0;
    }
    case "list": {
      const { values, positionals } = parse(rest, { json: { type: "boolean" } });
      if (positionals.length > 0) throw new UsageError("user list takes no argument");
      const list = await users.list();
      const directory = new CallerDirectory(deps.config.callers);
      const rows = list.map((u: ApiUserSummary) => ({
        username: u.username,
        role: u.role,
        groups: [...directory.groupsOf(u.username)].join(","),
        status: u.revokedAt ? "revoked" : "active",
        key: `${u.keyHint}…`,
        "last used": formatDate(u.keyLastUsedAt),
        "previous key until": formatDate(pendingRotation(u, new Date())?.expiresAt ?? null),
        created: formatDate(u.createdAt),
        rotated: formatDate(u.rotatedAt),
        revoked: formatDate(u.revokedAt),
        "allowed ips": u.allowedIps ?? "any",
      }));
      io.stdout(values.json ? `${terminalJson(rows, 2)}\n` : table(rows));
      return 0;
    }
    case "revoke": {
      const { positionals } = parse(rest, {});
      if (positionals.length !== 1) throw new UsageError("user revoke takes one username");
      const user = await users.revoke(positionals[0]!, by);
      io.stdout(`Revoked '${user.username}': its key no longer works.\n`);
      return 0;
    }
    case "rotate": {
      const { values, positionals } = parse(rest, { grace: { type: "string" } });
      if (positionals.length !== 1) throw new UsageError("user rotate takes one username");
      const grace =
        values.grace === undefined
          ? DEFAULT_GRACE_SECONDS
          : checked(graceSecondsSchema, "--grace", /^\d+$/.test(values.grace) ? Number(values.grace) : values.grace);
      const { apiKey, user } = await users.rotate(positionals[0]!, by, grace);
      const until = pendingRotation(user, new Date())?.expiresAt;
      io.stdout(`${apiKey}\n`);
      io.stderr(
        `Rotated the key of '${user.username}': the previous key ${until ? `works until ${formatTimestamp(until)}` : "no longer works"}. ` +
          "The key above is shown only once.\n",
      );
      return 0;
    }
    case "allow-ip":
      return allowIp(rest, users, io, by);
    default:
      throw new UsageError(sub ? `Unknown user command '${sub}'` : "user needs a command: create, list, revoke, rotate or allow-ip");
  }
}

async function allowIp(args: string[], users: ApiUsers, io: CliIo, by: AuditSource): Promise<number> {
  const { values, positionals } = parse(args, { any: { type: "boolean" } });
  const [username, ...addresses] = positionals;
  if (!username || (values.any ? addresses.length > 0 : addresses.length === 0)) {
    throw new UsageError("user allow-ip takes a username and either a comma-separated list of addresses/CIDRs or --any");
  }
  let list: AddressAllowList | null = null;
  if (!values.any) {
    const parsed = AddressAllowList.parse(addresses.join(","));
    if (!parsed.list) throw new ApiError("VALIDATION", `Invalid allowed addresses, nothing changed: ${parsed.problems.join("; ")}`);
    list = parsed.list;
  }
  const user = await users.setAllowedAddresses(username, list, by);
  io.stdout(
    list ? `The key of '${user.username}' now works only from ${list.entries.join(", ")}.\n` : `The key of '${user.username}' now works from any address.\n`,
  );
  return 0;
}
