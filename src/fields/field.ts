import { z } from "zod";
import { bool, clearableText, count, INT32_MAX, id, int32, text } from "./rules.js";
import { formatTimestamp, TIMESTAMP_PATTERN, timestamp, timestampSql } from "./timestamp.js";

/**
 * One field of an entity: its input rule (what an import file or a request
 * may hold), the JSON schema of the answer, how a database value becomes that
 * JSON (in TypeScript and in SQL), and whether it is sensitive. Columns are
 * named as the fields (prisma/schema.prisma).
 */
export interface FieldSpec<In extends z.ZodType, Out extends z.ZodType, Value> {
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
  /** The rule of a create body, when it differs from `input` (a default, a stricter rule). */
  create?: z.ZodType;
  /** A create body that leaves it out gets the request's moment. */
  nowByDefault?: boolean;
  /** Another name a PATCH body may give it (listed before it; both with different values is a 400). */
  alias?: string;
  /** The field whose value this one must exceed, in a whole record. */
  after?: string;
  /** The table a foreign key points to. */
  references?: string;
  /** A citext column. */
  caseInsensitive?: boolean;
  /** The unique constraint it belongs to: its index's name (by default `<table>_<field>_key`) and how a 409 names it. */
  unique?: UniqueSpec;
  /** The length bounds of a text field, for `.nullable()` to make the PATCH rule. */
  length?: { min: number; max: number };
}

/**
 * A unique constraint: the fields that give `.unique()` the same one form it
 * together; its name is the migration's (`<table>_<field>_key` unless given),
 * its subject is how a 409 names the refused value (the field's name unless
 * given), `taken` how it says the value is taken ("is already used"), `where`
 * the boolean column of a partial index (only its rows true are unique).
 */
export interface UniqueSpec {
  constraint?: string;
  subject?: string;
  taken?: string;
  where?: string;
}

export class Field<In extends z.ZodType, Out extends z.ZodType, Value, Sensitive extends boolean = false, Create extends z.ZodType = In> {
  declare readonly isSensitive: Sensitive;
  declare readonly createRule: Create;
  /** The answer's schema with its documentation. */
  readonly output: Out;

  constructor(readonly spec: FieldSpec<In, Out, Value>) {
    this.output = spec.doc ? spec.output.meta(spec.doc) : spec.output;
  }

  get input(): In {
    return this.spec.input;
  }

  private with(extra: Partial<FieldSpec<In, Out, Value>>): Field<In, Out, Value, Sensitive, Create> {
    return new Field({ ...this.spec, ...extra });
  }

  describe(description: string, example?: unknown) {
    return this.with({ doc: this.spec.document?.(description) ?? (example === undefined ? { description } : { description, example }) });
  }

  nullable(): Field<z.ZodNullable<In>, z.ZodNullable<Out>, Value | null, Sensitive> {
    const { input, output, toJson, length, ...rest } = this.spec;
    return new Field({
      ...rest,
      input: input.nullable(),
      output: output.nullable(),
      toJson: toJson && ((value: Value | null) => (value === null ? null : toJson(value))),
      patch: length && clearableText(length.max, length.min),
    });
  }

  sensitive(): Field<In, Out, Value, true, Create> {
    return new Field({ ...this.spec, sensitive: true });
  }

  /** A citext column, answered as plain text. */
  caseInsensitive() {
    return this.with({ sql: (column) => `${column}::text`, caseInsensitive: true });
  }

  references(table: string) {
    return this.with({ references: table });
  }

  /** Unique alone, or with the other fields given the same `spec`. */
  unique(spec: UniqueSpec = {}) {
    return this.with({ unique: spec });
  }

  /** Its rule in a create body: the input rule refined (a default, a stricter bound). */
  onCreate<C extends z.ZodType>(refine: (rule: In) => C): Field<In, Out, Value, Sensitive, C> {
    return new Field({ ...this.spec, create: refine(this.spec.input) });
  }

  /** Optional in a create body, which then records the request's moment. */
  nowByDefault(): Field<In, Out, Value, Sensitive, z.ZodOptional<In>> {
    return new Field({ ...this.spec, create: this.spec.input.optional(), nowByDefault: true });
  }

  alsoNamed(alias: string) {
    return this.with({ alias });
  }

  /** In a whole record (an import), its value must be later than `other`'s. */
  after(other: string) {
    return this.with({ after: other });
  }
}

/** A field whose database value is what its input rule parses to. */
const plain = <In extends z.ZodType, Out extends z.ZodType>(input: In, output: Out, extra: Partial<FieldSpec<In, Out, z.output<In>>> = {}) =>
  new Field<In, Out, z.output<In>>({ input, output, sensitive: false, ...extra });

/** The field kinds of the API. */
export const field = {
  id: () => plain(id, z.int().min(1).max(INT32_MAX)),
  count: () => plain(count, z.int().min(0).max(INT32_MAX)),
  int32: () =>
    plain(
      int32,
      z
        .int()
        .min(-INT32_MAX - 1)
        .max(INT32_MAX),
    ),
  bool: () => plain(bool, z.boolean()),
  text: (max: number, min = 1) => plain(text(max, min), z.string(), { length: { min, max } }),
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
