import { z } from "zod";
import { text } from "./rules.js";

/**
 * A query parameter holding an integer. Query values arrive as text; a
 * repeated parameter arrives as an array and is refused. Documented as the
 * integer it must be (a generated client sends a number), with the range of
 * `schema`, rather than as the text it travels as.
 */
export const queryInt = (schema: z.ZodNumber) =>
  z
    .string("expected a single value")
    .regex(/^-?\d{1,10}$/, "expected an integer")
    .transform(Number)
    .pipe(schema)
    .meta({
      override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
        delete jsonSchema.pattern;
        Object.assign(jsonSchema, { type: "integer", format: "int32", minimum: schema.minValue, maximum: schema.maxValue });
      },
    });

export const queryText = (max: number) => z.string("expected a single value").pipe(text(max));
