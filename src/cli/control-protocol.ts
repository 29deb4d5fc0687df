import type { Socket } from "node:net";
import path from "node:path";

/**
 * The control channel: the CLI runs beside a server that holds the embedded database (PGlite admits one
 * process) by sending its arguments over a Unix socket in DATA_DIR; the server runs the command on its
 * open database and sends back its output and exit code. Only the owner of DATA_DIR gets in: socket 0600
 * in a folder 0700, and a token file (0600) written at each start that the CLI sends first
 * (docs/SECURITY.md, "The CLI beside an embedded server"). Messages are JSON lines of at most
 * MAX_MESSAGE_CHARS; files travel one piece at a time (`read`, `write`), bytes in base64.
 */
export function controlPaths(dataDir: string): { dir: string; socket: string; token: string } {
  const dir = path.join(dataDir, "control");
  return { dir, socket: path.join(dir, "cli.sock"), token: path.join(dir, "token") };
}

/** The longest path a Unix socket may have (sun_path, Linux: 108 bytes with its terminating zero). */
export const MAX_SOCKET_PATH_BYTES = 107;

/** The longest message either side sends or accepts, in characters of its JSON line. */
export const MAX_MESSAGE_CHARS = 1024 * 1024;
/**
 * How long the server waits for the CLI's answer about a piece of its file (a CLI suspended with Ctrl-Z, a
 * stuck disk): past it the command fails and its transaction rolls back, so that the embedded database's one
 * connection is not held by a file.
 */
export const FILE_ANSWER_TIMEOUT_MS = 10_000;
/** A file travels in pieces of this many bytes (a third more in base64). */
export const PIECE_BYTES = 192 * 1024;
/** Output travels in pieces of this many characters (at most six times as many once JSON escapes them). */
const TEXT_PIECE_CHARS = 64 * 1024;

/** The CLI's first message. */
export interface CommandRequest {
  token: string;
  argv: string[];
}

/**
 * What the server sends while the command runs. `read`: the next piece of the file
 * (the first opens it); `write`: a piece of the file (the first creates it, `end` closes it).
 * `stream` tells apart the files of one command.
 */
export type ServerMessage =
  | { type: "stdout" | "stderr"; text: string }
  | { type: "read"; id: number; stream: number; file: string }
  | { type: "write"; id: number; stream: number; file: string; data: string; end: boolean }
  | { type: "exit"; code: number };

/** The CLI's answer to a `read` (`data` in base64, or `end` once the file is read) or a `write`. */
export type FileAnswer = { id: number; data?: string; end?: boolean; error?: string };

export function send(socket: Socket, message: CommandRequest | ServerMessage | FileAnswer): void {
  if (socket.destroyed) return;
  if ((message as ServerMessage).type === "stdout" || (message as ServerMessage).type === "stderr") {
    const { type, text } = message as { type: "stdout" | "stderr"; text: string };
    for (let at = 0; at < text.length; at += TEXT_PIECE_CHARS) {
      socket.write(`${JSON.stringify({ type, text: text.slice(at, at + TEXT_PIECE_CHARS) })}\n`);
    }
    return;
  }
  socket.write(`${JSON.stringify(message)}\n`);
}

/** Calls `handle` with each message the socket receives; `tooLong` once one is over MAX_MESSAGE_CHARS (then no more). */
export function onMessages(socket: Socket, handle: (message: unknown) => void, tooLong: () => void): void {
  // The parts of the line so far are kept apart and joined once its end arrives, so that each chunk is searched only once.
  let parts: string[] = [];
  let length = 0;
  let over = false;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    if (over) return;
    let start = 0;
    let end: number;
    while ((end = chunk.indexOf("\n", start)) >= 0) {
      length += end - start;
      if (length > MAX_MESSAGE_CHARS) break;
      parts.push(chunk.slice(start, end));
      start = end + 1;
      const line = parts.join("");
      parts = [];
      length = 0;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        socket.destroy(new Error("the control channel received a line that is not JSON"));
        return;
      }
      handle(message);
    }
    if (length <= MAX_MESSAGE_CHARS && end < 0) {
      length += chunk.length - start;
      if (start < chunk.length) parts.push(chunk.slice(start));
    }
    if (length > MAX_MESSAGE_CHARS) {
      over = true;
      parts = [];
      tooLong();
    }
  });
}

/** What either side says when the other sends a message over the limit. */
export const TOO_LONG = `The control channel refused a message over ${MAX_MESSAGE_CHARS} characters (its limit) and closed.\n`;
