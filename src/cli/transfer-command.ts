import type { AuditSource } from "../audit/audit.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { exportText } from "../transfer/export.js";
import { importStream } from "../transfer/transfer.js";
import { parse, printable, UsageError } from "./args.js";
import { fileFailure, readRegularFile, writeOwnerOnly } from "./owned-files.js";

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** The files a command reads and writes: the caller's own, even when the server runs the command (control-channel.ts). */
export interface CliFiles {
  /** The file's bytes in pieces as they are read, never whole. */
  read(file: string): AsyncIterable<Uint8Array>;
  /** Writes the pieces as they come, to a file created owner-only (an export holds players' tokens and addresses). */
  write(file: string, pieces: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): Promise<void>;
}

export const localFiles: CliFiles = {
  // Opened once read (a stream opened sooner reports a missing file to no one).
  read: (file) => readRegularFile(file),
  write: writeOwnerOnly,
};

/** The file could not be read (missing, a folder, no permission): not the import's refusal. */
class ReadError extends Error {}

async function* reading(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* pieces;
  } catch (error) {
    throw new ReadError((error as Error).message);
  }
}

/** `import <file>`: read in pieces as it comes (transfer.ts), all or nothing. */
export async function importCommand(args: string[], prisma: PrismaClient, files: CliFiles, by: AuditSource, io: Io): Promise<number> {
  const { positionals } = parse(args, {});
  if (positionals.length !== 1) throw new UsageError("import takes one file");
  const file = positionals[0]!;
  let summary: Record<string, number>;
  try {
    summary = await importStream(prisma, reading(files.read(file)), by);
  } catch (error) {
    if (!(error instanceof ReadError)) throw error;
    io.stderr(`Cannot read ${printable(file)} as JSON: ${printable(error.message)}\n`);
    return 1;
  }
  const counts = Object.entries(summary).map(([k, n]) => `${n} ${k}`);
  io.stdout(`Imported ${counts.length ? counts.join(", ") : "nothing (no records in the file)"}.\n`);
  return 0;
}

/** `export [file]`: every record, to the file or to stdout. */
export async function exportCommand(args: string[], prisma: PrismaClient, files: CliFiles, io: Io): Promise<number> {
  const { positionals } = parse(args, {});
  if (positionals.length > 1) throw new UsageError("export takes at most one file");
  if (positionals[0]) {
    try {
      await files.write(positionals[0], exportText(prisma));
    } catch (error) {
      const failure = fileFailure(error);
      if (failure === undefined) throw error;
      io.stderr(`Cannot write ${printable(positionals[0])}: ${printable(failure)}\n`);
      return 1;
    }
    io.stderr(`Exported to ${printable(positionals[0])}\n`);
  } else for await (const piece of exportText(prisma)) io.stdout(piece);
  return 0;
}
