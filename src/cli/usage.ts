import { BACKUP_USAGE } from "./backup-command.js";
import { FREEZE_USAGE } from "./freeze-command.js";
import { PLAYER_USAGE } from "./player-command.js";
import { RETENTION_USAGE } from "./retention-command.js";
import { SEASON_USAGE } from "./season-command.js";
import { WEBHOOK_USAGE } from "./webhook-command.js";

/** What `help` prints: every command, each group's lines from its own file. */
export const USAGE = `Usage: npm run --silent cli -- <command>

Commands:
  user create <username> [--role ROLE]   create an API user; prints its key alone on stdout; the
                                         routes it may call come from the CALLERS_USER_A..D lists
                                         naming it (environment), not from its role
  user list [--json]                     list API users (never their keys)
  user revoke <username>                 revoke the user's key at once
  user rotate <username> [--grace SECONDS]
                                         issue a new key (printed on stdout); the old one keeps working
                                         for SECONDS (default 86400, 24 h; 0: it stops at once)
  user allow-ip <username> <cidr>[,<cidr>…]
                                         the key works only from these addresses (IPv4/IPv6, CIDR or plain)
  user allow-ip <username> --any         the key works from anywhere again
  import <file.json>                     load data in the API's shapes, upserting by id, all or nothing
  export [file.json]                     write all data in the same format (stdout when no file)
${BACKUP_USAGE}
${FREEZE_USAGE}
${PLAYER_USAGE}
${RETENTION_USAGE}
${SEASON_USAGE}
  seed                                   load the sample community (sample/community.json) into an
                                         empty database, its temporary items moved to today
  audit [--since WHEN] [--user NAME] [--limit N] [--json]
                                         the audit log of writes, newest first; WHEN is an ISO 8601
                                         date-time or a duration back from now (30m, 24h, 7d);
                                         at most N entries (default 100); --json: one object a line
${WEBHOOK_USAGE}
  migrate                                apply pending database migrations
  help                                   this text

A username beginning with '-' (refused for new users) goes after --: user revoke -- -name.

The CLI uses the same database as the server (DATABASE_URL, or the embedded
database in DATA_DIR). While the server runs on the embedded database, which
one process may open at a time, the server runs the command for the CLI.`;
