import { z } from "zod";
import { Prisma } from "../generated/prisma/client.js";
import { bool, clearableText, count, id, int32, INT32_MAX, text } from "./rules.js";
import { formatTimestamp, timestamp, TIMESTAMP_PATTERN, timestampSql } from "./timestamp.js";

/**
 * One field of an entity: its input rule (what an import file or a request
 * may hold), the JSON schema of the answer, how a database value becomes that
 * JSON (in TypeScript and in SQL), and whether it is sensitive. Columns are
 * named as the fields (prisma/schema.prisma).
 */
interface FieldSpec<In extends z.ZodType, Out extends z.ZodType, Value> {
  input: In;
  output: Out;
  /** The OpenAPI documentation of the answer's field. */
  doc?: Record<string, unknown>;
  /** How a description becomes that documentation, when the kind adds to it. */
  document?: (description: string) => Record<string, unknown>;
  /** The database value → the answer's value; undefined when they are the same. */
  toJson?: (value: Value) => z.output<Out>;
  /** The SQL expression answering the same JSON value, from the quoted column. */
  sql?: (column: string) => string;
  /** Left out of the summary (the public projection). */
  sensitive: boolean;
  /** The rule of a PATCH body, when it differs from `input` (nullable text cleared by "null"). */
  patch?: z.ZodType;
  /** The table a foreign key points to. */
  references?: string;
  /** The longest text, for `.nullable()` to know the PATCH rule. */
  maxLength?: number;
}

export class Field<In extends z.ZodType, Out extends z.ZodType, Value, Sensitive extends boolean = false> {
  declare readonly isSensitive: Sensitive;
  /** The answer's schema with its documentation. */
  readonly output: Out;

  constructor(readonly spec: FieldSpec<In, Out, Value>) {
    this.output = spec.doc ? spec.output.meta(spec.doc) : spec.output;
  }

  get input(): In {
    return this.spec.input;
  }

  describe(description: string, example?: unknown): Field<In, Out, Value, Sensitive> {
    const doc = this.spec.document?.(description) ?? (example === undefined ? { description } : { description, example });
    return new Field({ ...this.spec, doc });
  }

  nullable(): Field<z.ZodNullable<In>, z.ZodNullable<Out>, Value | null, Sensitive> {
    const { input, output, toJson, maxLength, ...rest } = this.spec;
    return new Field({
      ...rest,
      input: input.nullable(),
      output: output.nullable(),
      toJson: toJson && ((value: Value | null) => (value === null ? null : toJson(value))),
      patch: maxLength === undefined ? undefined : clearableText(maxLength),
    });
  }

  sensitive(): Field<In, Out, Value, true> {
    return new Field({ ...this.spec, sensitive: true });
  }

  /** A citext column, answered as plain text. */
  caseInsensitive(): Field<In, Out, Value, Sensitive> {
    return new Field({ ...this.spec, sql: (column) => `${column}::text` });
  }

  references(table: string): Field<In, Out, Value, Sensitive> {
    return new Field({ ...this.spec, references: table });
  }
}

type AnyField = Field<z.ZodType, z.ZodType, never, boolean>;

/** A field whose database value is what its input rule parses to. */
const plain = <In extends z.ZodType, Out extends z.ZodType>(input: In, output: Out, extra: Partial<FieldSpec<In, Out, z.output<In>>> = {}) =>
  new Field<In, Out, z.output<In>>({ input, output, sensitive: false, ...extra });

/** The field kinds of the API. */
export const field = {
  id: () => plain(id, z.int().min(1).max(INT32_MAX)),
  count: () => plain(count, z.int().min(0).max(INT32_MAX)),
  int32: () => plain(int32, z.int().min(-INT32_MAX - 1).max(INT32_MAX)),
  bool: () => plain(bool, z.boolean()),
  text: (max: number, min = 1) => plain(text(max, min), z.string(), { maxLength: min === 0 ? max : undefined }),
  timestamp: () =>
    plain(timestamp, z.string().regex(TIMESTAMP_PATTERN), {
      toJson: formatTimestamp,
      sql: timestampSql,
      document: (description) => ({
        description: `${description} (UTC, yyyy-mm-ddThh:mm:ssZ)`,
        format: "date-time",
        example: "2026-11-22T09:15:30Z",
      }),
    }),
  /** Any other pair of rules, e.g. a value stored as a column of another type. */
  custom: <In extends z.ZodType, Out extends z.ZodType>(
    input: In,
    output: Out,
    toJson?: (value: z.output<In>) => z.output<Out>,
    sql?: (column: string) => string,
  ) => plain(input, output, { toJson, sql }),
};

