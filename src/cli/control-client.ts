import { lstatSync, type Stats, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import net from "node:net";
import { parse } from "./args.js";
import type { CliIo } from "./cli.js";
import { controlPaths, type FileAnswer, onMessages, PIECE_BYTES, type ServerMessage, send, TOO_LONG } from "./control-protocol.js";
import { type OwnedWriter, ownerOnlyWriter, readRegularFile } from "./owned-files.js";

/** The control channel in DATA_DIR is not to be trusted: another user could have made it. */
class UntrustedChannel extends Error {}

/**
 * The channel's folder, socket and token, if there are any: refused unless they
 * are this user's (or root's) and, for the folders, no one else may write them.
 * Otherwise a server run by another user could answer for ours, be handed our
 * files and have its output printed.
 */
function channelFound(dataDir: string, paths: ReturnType<typeof controlPaths>): boolean {
  const me = process.getuid?.();
  const refuse = (path: string, why: string): never => {
    throw new UntrustedChannel(
      `Refusing the control channel at ${path}: ${why}. The CLI talks only to a socket of its own user (or root's), ` +
        "in folders no one else can write; remove what is there, or run the CLI as the server's user.\n",
    );
  };
  const check = (path: string, stat: Stats, folder: boolean) => {
    if (me !== undefined && stat.uid !== me && stat.uid !== 0) refuse(path, `it belongs to another user (uid ${stat.uid})`);
    if (folder && (stat.mode & 0o022) !== 0) refuse(path, `other users can write it (mode ${(stat.mode & 0o777).toString(8)})`);
  };
  const found = (path: string, statOf: (p: string) => Stats) => {
    try {
      return statOf(path);
    } catch {
      return undefined;
    }
  };
  const control = found(paths.dir, lstatSync);
  if (!control) return false;
  check(dataDir, statSync(dataDir), true);
  if (!control.isDirectory()) refuse(paths.dir, "it is not a folder (a symbolic link?)");
  check(paths.dir, control, true);
  const socket = found(paths.socket, lstatSync);
  const token = found(paths.token, lstatSync);
  if (!socket || !token) return false;
  if (!socket.isSocket()) refuse(paths.socket, "it is not a socket");
  check(paths.socket, socket, false);
  if (!token.isFile()) refuse(paths.token, "it is not a file");
  check(paths.token, token, false);
  return true;
}

/** The files the command names: the only ones the server may ask for (import and restore read one, export and backup write one). */
function filesNamed(argv: string[]): { read?: string; write?: string } {
  const [command, ...rest] = argv;
  if (command !== "import" && command !== "export" && command !== "backup" && command !== "restore") return {};
  try {
    const [file, ...others] = parse(rest, command === "restore" ? { check: { type: "boolean" } } : {}).positionals;
    if (file === undefined || others.length > 0) return {};
    return command === "import" || command === "restore" ? { read: file } : { write: file };
  } catch {
    return {};
  }
}

/**
 * Runs the command in the server that holds the embedded database in
 * `dataDir` (control-protocol.ts), with its output written here as it comes.
 * Resolves to its exit code, or to undefined when no server listens there
 * (another CLI holds the database, or the server is still starting).
 */
export async function runThroughServer(dataDir: string, argv: string[], io: CliIo): Promise<number | undefined> {
  const paths = controlPaths(dataDir);
  let token: string;
  try {
    if (!channelFound(dataDir, paths)) return undefined;
    token = await readFile(paths.token, "utf8");
  } catch (error) {
    if (!(error instanceof UntrustedChannel)) return undefined;
    io.stderr(error.message);
    return 1;
  }
  const socket = net.connect(paths.socket);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
  } catch {
    socket.destroy();
    return undefined;
  }
  const named = filesNamed(argv);
  const readers = new Map<number, AsyncIterator<Buffer>>();
  const writers = new Map<number, Promise<OwnedWriter>>();
  // Files are the caller's: read and written here, relative to this process's working folder; only those the command names.
  const readPiece = async (m: Extract<ServerMessage, { type: "read" }>): Promise<FileAnswer> => {
    if (m.file !== named.read) throw new Error(`the server asked to read ${m.file}, which the command does not name`);
    let reader = readers.get(m.stream);
    if (!reader) readers.set(m.stream, (reader = readRegularFile(m.file, PIECE_BYTES)));
    const piece = await reader.next();
    if (piece.done) readers.delete(m.stream);
    return piece.done ? { id: m.id, end: true } : { id: m.id, data: piece.value.toString("base64") };
  };
  const writePiece = async (m: Extract<ServerMessage, { type: "write" }>): Promise<FileAnswer> => {
    if (m.file !== named.write) throw new Error(`the server asked to write ${m.file}, which the command does not name`);
    let writer = writers.get(m.stream);
    if (!writer) writers.set(m.stream, (writer = ownerOnlyWriter(m.file)));
    const file = await writer;
    await file.write(Buffer.from(m.data, "base64"));
    if (m.end) {
      writers.delete(m.stream);
      await file.finish();
    }
    return { id: m.id };
  };
  return new Promise<number>((resolve) => {
    let code: number | undefined;
    const answer = (id: number, work: () => Promise<FileAnswer>) =>
      void work().then(
        (a) => send(socket, a),
        (e: Error) => send(socket, { id, error: e.message }),
      );
    onMessages(
      socket,
      (raw) => {
        const message = raw as ServerMessage;
        switch (message.type) {
          case "stdout":
            io.stdout(message.text);
            break;
          case "stderr":
            io.stderr(message.text);
            break;
          case "read":
            answer(message.id, () => readPiece(message));
            break;
          case "write":
            answer(message.id, () => writePiece(message));
            break;
          case "exit":
            code = message.code;
            break;
        }
      },
      () => {
        io.stderr(TOO_LONG);
        socket.destroy();
      },
    );
    socket.on("error", () => undefined);
    socket.on("close", () => {
      // A file the command did not finish is not left behind (nor put in place of the one there).
      for (const writer of writers.values())
        void writer.then(
          (w) => w.abort(),
          () => undefined,
        );
      for (const reader of readers.values()) void reader.return?.();
      if (code === undefined) io.stderr("The server closed the control channel before the command finished (it may have stopped): run it again.\n");
      resolve(code ?? 1);
    });
    send(socket, { token, argv });
  });
}
