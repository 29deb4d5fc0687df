import type { Config } from "../core/config.js";
import type { DbClient } from "../db/client.js";
import { lastSweep, RETENTION_KINDS, type Removed, sweeperName, sweepRetention } from "../privacy/retention.js";
import { parse, printable, UsageError } from "./args.js";

export const RETENTION_USAGE = `  retention status                       the retention settings, and the last sweep: when, by which
                                         instance, what it removed (docs/PRIVACY.md)
  retention sweep                        sweep now (the servers sweep every hour by themselves): what
                                         its settings have kept long enough is removed; prints the counts`;

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const counts = (removed: Removed) => RETENTION_KINDS.map((kind) => `${removed[kind] ?? 0} ${kind}`).join(", ");

/** `retention status | sweep`: the sweep of src/privacy/retention.ts, from the command line. */
export async function retentionCommand(args: string[], db: DbClient, config: Config, io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const { positionals } = parse(rest, {});
  if (positionals.length > 0) throw new UsageError(`retention ${sub ?? ""} takes no argument`);
  switch (sub) {
    case "status": {
      io.stdout(
        `Kept: players' IP addresses ${config.playerIpRetainDays} days (PLAYER_IP_RETAIN_DAYS), audit values ${config.auditValuesRetainDays} days ` +
          `(AUDIT_VALUES_RETAIN_DAYS), finished events ${config.webhooksRetainDays} days (WEBHOOKS_RETAIN_DAYS), ` +
          `idempotent answers ${config.idempotencyRetainHours} hours (IDEMPOTENCY_RETAIN_HOURS), past leaderboards ${config.leaderboardRetainDays} days ` +
          "(LEADERBOARD_RETAIN_DAYS).\n",
      );
      const last = await lastSweep(db);
      io.stdout(
        last.finishedAt
          ? `Last sweep ended ${last.finishedAt.toISOString()} on ${printable(last.sweptBy ?? "?")}: removed ${counts(last.removed ?? ({} as Removed))}.\n`
          : "No sweep has ended on this database yet.\n",
      );
      if (last.sweeping) io.stdout(`A sweep is running now, on ${printable(last.sweeping)}.\n`);
      return 0;
    }
    case "sweep": {
      const outcome = await sweepRetention(db, config, `cli:${sweeperName()}`, { force: true });
      if (outcome.result !== "done") {
        io.stderr(`Not swept: ${printable(outcome.detail)}.\n`);
        return 1;
      }
      io.stdout(`Swept in ${outcome.seconds.toFixed(1)} s: removed ${counts(outcome.removed)}.\n`);
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? "retention takes status or sweep" : `Unknown retention command '${sub}'`);
  }
}
