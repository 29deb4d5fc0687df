import { inSpan, SpanKind, tracing } from "../core/tracing.js";

/**
 * A span for each SQL statement (tracing on, core/tracing.ts), on PostgreSQL and the embedded database alike:
 * the Prisma driver adapter, wrapped. The span is named by the statement's kind and first table
 * (`INSERT reward_logs`, `SELECT players`) and holds those two and the database system: never the SQL
 * text nor its values. Tracing off: the adapter itself, untouched.
 */
export function traced<T extends { connect(): Promise<object> }>(factory: T): T {
  if (!tracing.on) return factory;
  return new Proxy(factory, {
    get(target, name) {
      if (name === "connect") return async () => tracedQueryable(await target.connect());
      return bound(target, name);
    },
  });
}

const bound = (target: object, name: string | symbol): unknown => {
  const value: unknown = Reflect.get(target, name, target);
  return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
};

type Query = { sql: string };
type Method = (query: Query) => Promise<unknown>;

/** An adapter or a transaction: queryRaw and executeRaw in spans; a transaction it starts, wrapped too. */
function tracedQueryable<Q extends object>(queryable: Q): Q {
  return new Proxy(queryable, {
    get(target, name) {
      if (name === "queryRaw" || name === "executeRaw") {
        const method = Reflect.get(target, name, target) as Method;
        return (query: Query) => {
          const { kind, table } = statementOf(query.sql);
          const attributes = { "db.system.name": "postgresql", "db.operation.name": kind, ...(table ? { "db.collection.name": table } : {}) };
          return inSpan(table ? `${kind} ${table}` : kind, attributes, () => method.call(target, query), { kind: SpanKind.CLIENT });
        };
      }
      if (name === "startTransaction") {
        const start = Reflect.get(target, name, target) as (...args: unknown[]) => Promise<object>;
        return async (...args: unknown[]) => tracedQueryable(await start.apply(target, args));
      }
      return bound(target, name);
    },
  });
}

/** The first table a statement writes (INSERT INTO, UPDATE, DELETE FROM), else reads (FROM). */
// Not a row lock's FOR [NO KEY] UPDATE, nor an upsert's DO UPDATE.
const WRITES = /\b(INSERT\s+INTO|(?<!\b(?:FOR|DO|KEY)\s+)UPDATE|DELETE\s+FROM)\s+(?:"?\w+"?\.)?"?(\w+)"?/i;
const READS = /\bFROM\s+(?:"?\w+"?\.)?"?(\w+)"?/i;
const KINDS: Record<string, string> = { "INSERT INTO": "INSERT", UPDATE: "UPDATE", "DELETE FROM": "DELETE" };

/** Statements seen, named once: a service runs a few hundred distinct ones. Bounded, for SQL built per request. */
const named = new Map<string, { kind: string; table: string | undefined }>();
const MAX_NAMED = 2_000;

export function statementOf(sql: string): { kind: string; table: string | undefined } {
  const known = named.get(sql);
  if (known) return known;
  const write = WRITES.exec(sql);
  const first = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? "SQL";
  const found = write
    ? { kind: KINDS[write[1]!.toUpperCase().replace(/\s+/, " ")] ?? first, table: write[2] }
    : { kind: first === "WITH" ? "SELECT" : first, table: first === "SELECT" || first === "WITH" ? READS.exec(sql)?.[1] : undefined };
  if (named.size >= MAX_NAMED) named.clear();
  named.set(sql, found);
  return found;
}
