import { randomBytes } from "node:crypto";
import { constants, createReadStream } from "node:fs";
import { type FileHandle, lstat, open, rename, unlink } from "node:fs/promises";
import path from "node:path";

/**
 * The files the CLI reads and writes for the operator (exports, backups, imports, restores), which hold
 * every key hash, token, address and webhook secret: written as the caller's alone, whatever was at the
 * path before, and read without blocking on what is not a plain file (docs/SECURITY.md, "Backups, exports and the files the CLI uses").
 */

/** A path the CLI will not use: what is there, and that nothing was read or written. */
export class FileRefused extends Error {}

/** The standard input, which `import` and `restore` read when named (a pipe, not a file). */
const STDIN = "/dev/stdin";

async function refuseUnlessOwnFile(file: string): Promise<void> {
  const stat = await lstat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!stat) return;
  const what = stat.isSymbolicLink() ? "a symbolic link" : stat.isFIFO() ? "a named pipe" : !stat.isFile() ? "not a regular file" : undefined;
  if (what) throw new FileRefused(`refused: ${file} is ${what}; nothing was written (name a new file, or remove it)`);
  const me = process.getuid?.();
  if (me !== undefined && stat.uid !== me) {
    throw new FileRefused(`refused: ${file} belongs to another user (uid ${stat.uid}); nothing was written (name a new file, or remove it)`);
  }
}

export interface OwnedWriter {
  write(piece: Uint8Array): Promise<void>;
  /** Flushes to disk and puts the file in place: until then the target is as it was. */
  finish(): Promise<void>;
  /** Removes what was written. */
  abort(): Promise<void>;
}

/**
 * A new file, mode 0600, created exclusively beside `file` (no link followed), renamed over it once
 * whole and on disk. Refused when `file` is there and is not a regular file of the caller's.
 */
export async function ownerOnlyWriter(file: string): Promise<OwnedWriter> {
  await refuseUnlessOwnFile(file);
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.partial`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  let handle: FileHandle | undefined = await open(temporary, flags, 0o600);
  const close = async () => {
    const h = handle;
    handle = undefined;
    await h?.close();
  };
  return {
    async write(piece) {
      await handle!.write(piece);
    },
    async finish() {
      await handle!.sync();
      await close();
      try {
        await refuseUnlessOwnFile(file);
        await rename(temporary, file);
      } catch (error) {
        await unlink(temporary).catch(() => undefined);
        throw error;
      }
    },
    async abort() {
      await close().catch(() => undefined);
      await unlink(temporary).catch(() => undefined);
    },
  };
}

/** Writes the pieces as they come to `file`, as ownerOnlyWriter does; nothing is left behind on failure. */
export async function writeOwnerOnly(file: string, pieces: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): Promise<void> {
  const writer = await ownerOnlyWriter(file);
  try {
    for await (const piece of pieces) await writer.write(typeof piece === "string" ? Buffer.from(piece) : piece);
    await writer.finish();
  } catch (error) {
    await writer.abort();
    throw error;
  }
}

/**
 * The file's bytes in pieces. Opened without blocking (a named pipe nobody writes does not hold the
 * command), and refused unless it is a regular file, or the standard input named as /dev/stdin.
 */
export async function* readRegularFile(file: string, highWaterMark?: number): AsyncGenerator<Buffer> {
  if (file === STDIN) {
    yield* createReadStream(file, { highWaterMark });
    return;
  }
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile()) throw new FileRefused(`refused: ${file} is not a regular file; nothing was read`);
  } catch (error) {
    await handle.close();
    throw error;
  }
  yield* handle.createReadStream({ highWaterMark });
}

/**
 * The file system's refusal (here, or where the CLI runs when the server runs the command, in that
 * process's words): the message to print after "Cannot write <file>: ", or undefined for any other failure.
 */
export function fileFailure(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  return /^E[A-Z]+: .*, (open|write|rename|fsync) '|^refused: /.test(message) ? message : undefined;
}
