import { createHash, createHmac, type Hash, timingSafeEqual } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";

/**
 * The backup file (docs/OPERATIONS.md, "Back up and restore"): gzip'd UTF-8
 * JSON lines.
 *
 *   {"format":"community-backup","version":1,"schema":"<last migration>","createdAt":"…","source":"embedded"}
 *   ["table","players"]                  a section: the rows of one table follow
 *   {"id":1,"pseudo":"Alice",…}          one row a line, as PostgreSQL's to_jsonb writes it
 *   ["end",{"players":1,…},"<sha256>","hmac-sha256:<hex>"]
 *                                        the rows of each table, the SHA-256 (hex) of every byte before this line,
 *                                        and with BACKUP_SIGNING_KEY its signature (signatureOf)
 *
 * A file is accepted only whole: the first line names this format and version
 * and the schema it was made under, the last one counts and seals the rest.
 */
export const BACKUP_FORMAT = "community-backup";
export const BACKUP_VERSION = 1;
/**
 * The longest line a backup may hold, decompressed: far above any row the service writes (a request body is
 * at most 100 KB, a stored answer or an event less), far below what would fill a process's memory.
 */
export const MAX_BACKUP_LINE_BYTES = 8 * 1024 * 1024;
/** The most a backup may decompress to: a gzip'd file that inflates past this is refused, not read on. */
export const MAX_BACKUP_BYTES = 64 * 1024 ** 3;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: number;
  /** The last migration applied to the database it was made from: a restore needs the same. */
  schema: string;
  createdAt: string;
  source: "embedded" | "postgres";
}

/** What is wrong with a backup file: it is refused whole, before anything is written. */
export class BackupFileError extends Error {}

export type BackupEntry =
  | { kind: "header"; header: BackupHeader }
  | { kind: "table"; table: string }
  | { kind: "row"; table: string; line: string; row: Record<string, unknown> }
  | { kind: "end"; counts: Record<string, number>; seal: string; signature: string | undefined };

/** The file's lines as written (each with its line break), hashed as they go, the trailer last; `counts` filled as they go. */
export async function* sealedLines(
  header: BackupHeader,
  sections: Iterable<{ table: string; lines: AsyncIterable<string> }>,
  counts: Record<string, number> = {},
  signingKey?: string,
): AsyncGenerator<string> {
  const hash = createHash("sha256");
  const line = (text: string) => {
    const out = `${text}\n`;
    hash.update(out);
    return out;
  };
  yield line(JSON.stringify(header));
  for (const { table, lines } of sections) {
    yield line(JSON.stringify(["table", table]));
    counts[table] = 0;
    for await (const row of lines) {
      counts[table]++;
      yield line(row);
    }
  }
  const seal = hash.digest("hex");
  yield `${JSON.stringify(["end", counts, seal, ...(signingKey ? [signatureOf(seal, signingKey)] : [])])}\n`;
}

/**
 * The end line's fourth value, with BACKUP_SIGNING_KEY: an HMAC-SHA256 of the seal under the key, which
 * only a holder of the key can make (the seal alone anyone can compute again after an edit).
 */
export function signatureOf(seal: string, key: string): string {
  return `hmac-sha256:${createHmac("sha256", key).update(seal).digest("hex")}`;
}

/** Whether `signature` is the one `key` makes for `seal`, compared in constant time. */
export function signedWith(seal: string, signature: string, key: string): boolean {
  const expected = Buffer.from(signatureOf(seal, key));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The lines gzip'd, in pieces as they come. */
export async function* gzipped(lines: AsyncIterable<string>): AsyncGenerator<Buffer> {
  const gzip = createGzip();
  const feeding = pipeline(Readable.from(lines), gzip);
  feeding.catch(() => undefined); // its error also ends the reading below
  for await (const piece of gzip) yield piece as Buffer;
  await feeding;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function parsed(text: string, at: number): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BackupFileError(`line ${at} is not JSON (${(error as Error).message}): the file was altered`);
  }
}

function checkHeader(value: unknown): BackupHeader {
  if (!isObject(value) || value.format !== BACKUP_FORMAT)
    throw new BackupFileError(`the file is not a backup of this service (its first line names no format '${BACKUP_FORMAT}')`);
  if (value.version !== BACKUP_VERSION) {
    throw new BackupFileError(
      `the file is in version ${String(value.version)} of the backup format; this version of the service reads version ${BACKUP_VERSION} only`,
    );
  }
  if (typeof value.schema !== "string" || typeof value.createdAt !== "string")
    throw new BackupFileError("the file's first line lacks its schema or date: the file was altered");
  // Printed by restore and kept by a drill's mark: only what the service writes there.
  const valid =
    /^(\d{14}_[a-z0-9_]{1,100}|none)$/.test(value.schema) &&
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/.test(value.createdAt) &&
    (value.source === "embedded" || value.source === "postgres");
  if (!valid) throw new BackupFileError(`the file's first line names a schema, date or source this service never writes: ${ALTERED}`);
  return value as unknown as BackupHeader;
}

