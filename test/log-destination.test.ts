import { spawn } from "node:child_process";
import { once } from "node:events";
import type { Socket } from "node:net";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it, onTestFinished } from "vitest";
import { createLogger, LOG_BUFFER_BYTES, logDestination } from "../src/core/logger.js";
import { spawnOwned } from "./helpers/process.js";

/**
 * A reader of a pipe that reads nothing until told to (SIGUSR2), then copies
 * what it reads to its stdout: the log destination's fd is the write end.
 */
function lazyReader() {
  const child = spawn(
    process.execPath,
    ["-e", "process.stdin.pause(); process.once('SIGUSR2', () => process.stdin.pipe(process.stdout)); setInterval(() => {}, 1e6);"],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const fd = (child.stdin as Socket & { _handle: { fd: number } })._handle.fd;
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  return { child, fd, read: () => out };
}

/** A child process running `lines` with `logger`, the service's logger on its stdout (a pipe). */
function logInChild(...lines: string[]) {
  const script = [
    `const { createLogger } = await import(${JSON.stringify(path.resolve(import.meta.dirname, "../src/core/logger.ts"))});`,
    "const logger = createLogger('info');",
    ...lines,
  ].join("\n");
  return spawnOwned(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]);
}

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
/** The heap's live size: after a full collection, so that what counts is what is held, not garbage not yet collected. */
const heldBytes = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

describe("log destination", () => {
  it("when stdout is a pipe nobody reads, then the logs hold at most LOG_BUFFER_BYTES in memory, and once read, a warning counts the lines dropped", async () => {
    const reader = lazyReader();
    const destination = logDestination(reader.fd);
    onTestFinished(() => {
      // Emptied while its reader reads: nothing is left for its next flush once the reader is gone.
      destination.flushSync();
      reader.child.kill();
    });
    const logger = createLogger("info", destination);
    const line = { path: "/api/player/get-all-players", detail: "x".repeat(400) };
    const logged = 64 * 1_048_576;
    const lines = Math.ceil(logged / 500);
    const before = heldBytes();
    for (let i = 0; i < lines; i++) logger.info(line, "request");
    // 64 MB logged to a pipe that takes about 200 KB: the heap holds the bound, not the lines.
    expect(heldBytes() - before).toBeLessThan(3 * LOG_BUFFER_BYTES);

    reader.child.kill("SIGUSR2");
    await expect
      .poll(
        () => {
          logger.info("after");
          return reader.read().includes('"msg":"after"');
        },
        { timeout: 20_000, interval: 50 },
      )
      .toBe(true);
    const notices = reader
      .read()
      .split("\n")
      .filter((l) => l.includes("log lines dropped"))
      .map((l) => JSON.parse(l) as { level: number; droppedLines: number });
    expect(notices.length).toBeGreaterThan(0);
    for (const notice of notices) expect(notice.level).toBe(40);
    // Every line logged came through or was counted: the count is what the pipe and the buffer could not hold.
    expect(notices.reduce((sum, n) => sum + n.droppedLines, 0)).toBeGreaterThan(lines - (2 * LOG_BUFFER_BYTES) / 500);
  }, 30_000);

  it("when stdout is a pipe nobody reads, then a process that logged to it still exits (pino's flush at exit gives up on it)", async () => {
    const child = logInChild(
      "for (let i = 0; i < 20000; i++) logger.info({ detail: 'x'.repeat(400) }, 'request');",
      "setTimeout(() => process.exit(3), 1500);",
    );
    // Its stdout is a pipe this test never reads.
    child.stdout.pause();
    child.stderr.pipe(process.stderr);
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(3);
  }, 20_000);

  it("when an idle process logs its last lines and exits at once, then they are written, though held for a block", async () => {
    const child = logInChild(
      "logger.info('first');",
      // Idle for longer than a stuck pipe may hold lines at exit: an idle destination is not a stuck one.
      "setTimeout(() => { logger.info('stopping'); logger.info('stopped'); process.exit(0); }, 1500);",
    );
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    await once(child, "exit");
    expect(
      out
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).toEqual(["first", "stopping", "stopped"]);
  }, 20_000);
});
