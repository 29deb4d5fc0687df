import { z } from "zod";
import { RowUpdate, setColumns } from "../db/sql.js";
import { Prisma } from "../generated/prisma/client.js";
import type { Field } from "./field.js";
import { requireAChange } from "./rules.js";

export { field } from "./field.js";

type AnyField = Field<z.ZodType, z.ZodType, never, boolean, z.ZodType>;
type Fields = Record<string, AnyField>;
type InputShape<F extends Fields> = { [K in keyof F]: F[K]["spec"]["input"] };
type OutputShape<F extends Fields> = { [K in keyof F]: F[K]["spec"]["output"] };
type PublicKeys<F extends Fields> = { [K in keyof F]: F[K]["isSensitive"] extends true ? never : K }[keyof F];

/** The answer of one record, as JSON.stringify writes it. */
export type Json<F extends Fields> = z.output<z.ZodObject<OutputShape<F>>>;
export type PublicJson<F extends Fields> = Pick<Json<F>, Extract<PublicKeys<F>, keyof Json<F>>>;

/** A database row with the entity's columns (Prisma's model type fits). */
type RowOf<F extends Fields> = { [K in keyof F]: F[K] extends Field<z.ZodType, z.ZodType, infer V, boolean, z.ZodType> ? V : never };

export interface EntityOptions<F extends Fields, Key extends keyof F & string, Kind extends string, Versioned extends boolean> {
  table: string;
  /** Its name in event types (`player.created`), audit targets (`player:7`) and an import's counts. */
  kind: Kind;
  fields: F;
  /** The primary key's column (default id), and whether a sequence makes it. */
  primaryKey?: Key;
  generatedKey?: boolean;
  /** The OpenAPI component of the full record. */
  component: { id: string; description?: string };
  /**
   * The OpenAPI component of the summary (the record without its sensitive
   * fields), when the API answers one; its description is given the list of
   * the fields it leaves out.
   */
  summaryComponent?: { id: string; description: (omitted: string) => string };
  /** Columns besides the fields, kept by the database (a trigger) and never answered nor taken from a client. */
  bookkeeping?: readonly string[];
  /** Its list is cached and synced (data_versions); its migration adds the triggers of docs/DEVELOPMENT.md, "Adding a resource". */
  versioned?: Versioned;
  /** The route (under /api) answering its record with every field its events carry, whose callers see them; none: the admin routes'. */
  eventsSeenThrough?: string;
}

/** One projection of an entity: its answer schema, its SELECT list and its row → answer mapper. */
export interface Projection<F extends Fields, Out> {
  readonly names: readonly string[];
  readonly response: z.ZodType<Out>;
  /** `expression AS "name", …` in the answer's order, built once. */
  readonly columns: Prisma.Sql;
  toJson(row: Pick<RowOf<F>, keyof F & keyof Out>): Out;
}

