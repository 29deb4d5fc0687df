import { Prisma } from "../generated/prisma/client.js";

/** A quoted identifier: the names come from our own schemas, and are quoted all the same. */
export function column(name: string): Prisma.Sql {
  return Prisma.raw(`"${name.replaceAll('"', '""')}"`);
}

/** `"a" = $1, "b" = $2` for the fields sent (columns are named as the fields; undefined ones are left out). */
export function setColumns(fields: Record<string, unknown>): Prisma.Sql {
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined);
  return Prisma.join(entries.map(([name, value]) => Prisma.sql`${column(name)} = ${value}`));
}

/** `("a", "b") VALUES ($1, $2)` for the fields given. */
export function insertColumns(fields: Record<string, unknown>): Prisma.Sql {
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined);
  return Prisma.sql`(${Prisma.join(entries.map(([name]) => column(name)))}) VALUES (${Prisma.join(entries.map(([, value]) => value))})`;
}

/**
 * An UPDATE of one row by its key that reads the row first, locked, in the
 * same statement: `old` (`SELECT … FOR UPDATE`, to be the CTE `old`) holds
 * what the update replaces, and the UPDATE reads its key from `old`, so that
 * it runs after the read. A concurrent writer's change lands wholly before
 * (and is what `old` holds) or after, never between the read and the write.
 * `before` and `after` are jsonb expressions of the fields written, over
 * `old` and over the written row `w`.
 */
export class RowUpdate {
  constructor(
    readonly old: Prisma.Sql,
    readonly update: Prisma.Sql,
    readonly before: Prisma.Sql,
    readonly after: Prisma.Sql,
  ) {}

  /** The update on its own, without an audit entry. */
  alone(): Prisma.Sql {
    return Prisma.sql`WITH old AS (${this.old}) ${this.update}`;
  }

  /** `table`'s row whose `key` is `id`: `set` written to it when `condition` (`AND …`) holds. */
  static of(table: string, key: string, id: unknown, set: Prisma.Sql, condition: Prisma.Sql, fields: (alias: string) => Prisma.Sql): RowUpdate {
    return new RowUpdate(
      Prisma.sql`SELECT * FROM ${column(table)} WHERE ${column(key)} = ${id} FOR UPDATE`,
      Prisma.sql`UPDATE ${column(table)} SET ${set} WHERE ${column(key)} = (SELECT ${column(key)} FROM old)${condition} RETURNING *`,
      fields("old"),
      fields("w"),
    );
  }
}
