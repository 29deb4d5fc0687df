import { parseArgs, type ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

/** Thrown for a usage mistake: exit code 2, with the message and the usage. */
export class UsageError extends Error {}

/** The options and positionals of a command; a usage mistake for anything unknown. */
export function parse<const O extends Options>(args: string[], options: O): Parsed<O> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Rows as a text table, columns padded to their widest cell. */
export function table(rows: Record<string, string>[]): string {
  if (rows.length === 0) return "No API users.\n";
  const headers = Object.keys(rows[0]!);
  const widths = headers.map((h) => Math.max(h.length, ...rows.map((r) => r[h]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return `${[line(headers), ...rows.map((r) => line(headers.map((h) => r[h]!)))].join("\n")}\n`;
}
