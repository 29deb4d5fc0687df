import { readFile, writeFile } from "node:fs/promises";
import net from "node:net";
import type { CliIo } from "./cli.js";
import { controlPaths, onMessages, send, type FileAnswer, type ServerMessage } from "./control-protocol.js";

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
    token = await readFile(paths.token, "utf8");
  } catch {
    return undefined;
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
  return new Promise<number>((resolve) => {
    let code: number | undefined;
    const answer = (work: Promise<FileAnswer>) => void work.then((a) => send(socket, a));
    onMessages(socket, (raw) => {
      const message = raw as ServerMessage;
      switch (message.type) {
        case "stdout":
          io.stdout(message.text);
          break;
        case "stderr":
          io.stderr(message.text);
          break;
        // Files are the caller's: read and written here, relative to this process's working folder.
        case "read":
          answer(readFile(message.file, "utf8").then((text) => ({ id: message.id, text }), (e: Error) => ({ id: message.id, error: e.message })));
          break;
        case "write":
          answer(writeFile(message.file, message.text).then(() => ({ id: message.id }), (e: Error) => ({ id: message.id, error: e.message })));
          break;
        case "exit":
          code = message.code;
          break;
      }
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      if (code === undefined) io.stderr("The server closed the control channel before the command finished (it may have stopped): run it again.\n");
      resolve(code ?? 1);
    });
    send(socket, { token, argv });
  });
}
