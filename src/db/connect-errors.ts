import { OperatorError } from "../core/operator-error.js";

/**
 * The failures a newcomer meets when DATABASE_URL is not right yet, each said
 * in one line that names the fix, instead of a driver's stack trace: the
 * database does not exist, the server cannot be reached, the password or user
 * is refused. Never echoes the password.
 */
export class DatabaseConnectError extends OperatorError {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseConnectError";
  }
}

/** DATABASE_URL and DATABASE_DIRECT_URL reach two different databases. */
export class DatabaseMismatchError extends OperatorError {}

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be resolved now",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "no answer",
  ECONNRESET: "the connection was reset",
};

/** PostgreSQL's SQLSTATEs for a refused login (invalid_password, invalid_authorization_specification). */
const REFUSED_LOGIN = new Set(["28P01", "28000"]);
const MISSING_DATABASE = "3D000";

interface Found {
  code?: string;
  message: string;
}

/** The error itself or a cause of it (Prisma and AggregateError wrap the driver's) that has a code we know. */
function find(error: unknown, depth = 0): Found | undefined {
  if (typeof error !== "object" || error === null || depth > 5) return undefined;
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const text = typeof message === "string" ? message : "";
  if (typeof code === "string" && (code in UNREACHABLE || REFUSED_LOGIN.has(code) || code === MISSING_DATABASE)) return { code, message: text };
  if (/connection timeout|timeout expired/i.test(text)) return { code: "ETIMEDOUT", message: text };
  for (const inner of [cause, ...(Array.isArray(errors) ? (errors as unknown[]) : [])]) {
    const found = find(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** `error` said in one line naming the fix, when it is one of the failures above; else undefined. */
export function explainConnectError(error: unknown, databaseUrl: string | undefined): DatabaseConnectError | undefined {
  if (!databaseUrl) return undefined;
  const found = find(error);
  if (!found) return undefined;
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return undefined;
  }
  const host = url.hostname || "localhost";
  const port = url.port || "5432";
  const user = decodeURIComponent(url.username) || "(the default user)";
  const where = `the PostgreSQL server at ${host}:${port}`;
  if (found.code === MISSING_DATABASE) {
    const name = /database "([^"]+)" does not exist/.exec(found.message)?.[1] ?? decodeURIComponent(url.pathname.slice(1));
    const as = url.username ? ` -U ${decodeURIComponent(url.username)}` : "";
    return new DatabaseConnectError(
      `The database "${name}" does not exist on ${where} (DATABASE_URL): create it with \`createdb -h ${host} -p ${port}${as} ${name}\` ` +
        `(or \`CREATE DATABASE "${name}";\` in psql).`,
    );
  }
  if (found.code && REFUSED_LOGIN.has(found.code)) {
    return new DatabaseConnectError(
      `${where[0]!.toUpperCase()}${where.slice(1)} refused the login of user ${user} (${found.message}): ` +
        "check the user name and password in DATABASE_URL (postgresql://USER:PASSWORD@HOST:PORT/DATABASE).",
    );
  }
  return new DatabaseConnectError(
    `Cannot reach ${where} (DATABASE_URL): ${UNREACHABLE[found.code!] ?? found.message}. ` +
      "Is PostgreSQL running there, and are the host and port in DATABASE_URL right?",
  );
}