/**
 * The entries of a backup file read in pieces, checked as they come: a file
 * that is not gzip, is cut short, was altered (its SHA-256 or its counts
 * disagree) or is of another version throws BackupFileError, at the latest
 * on its last line. A caller writes nothing it cannot undo before the end.
 */
export async function* readBackup(source: AsyncIterable<Uint8Array>): AsyncGenerator<BackupEntry> {
  const gunzip = createGunzip();
  const feeding = pipeline(Readable.from(source), gunzip).catch((error: unknown) => {
    gunzip.destroy(error as Error);
  });
  const hash: Hash = createHash("sha256");
  const counts = new Map<string, number>();
  let table: string | undefined;
  let at = 0;
  let ended = false;
  try {
    for await (const text of boundedLines(gunzip)) {
      at++;
      if (ended) throw new BackupFileError(`line ${at} follows the end line: the file was altered`);
      const value = parsed(text, at);
      if (at === 1) {
        yield { kind: "header", header: checkHeader(value) };
      } else if (isObject(value)) {
        if (table === undefined) throw new BackupFileError(`line ${at} is a row before any table: the file was altered`);
        counts.set(table, counts.get(table)! + 1);
        yield { kind: "row", table, line: text, row: value };
      } else if (Array.isArray(value) && value[0] === "table" && typeof value[1] === "string") {
        table = value[1];
        if (counts.has(table)) throw new BackupFileError(`the table ${table} appears twice: the file was altered`);
        counts.set(table, 0);
        yield { kind: "table", table };
      } else if (Array.isArray(value) && value[0] === "end" && isObject(value[1])) {
        if (value[2] !== hash.digest("hex")) throw new BackupFileError("its SHA-256 does not match its content: the file was altered or damaged");
        const written = value[1];
        for (const [name, n] of counts) {
          if (written[name] !== n) throw new BackupFileError(`it counts ${String(written[name])} rows of ${name} but holds ${n}: the file was altered`);
        }
        ended = true;
        yield { kind: "end", counts: Object.fromEntries(counts), seal: String(value[2]), signature: typeof value[3] === "string" ? value[3] : undefined };
        continue;
      } else {
        throw new BackupFileError(`line ${at} is neither a row nor a section: the file was altered`);
      }
      hash.update(`${text}\n`);
    }
  } catch (error) {
    if (error instanceof BackupFileError) throw error;
    throw new BackupFileError(readFailure(error as NodeJS.ErrnoException));
  } finally {
    gunzip.destroy();
    await feeding;
  }
  if (at === 0) throw new BackupFileError("the file is empty");
  if (!ended) throw new BackupFileError(`it ends after line ${at}, without its end line: the file is truncated`);
}

const ALTERED = "the file was altered or is not a backup";

/** The decompressed bytes split at each line break, each line at most MAX_BACKUP_LINE_BYTES, the whole at most MAX_BACKUP_BYTES. */
async function* boundedLines(input: AsyncIterable<Buffer>): AsyncGenerator<string> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let total = 0;
  let line = 0;
  const tooLong = () => new BackupFileError(`line ${line + 1} is longer than ${MAX_BACKUP_LINE_BYTES / 1024 / 1024} MiB: ${ALTERED}`);
  for await (const chunk of input) {
    total += chunk.length;
    if (total > MAX_BACKUP_BYTES) throw new BackupFileError(`it decompresses to more than ${MAX_BACKUP_BYTES / 1024 ** 3} GiB: ${ALTERED}`);
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      if (pendingBytes + nl - start > MAX_BACKUP_LINE_BYTES) throw tooLong();
      const piece = chunk.subarray(start, nl);
      yield (pending.length ? Buffer.concat([...pending, piece]) : piece).toString("utf8");
      line++;
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_BACKUP_LINE_BYTES) throw tooLong();
      pending.push(chunk.subarray(start));
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending).toString("utf8");
}

function readFailure(error: NodeJS.ErrnoException): string {
  if (error.code === "Z_BUF_ERROR") return "it ends in the middle of its compressed data: the file is truncated";
  if (error.code === "Z_DATA_ERROR") return `it is not a gzip file, or its compressed data is damaged (${error.message})`;
  return `it cannot be read: ${error.message}`;
}