type Fields = Record<string, AnyField>;
type InputShape<F extends Fields> = { [K in keyof F]: F[K]["spec"]["input"] };
type OutputShape<F extends Fields> = { [K in keyof F]: F[K]["spec"]["output"] };
type PublicKeys<F extends Fields> = { [K in keyof F]: F[K]["isSensitive"] extends true ? never : K }[keyof F];

/** The answer of one record, as JSON.stringify writes it. */
export type Json<F extends Fields> = z.output<z.ZodObject<OutputShape<F>>>;
export type PublicJson<F extends Fields> = Pick<Json<F>, Extract<PublicKeys<F>, keyof Json<F>>>;

/** A database row with the entity's columns (Prisma's model type fits). */
type RowOf<F extends Fields> = { [K in keyof F]: F[K] extends Field<z.ZodType, z.ZodType, infer V, boolean> ? V : never };

export interface EntityOptions<F extends Fields, Key extends keyof F & string> {
  table: string;
  fields: F;
  /** The primary key's column (default id), and whether a sequence makes it. */
  primaryKey?: Key;
  generatedKey?: boolean;
  /** The OpenAPI component of the full record. */
  component: { id: string; description?: string };
  /** The OpenAPI component of the summary (the record without its sensitive fields), when the API answers one. */
  summaryComponent?: { id: string; description: string };
}

/** One projection of an entity: its answer schema, its SELECT list and its row → answer mapper. */
export interface Projection<F extends Fields, Out> {
  readonly names: readonly string[];
  readonly response: z.ZodType<Out>;
  /** `expression AS "name", …` in the answer's order, built once. */
  readonly columns: Prisma.Sql;
  toJson(row: Pick<RowOf<F>, keyof F & keyof Out>): Out;
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function project<F extends Fields, Out>(fields: F, names: (keyof F & string)[], meta: { id: string; description?: string }): Projection<F, Out> {
  const shape = Object.fromEntries(names.map((n) => [n, fields[n]!.output]));
  const columns = names
    .map((n) => {
      const { sql } = fields[n]!.spec;
      return sql ? `${sql(quote(n))} AS ${quote(n)}` : quote(n);
    })
    .join(", ");
  const converters = names.map((n) => [n, fields[n]!.spec.toJson as ((v: unknown) => unknown) | undefined] as const);
  return {
    names,
    response: z.strictObject(shape).meta(meta.description === undefined ? { id: meta.id } : { id: meta.id, description: meta.description }) as unknown as z.ZodType<Out>,
    columns: Prisma.raw(columns),
    toJson(row) {
      const json: Record<string, unknown> = {};
      const values = row as Record<string, unknown>;
      for (const [name, convert] of converters) json[name] = convert ? convert(values[name]) : values[name];
      return json as Out;
    },
  };
}

/**
 * An entity from its ordered table of fields; the rest is derived: the full
 * record and its summary (schemas, SELECT lists, mappers), the import rule,
 * the PATCH rules, the foreign keys.
 */
export function defineEntity<F extends Fields, Key extends keyof F & string = "id" & keyof F>(options: EntityOptions<F, Key>) {
  const { fields } = options;
  const names = Object.keys(fields) as (keyof F & string)[];
  const publicNames = names.filter((n) => !fields[n]!.spec.sensitive);
  const inputShape = Object.fromEntries(names.map((n) => [n, fields[n]!.input])) as InputShape<F>;
  return {
    table: options.table,
    fields,
    primaryKey: options.primaryKey ?? "id",
    generatedKey: options.generatedKey ?? true,
    /** The whole record as an import file holds it. */
    record: z.strictObject(inputShape),
    full: project<F, Json<F>>(fields, names, options.component),
    summary: options.summaryComponent ? project<F, PublicJson<F>>(fields, publicNames, options.summaryComponent) : undefined,
    /** Foreign keys: column → referenced table. */
    references: Object.fromEntries(names.flatMap((n) => (fields[n]!.spec.references ? [[n, fields[n]!.spec.references]] : []))) as Record<string, string>,
    /**
     * The fields of a PATCH body: the primary key, then every other field
     * optional, nullable text cleared by null or "null".
     */
    patchShape() {
      const key = options.primaryKey ?? "id";
      return Object.fromEntries(
        names.map((n) => {
          const spec = fields[n]!.spec;
          return [n, n === key ? spec.input : (spec.patch ?? spec.input).optional()];
        }),
      ) as { [K in keyof F]: K extends Key ? F[K]["spec"]["input"] : z.ZodOptional<F[K]["spec"]["input"]> };
    },
  };
}

export type Entity = ReturnType<typeof defineEntity>;
