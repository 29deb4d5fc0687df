import { spawn, spawnSync } from "node:child_process";
import path from "node:path";

/**
 * Containers for the operator's paths (the image, compose): podman as root with runc, which runs here where
 * no Docker engine does, with explicit limits (podman's defaults exceed what these machines allow). Tests that
 * need it run when podman is there and the process is root; REQUIRE_PODMAN=1 (CI) makes its absence a failure.
 */
export const root = path.resolve(import.meta.dirname, "../..");
export const PODMAN = process.env.PODMAN_PATH ?? "podman";
export const PODMAN_FLAGS = ["--runtime", "runc"];
export const LIMITS = ["--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"];

export const podmanAvailable = process.getuid?.() === 0 && spawnSync(PODMAN, ["--version"], { stdio: "ignore" }).status === 0;
if (!podmanAvailable && process.env.REQUIRE_PODMAN) throw new Error(`REQUIRE_PODMAN is set, and ${PODMAN} cannot run containers here (missing, or not root)`);

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** podman's own complaints that are not the container's (no systemd for health-check timers here). */
const PODMAN_NOISE = /^time="[^"]*" level=(error|warning) msg="(unable to get systemd connection|Removing timer for container)[^\n]*\n?/gm;

/** Longest a command may take (the stand-ins' first debootstrap and an uncached image build are the longest). */
const COMMAND_TIMEOUT_MS = 20 * 60_000;

/**
 * A command to its end: exit code and output (podman's systemd noise taken out of stderr). One still running
 * after `timeoutMs` is killed, and its run fails with what it printed: CI fails rather than hangs.
 */
export function run(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? root, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")} did not end within ${options.timeoutMs ?? COMMAND_TIMEOUT_MS} ms:\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? COMMAND_TIMEOUT_MS);
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    // A command that exits without reading its input (most do) closes the pipe first: EPIPE is no failure of its run.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr: stderr.replace(PODMAN_NOISE, "") });
    });
  });
}

export const podman = (...args: string[]) => run(PODMAN, [...PODMAN_FLAGS, ...args]);

/** Like podman(), but a non-zero exit is an error carrying what it printed. */
export async function podmanOk(...args: string[]): Promise<string> {
  const result = await podman(...args);
  if (result.code !== 0) throw new Error(`podman ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** The stand-ins for the official images (stand-ins.sh): built once, reused by later runs. */
export async function ensureStandIns(): Promise<void> {
  const result = await run(path.join(root, "test/containers/stand-ins.sh"), []);
  if (result.code !== 0) throw new Error(`stand-ins.sh exited ${result.code}:\n${result.stderr}`);
}

/** Polls `test` every 100 ms until it holds; throws with `what` after `ms`. */
export async function until(what: string, test: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`no ${what} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const imageSize = async (image: string) => Number((await podmanOk("image", "inspect", "--format", "{{.Size}}", image)).trim());
