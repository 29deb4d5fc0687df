import { type ChildProcess, type ChildProcessWithoutNullStreams, type SpawnOptionsWithoutStdio, spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { TEST_SERVER_ENV } from "./server-env.js";

const running = new Set<ChildProcess>();
// A test that fails or times out before it stops its server must not leave it running (holding connections
// to a database being dropped, retrying): whatever is still alive when the test file's process ends is
// killed, with everything it started (its process group). What escapes this (a worker killed outright, an
// interrupted run) is killed by the run's teardown (run-scope.ts).
process.once("exit", () => {
  for (const child of running) killGroup(child);
});

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

/** spawn, in a process group of its own, killed with the group when this test process exits if it is still running then. */
export function spawnOwned(command: string, args: readonly string[], options: SpawnOptionsWithoutStdio = {}): ChildProcessWithoutNullStreams {
  const child = spawn(command, args, { ...options, detached: process.platform !== "win32" });
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}

const root = path.resolve(import.meta.dirname, "../..");

export interface Output {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What a process printed, and its exit code, once it has ended and its output is closed. */
export function outputOf(child: ChildProcessWithoutNullStreams): Promise<Output> {
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** The real CLI entry point in a process of its own, as `npm run cli` runs it (through tsx: the same code), with this environment. */
export function cliProcess(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Output> {
  return outputOf(spawnOwned(process.execPath, ["--import", "tsx", path.join(root, "src/cli/main.ts"), ...args], { cwd: root, env, stdio: "pipe" }));
}

/** The real entry point in a process of its own, as `npm start` runs it (through tsx instead of dist/: the same code). */
export interface ServiceProcess {
  child: ChildProcess;
  /** Everything it wrote, stdout and stderr. */
  output: () => string;
  /** Its JSON log lines so far. */
  lines: () => Record<string, unknown>[];
  /** Its exit code, once it exits. */
  exited: Promise<number | null>;
  /** Resolves when `test()` holds; throws if the process exits first or `ms` pass. */
  waitFor: (what: string, test: () => boolean, ms?: number) => Promise<void>;
  /** The port of the first "listening on" line, once there is one. */
  port: () => Promise<number>;
  /** SIGTERM, and its exit code. */
  stop: () => Promise<number | null>;
}

/**
 * Starts `src/main.ts` on 127.0.0.1, on a free port, with metrics off and the
 * test app's defaults (TEST_SERVER_ENV) unless `env` says otherwise.
 */
export function spawnService(env: Record<string, string>, options: { nodeOptions?: string[]; umask?: string } = {}): ServiceProcess {
  const node = [process.execPath, ...(options.nodeOptions ?? []), "--import", "tsx", path.join(root, "src/main.ts")];
  // Under a umask of its own: the shell sets it and becomes the server (exec), so the process is the same.
  const [command, ...args] = options.umask ? ["/bin/sh", "-c", `umask ${options.umask} && exec "$@"`, "sh", ...node] : node;
  const child = spawnOwned(command!, args, {
    cwd: root,
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      METRICS_PORT: "off",
      LOG_LEVEL: "info",
      ...TEST_SERVER_ENV,
      ...env,
    },
    stdio: "pipe",
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const lines = () =>
    output
      .split("\n")
      .filter((l) => l.startsWith("{") && l.endsWith("}"))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return []; // A line still arriving.
        }
      });
  const waitFor = async (what: string, test: () => boolean, ms = 60_000) => {
    const until = Date.now() + ms;
    while (!test()) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`exited (${child.exitCode ?? child.signalCode}) before ${what}:\n${output}`);
      }
      if (Date.now() > until) throw new Error(`no ${what} after ${ms} ms:\n${output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)\/api/;
  return {
    child,
    output: () => output,
    lines,
    exited,
    waitFor,
    async port() {
      await waitFor("listening line", () => listening.test(output));
      return Number(listening.exec(output)![1]);
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** A TCP port free on 127.0.0.1 now, for a tool a test starts (nginx, PgBouncer). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}
