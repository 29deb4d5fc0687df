import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { envSchema } from "../src/core/config.js";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

/** The default a variable's rule gives when it is unset, as written in the environment; undefined when it has none. */
function defaultOf(schema: z.ZodType): string | undefined {
  const def = schema._zod.def as { type: string; defaultValue?: unknown; in?: z.ZodType; innerType?: z.ZodType };
  if (def.type === "default") return String(def.defaultValue);
  if (def.type === "pipe") return defaultOf(def.in!);
  return undefined;
}

/** Each variable of config.ts with its default ("unset" when it has none). */
const DEFAULTS = Object.fromEntries(Object.entries(envSchema.shape).map(([name, rule]) => [name, defaultOf(rule as z.ZodType) ?? "unset"]));

describe("the configuration's documentation", () => {
  it("when the service reads a variable, then the operators' table names it with config.ts's default, and names nothing else", () => {
    const section = /\n### Every variable\n([\s\S]*?)\n## /.exec(read("docs/OPERATIONS.md"))![1]!;
    const rows = [...section.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| (?:`([^`]*)`|(unset)) \|/gm)].map((m) => [m[1], m[2] ?? m[3]]);
    expect(Object.fromEntries(rows)).toEqual(DEFAULTS);
  });

  it("when the service reads a variable, then .env.example sets it to its default, or shows it commented out when it has none", () => {
    const lines = [...read(".env.example").matchAll(/^(# )?([A-Z][A-Z0-9_]+)=(.*)$/gm)];
    const example = Object.fromEntries(lines.map((m) => [m[2], m[1] ? "unset" : m[3]]));
    // The example is a production .env: the one value it sets on purpose.
    expect(example).toEqual({ ...DEFAULTS, NODE_ENV: "production" });
  });
});
