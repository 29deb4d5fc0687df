import { type ParseArgsConfig, parseArgs } from "node:util";

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

const COMMANDS = new Set(["help", "migrate", "user", "webhook", "audit", "import", "export", "seed", "backup", "restore", "counts", "freeze", "thaw"]);
const SUBCOMMANDS = new Set(["create", "list", "revoke", "rotate", "allow-ip", "add", "remove", "deliveries", "redeliver"]);

/**
 * The command's name for a log line or a lock file: its known words only, never an argument (a key
 * given where a file was expected, a path). Anything else is `other`.
 */
export function commandName(argv: readonly string[]): string {
  const [command, sub] = argv;
  if (command === undefined || !COMMANDS.has(command)) return "other";
  return sub !== undefined && (command === "user" || command === "webhook") && SUBCOMMANDS.has(sub) ? `${command} ${sub}` : command;
}

/**
 * What a terminal would act on rather than show: C0 controls (ESC starts colour, screen-clearing and
 * window-title sequences), DEL, C1 controls (U+009B is a one-character CSI), the line and paragraph
 * separators, and the bidirectional marks, embeddings, overrides and isolates (they reorder what follows).
 */
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** Those of them JSON.stringify writes as they are. */
const JSON_UNESCAPED_CONTROLS = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** Text from the database (a receiver's answer, a form's text) made safe to print: controls written as \xNN or \uNNNN. */
export function printable(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * JSON for the terminal: JSON.stringify already escapes C0 controls; the others above are escaped too
 * (\uNNNN, the same JSON value for a program reading it).
 */
export function terminalJson(value: unknown, indent?: number): string {
  // Past C0: the line breaks of the indentation are JSON's own, and those in strings are escaped already.
  return JSON.stringify(value, null, indent).replace(JSON_UNESCAPED_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Rows as a text table, columns padded to their widest cell; every cell printable. */
export function table(rows: Record<string, string>[]): string {
  if (rows.length === 0) return "No API users.\n";
  const headers = Object.keys(rows[0]!);
  const cells = rows.map((r) => headers.map((h) => printable(r[h]!)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return `${[line(headers), ...cells.map(line)].join("\n")}\n`;
}
