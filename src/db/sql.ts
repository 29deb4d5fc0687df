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