/** A unique constraint besides the primary key, and how a 409 names a value it refused. */
export interface UniqueConstraint {
  constraint: string;
  table: string;
  columns: string[];
  caseInsensitive: boolean;
  subject: string;
  /** How the 409 says the value is taken. */
  taken?: string;
  /** A partial index's boolean column: only the rows where it is true are unique (none an import writes). */
  where?: string;
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `a, b, c and d`. */
export function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** The SQL answering the field's JSON value from `column`. */
function sqlOf(field: AnyField, column: string): string {
  return field.spec.sql ? field.spec.sql(column) : column;
}

function project<F extends Fields, Out>(fields: F, names: (keyof F & string)[], meta: { id: string; description?: string }): Projection<F, Out> {
  const shape = Object.fromEntries(names.map((n) => [n, fields[n]!.output]));
  const columns = names.map((n) => (fields[n]!.spec.sql ? `${sqlOf(fields[n]!, quote(n))} AS ${quote(n)}` : quote(n))).join(", ");
  const converters = names.map((n) => [n, fields[n]!.spec.toJson as ((v: unknown) => unknown) | undefined] as const);
  return {
    names,
    response: z
      .strictObject(shape)
      .meta(meta.description === undefined ? { id: meta.id } : { id: meta.id, description: meta.description }) as unknown as z.ZodType<Out>,
    columns: Prisma.raw(columns),
    toJson(row) {
      const json: Record<string, unknown> = {};
      const values = row as Record<string, unknown>;
      for (const [name, convert] of converters) json[name] = convert ? convert(values[name]) : values[name];
      return json as Out;
    },
  };
}

/** The unique constraints the fields declare: one per constraint name, its columns in the table's order. */
function uniqueConstraints(table: string, fields: Fields): UniqueConstraint[] {
  const byName = new Map<string, UniqueConstraint>();
  for (const [name, f] of Object.entries(fields)) {
    const unique = f.spec.unique;
    if (!unique) continue;
    const constraint = unique.constraint ?? `${table}_${name}_key`;
    const known = byName.get(constraint);
    if (known) known.columns.push(name);
    else {
      const subject = unique.subject ?? name[0]!.toUpperCase() + name.slice(1);
      byName.set(constraint, {
        constraint,
        table,
        columns: [name],
        caseInsensitive: f.spec.caseInsensitive === true,
        subject,
        taken: unique.taken,
        where: unique.where,
      });
    }
  }
  return [...byName.values()];
}

/**
 * An entity from its ordered table of fields; the rest is derived: the full
 * record and its summary (schemas, SELECT lists, mappers), the import rule,
 * the create and PATCH bodies, the foreign keys and unique constraints.
 */
export function defineEntity<F extends Fields, Kind extends string, Key extends keyof F & string = "id" & keyof F, Versioned extends boolean = false>(
  options: EntityOptions<F, Key, Kind, Versioned>,
) {
  const { fields, table } = options;
  const key = options.primaryKey ?? "id";
  const names = Object.keys(fields) as (keyof F & string)[];
  const sensitive = names.filter((n) => fields[n]!.spec.sensitive);
  const publicNames = names.filter((n) => !fields[n]!.spec.sensitive);
  const others = names.filter((n) => n !== key);
  const aliased = names.flatMap((n) => (fields[n]!.spec.alias ? [[fields[n]!.spec.alias, n] as const] : []));
  const summary = options.summaryComponent;
  const references = Object.fromEntries(names.flatMap((n) => (fields[n]!.spec.references ? [[n, fields[n]!.spec.references]] : []))) as Record<string, string>;
  const record = z.strictObject(Object.fromEntries(names.map((n) => [n, fields[n]!.input])) as InputShape<F>).superRefine((value, ctx) => {
    for (const n of names) {
      const after = fields[n]!.spec.after;
      if (after && !((value as Record<string, unknown>)[n]! > (value as Record<string, unknown>)[after]!)) {
        ctx.addIssue({ code: "custom", message: `expected a date after ${after}`, path: [n] });
      }
    }
  });
  /**
   * `jsonb_build_object('a', alias."a", …)`: the record but its primary key, or only the fields named, as
   * answered (an audit entry's changes).
   */
  const changesSql = (alias: string, only?: readonly string[]): Prisma.Sql => {
    const named = only ? others.filter((n) => only.includes(n)) : others;
    return Prisma.raw(`jsonb_build_object(${named.map((n) => `'${n}', ${sqlOf(fields[n]!, `${alias}.${quote(n)}`)}`).join(", ")})`);
  };
  return {
    table,
    kind: options.kind,
    versioned: (options.versioned ?? false) as Versioned,
    eventsSeenThrough: options.eventsSeenThrough,
    fields,
    primaryKey: key,
    generatedKey: options.generatedKey ?? true,
    /** The whole record as an import file holds it. */
    record,
    full: project<F, Json<F>>(fields, names, options.component),
    summary: summary && project<F, PublicJson<F>>(fields, publicNames, { id: summary.id, description: summary.description(listed(sensitive)) }),
    /** The fields the summary leaves out. */
    sensitive,
    /** Foreign keys: column → referenced table. */
    references,
    unique: uniqueConstraints(table, fields),
    bookkeeping: options.bookkeeping ?? [],
    /** The body of a create: every field but the primary key, by its create rule. */
    createBody(example: Record<string, unknown>) {
      return z
        .strictObject(Object.fromEntries(others.map((n) => [n, fields[n]!.spec.create ?? fields[n]!.input])))
        .meta({ example }) as unknown as z.ZodObject<{
        [K in Exclude<keyof F, Key>]: F[K]["createRule"];
      }>;
    },
    /** A create body's values, the request's moment filling the fields that default to it (in whole seconds). */
    withDefaults<B extends object>(body: B, now: Date): B {
      const moment = new Date(Math.floor(now.getTime() / 1000) * 1000);
      const filled = names.filter((n) => fields[n]!.spec.nowByDefault && (body as Record<string, unknown>)[n] === undefined);
      return { ...body, ...Object.fromEntries(filled.map((n) => [n, moment])) };
    },
    /**
     * The body of a PATCH: the primary key, then every other field optional,
     * nullable text cleared by null or "null", a field with another name
     * accepted under both; at least one change.
     */
    patchBody(example: Record<string, unknown>) {
      const shape = names.flatMap((n) => {
        const spec = fields[n]!.spec;
        const rule = n === key ? spec.input : (spec.patch ?? spec.input).optional();
        return spec.alias ? [[spec.alias, rule] as const, [n, rule] as const] : [[n, rule] as const];
      });
      type Patch = { [K in keyof F]?: z.output<F[K]["spec"]["input"]> } & { [K in Key]: z.output<F[K]["spec"]["input"]> };
      const body = z
        .strictObject(Object.fromEntries(shape))
        .superRefine((value: Record<string, unknown>, ctx) => {
          for (const [alias, n] of aliased) {
            if (value[alias] !== undefined && value[n] !== undefined && value[alias] !== value[n]) {
              ctx.addIssue({ code: "custom", path: [alias], message: `differs from ${n}: send one of them` });
            }
          }
          requireAChange(value, ctx);
        })
        .meta({ example });
      if (aliased.length === 0) return body as unknown as z.ZodType<Patch>;
      return body.transform(({ ...value }: Record<string, unknown>) => {
        for (const [alias, n] of aliased) {
          value[n] = value[alias] ?? value[n];
          delete value[alias];
        }
        return value as Patch;
      });
    },
    changesSql,
    /**
     * The UPDATE of the record `id` writing `values` (fields by name) when `condition` (`AND …`) holds, with
     * the fields' values before and after it, as answered: for ctx.auditedWrite.
     */
    update(id: unknown, values: Record<string, unknown>, condition: Prisma.Sql = Prisma.empty): RowUpdate {
      const written = Object.keys(values).filter((n) => values[n] !== undefined);
      return RowUpdate.of(table, key, id, setColumns(values), condition, (alias) => changesSql(alias, written));
    },
    /** The 400/409 message of a foreign key that names nothing: `<column>: no player has id 7`. */
    unknownReference(values: Record<string, unknown>, constraint?: string): string {
      const named = (c: string) => constraint === `${table}_${c.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`)}_fkey`;
      const [column, target] = Object.entries(references).find(([c]) => named(c)) ?? Object.entries(references)[0]!;
      // Tables are named as plural nouns.
      return `${column}: no ${target.replace(/s$/, "")} has id ${String(values[column])}`;
    },
  };
}

export type Entity = ReturnType<typeof defineEntity>;
