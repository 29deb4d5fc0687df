import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * vitest globalSetup, first of all: this run's own temporary folder, made the
 * TMPDIR of everything the run starts (workers, their servers, commands), so
 * that whatever a test leaves there goes with the folder. When the run ends —
 * finished, failed, or interrupted (Ctrl-C: vitest then exits without any
 * teardown, hence the "exit" handler; SIGTERM and SIGHUP too) — every process still running with
 * that TMPDIR but vitest's own workers is killed and named, and the folder is
 * removed. A run killed outright (SIGKILL) cannot clean up: the next run
 * removes the folders of runs whose process is gone.
 */
const PREFIX = "vitest-run-";

export default function setup(): () => void {
  const base = tmpdir();
  removeAbandonedRuns(base);
  const dir = mkdtempSync(path.join(base, PREFIX));
  // Others may pass through (not list): a tool a test runs as another user (PgBouncer, as postgres) reaches its own folder here.
  chmodSync(dir, 0o711);
  writeFileSync(path.join(dir, "owner.pid"), String(process.pid));
  process.env.TMPDIR = dir;
  let done = false;
  const end = () => {
    if (done) return;
    done = true;
    const killed = killLeftovers(`TMPDIR=${dir}`);
    if (killed.length > 0) {
      process.stderr.write(`\nTest teardown: killed ${killed.length} process(es) the tests left running:\n${killed.map((p) => `  ${p}`).join("\n")}\n`);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", end);
  // Killed (SIGTERM by a CI's timeout, SIGHUP with its terminal): Node would exit without "exit" handlers.
  for (const signal of ["SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      end();
      process.exit(128 + (signal === "SIGTERM" ? 15 : 1));
    });
  }
  return end;
}

/**
 * Kills (SIGKILL) every process whose environment holds `marker` (or a folder under it: a run started by a
 * test), but this one and its direct children (vitest's workers). Linux (/proc) only.
 */
function killLeftovers(marker: string): string[] {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return [];
  }
  const killed: string[] = [];
  const killedPids: number[] = [];
  for (const pid of pids) {
    try {
      const environment = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
      if (!environment.some((v) => v === marker || v.startsWith(`${marker}/`))) continue;
      if (Number(statOf(pid)[1]) === process.pid) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim();
      process.kill(Number(pid), "SIGKILL");
      killed.push(`${pid} ${command.slice(0, 160)}`);
      killedPids.push(Number(pid));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  awaitDeaths(killedPids);
  return killed;
}

/**
 * A kill is carried out by its target, when the kernel next runs it: on a busy machine, that is a while after
 * `kill` returns (seen in CI: still running when the run had ended). So the run ends only once every process
 * it killed is gone or a zombie (dead, its parent not yet told), or after 10 s. Synchronous: this runs in an
 * "exit" handler.
 */
function awaitDeaths(pids: number[]): void {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + 10_000;
  let running = pids.filter(isRunning);
  while (running.length > 0 && Date.now() < until) {
    Atomics.wait(nap, 0, 0, 10);
    running = running.filter(isRunning);
  }
  if (running.length > 0) process.stderr.write(`\nTest teardown: still running 10 s after being killed: ${running.join(", ")}\n`);
}

/** Not gone, and not a zombie. */
function isRunning(pid: number): boolean {
  try {
    return statOf(pid)[0] !== "Z";
  } catch {
    return false;
  }
}

/** A process's /proc stat fields from its state on (state, parent, …): after its name, which may hold spaces. */
function statOf(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

function removeAbandonedRuns(base: string): void {
  for (const name of readdirSync(base).filter((n) => n.startsWith(PREFIX))) {
    const dir = path.join(base, name);
    let owner: number;
    try {
      owner = Number(readFileSync(path.join(dir, "owner.pid"), "utf8"));
    } catch {
      continue; // Not written yet: a run starting now.
    }
    try {
      process.kill(owner, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") rmSync(dir, { recursive: true, force: true });
    }
  }
}
