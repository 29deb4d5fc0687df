import path from "node:path";
import type { Socket } from "node:net";

/**
 * The control channel lets the command line run beside a server that holds
 * the embedded database (PGlite admits one process): the CLI sends its
 * arguments over a Unix socket in DATA_DIR, the server runs the same command
 * on its open database and sends back what it writes and its exit code.
 *
 * Only the owner of DATA_DIR gets in: the socket (mode 0600) sits in a folder
 * only the owner may enter (0700), beside a token file (0600) the server
 * writes anew at each start; the CLI proves it could read it by sending it
 * first. There is no network side.
 *
 * Messages are JSON objects, one a line.
 */
export function controlPaths(dataDir: string): { dir: string; socket: string; token: string } {
  const dir = path.join(dataDir, "control");
  return { dir, socket: path.join(dir, "cli.sock"), token: path.join(dir, "token") };
}

/** The longest path a Unix socket may have (sun_path, Linux: 108 bytes with its terminating zero). */
export const MAX_SOCKET_PATH_BYTES = 107;

/** The CLI's first message. */
export interface CommandRequest {
  token: string;
  argv: string[];
}

/** What the server sends while the command runs; `read` and `write` ask the CLI for its own files. */
export type ServerMessage =
  | { type: "stdout" | "stderr"; text: string }
  | { type: "read"; id: number; file: string }
  | { type: "write"; id: number; file: string; text: string }
  | { type: "exit"; code: number };

/** The CLI's answer to a `read` or `write`. */
export type FileAnswer = { id: number; text?: string; error?: string };

export function send(socket: Socket, message: CommandRequest | ServerMessage | FileAnswer): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
}

/** Calls `handle` with each message the socket receives. */
export function onMessages(socket: Socket, handle: (message: unknown) => void): void {
  // A message may be large (a file being imported): the parts of the line so far are kept
  // apart and joined once its end arrives, so that each chunk is searched only once.
  let parts: string[] = [];
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    let start = 0;
    let end: number;
    while ((end = chunk.indexOf("\n", start)) >= 0) {
      parts.push(chunk.slice(start, end));
      start = end + 1;
      const line = parts.join("");
      parts = [];
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        socket.destroy(new Error("the control channel received a line that is not JSON"));
        return;
      }
      handle(message);
    }
    if (start < chunk.length) parts.push(chunk.slice(start));
  });
}
