import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import net, { type Socket } from "node:net";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import type { Database } from "../db/database.js";
import { commandName } from "./args.js";
import { runCli } from "./cli.js";
import {
  type CommandRequest,
  controlPaths,
  FILE_ANSWER_TIMEOUT_MS,
  type FileAnswer,
  MAX_SOCKET_PATH_BYTES,
  onMessages,
  PIECE_BYTES,
  send,
  TOO_LONG,
} from "./control-protocol.js";
import type { CliFiles } from "./transfer-command.js";

export interface ControlChannel {
  /** Stops accepting commands, waits for those running, and removes the socket and the token. */
  stop(): Promise<void>;
}

const isRequest = (m: unknown): m is CommandRequest =>
  typeof m === "object" &&
  m !== null &&
  typeof (m as CommandRequest).token === "string" &&
  Array.isArray((m as CommandRequest).argv) &&
  (m as CommandRequest).argv.every((a) => typeof a === "string");

/** A folder only this user may enter, in a DATA_DIR no other user can change, or an error saying why not. */
function ownerOnlyFolder(dataDir: string, dir: string): void {
  const me = process.getuid?.();
  const data = statSync(dataDir);
  // Whoever may write DATA_DIR may put a folder of their own in place of this one.
  if (me !== undefined && data.uid !== me && data.uid !== 0) throw new Error(`${dataDir} belongs to another user (uid ${data.uid})`);
  if ((data.mode & 0o022) !== 0) throw new Error(`${dataDir} can be written by other users (mode ${(data.mode & 0o777).toString(8)})`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} is not a folder`);
  if (me !== undefined && stat.uid !== me) throw new Error(`${dir} belongs to another user (uid ${stat.uid})`);
  chmodSync(dir, 0o700);
}

/**
 * Serves the command line on a Unix socket in DATA_DIR while this process holds
 * the embedded database (control-protocol.ts). Where no socket can be made (a
 * path too long, a file system without sockets), the server runs without it:
 * the CLI then says the database is in use, as it did before.
 */
export async function startControlChannel(
  config: Config,
  db: Database,
  logger: Logger,
  { fileAnswerTimeoutMs = FILE_ANSWER_TIMEOUT_MS }: { fileAnswerTimeoutMs?: number } = {},
): Promise<ControlChannel> {
  const paths = controlPaths(config.dataDir);
  const none: ControlChannel = { stop: () => Promise.resolve() };
  if (Buffer.byteLength(paths.socket) > MAX_SOCKET_PATH_BYTES) {
    logger.warn({ socket: paths.socket }, "no control channel for the CLI: the socket path is too long (a shorter DATA_DIR fixes it)");
    return none;
  }
  const token = randomBytes(32).toString("hex");
  try {
    ownerOnlyFolder(config.dataDir, paths.dir);
    // Ours to replace: this process holds the data folder's lock, so no other server uses them.
    rmSync(paths.socket, { force: true });
    rmSync(paths.token, { force: true });
    writeFileSync(paths.token, token, { mode: 0o600, flag: "wx" });
  } catch (error) {
    logger.warn({ err: error }, "no control channel for the CLI: DATA_DIR or its folder control/ cannot be made the owner's alone");
    return none;
  }

  const running = new Set<Promise<unknown>>();
  const sockets = new Set<Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined); // the CLI went away (Ctrl-C): its command still finishes
    let started = false;
    const pending = new Map<number, { resolve: (answer: FileAnswer) => void }>();
    socket.on("close", () => {
      for (const { resolve } of pending.values()) resolve({ id: 0, error: "the command line went away" });
    });
    let nextId = 1;
    let nextStream = 1;
    const ask = (message: { type: "read"; stream: number; file: string } | { type: "write"; stream: number; file: string; data: string; end: boolean }) =>
      new Promise<FileAnswer>((resolve) => {
        if (socket.destroyed) return resolve({ id: 0, error: "the command line went away" });
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          // Refused as a file is (its words reach the command's own message), and the CLI is cut off.
          resolve({
            id,
            error: `refused: the command line did not answer about its file within ${fileAnswerTimeoutMs / 1000} s (suspended, or a stuck disk?); nothing was written`,
          });
          socket.destroy();
        }, fileAnswerTimeoutMs);
        pending.set(id, {
          resolve: (answer) => {
            clearTimeout(timer);
            resolve(answer);
          },
        });
        send(socket, { ...message, id });
      });
    const answered = (answer: FileAnswer) => {
      if (answer.error !== undefined) throw new Error(answer.error);
      return answer;
    };
    const files: CliFiles = {
      async *read(file) {
        const stream = nextStream++;
        for (;;) {
          const piece = answered(await ask({ type: "read", stream, file }));
          if (piece.end) return;
          yield Buffer.from(piece.data ?? "", "base64");
        }
      },
      async write(file, pieces) {
        const stream = nextStream++;
        for await (const piece of pieces) {
          const bytes = typeof piece === "string" ? Buffer.from(piece) : piece;
          for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
            const data = Buffer.from(bytes.subarray(at, at + PIECE_BYTES)).toString("base64");
            answered(await ask({ type: "write", stream, file, data, end: false }));
          }
        }
        answered(await ask({ type: "write", stream, file, data: "", end: true }));
      },
    };
    onMessages(
      socket,
      (message) => {
        if (started) {
          const answer = message as FileAnswer;
          pending.get(answer.id)?.resolve(answer);
          pending.delete(answer.id);
          return;
        }
        started = true;
        if (!isRequest(message) || !sameToken(message.token, token)) {
          send(socket, { type: "stderr", text: "The control channel refused the command: its token does not match.\n" });
          send(socket, { type: "exit", code: 1 });
          socket.end();
          return;
        }
        logger.info({ command: commandName(message.argv) }, "CLI command through the control channel");
        const io = { stdout: (text: string) => send(socket, { type: "stdout", text }), stderr: (text: string) => send(socket, { type: "stderr", text }) };
        const run = runCli(message.argv, { config, db, logger, files }, io)
          .catch((error: unknown) => {
            io.stderr(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
            return 1;
          })
          .then((code) => {
            send(socket, { type: "exit", code });
            socket.end();
          });
        running.add(run);
        void run.finally(() => running.delete(run));
      },
      () => {
        // Too long a message: the command (if any) fails on its next file request; nothing else is harmed.
        send(socket, { type: "stderr", text: TOO_LONG });
        send(socket, { type: "exit", code: 1 });
        socket.end();
        for (const { resolve } of pending.values()) resolve({ id: 0, error: "the command line sent a message over the limit" });
        pending.clear();
      },
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(paths.socket, () => resolve());
    });
    chmodSync(paths.socket, 0o600);
  } catch (error) {
    server.close();
    rmSync(paths.token, { force: true });
    logger.warn({ err: error, socket: paths.socket }, "no control channel for the CLI: cannot listen on its socket");
    return none;
  }
  return {
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Commands already running finish on the open database; idle connections go now.
      await Promise.allSettled([...running]);
      for (const socket of sockets) socket.destroy();
      await closed;
      rmSync(paths.token, { force: true });
      rmSync(paths.socket, { force: true });
    },
  };
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
