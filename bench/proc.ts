/**
 * What Linux tells of a process, of the machine and of PostgreSQL's backends, for the benchmarks: CPU
 * time and RSS (/proc), the load average, and the CPU of the backends serving one server.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import pg from "pg";

const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

export function rssMb(pid: number, field: "VmHWM" | "VmRSS" = "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
}

/** CPU time of the process so far, user + system, in µs (fields 14 and 15 of /proc/PID/stat, after the command name). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

/** The same in seconds. */
export const cpuSeconds = (pid: number) => cpuMicros(pid) / 1e6;

/** The whole machine's busy CPU seconds (every core; /proc/stat: all but idle and iowait). */
export const machineCpuSeconds = () => {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (fields.reduce((a, b) => a + b, 0) - fields[3]! - fields[4]!) / CLOCK_TICKS;
};

/**
 * The CPU so far of each PostgreSQL backend serving one server (its pool's
 * connections carry the server's id as application_name), by pid: PostgreSQL
 * runs on the same cores, so what a server makes it do is part of its cost.
 */
export async function backendCpu(serverUrl: string, appName: string): Promise<Map<number, number>> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [appName]);
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, cpuMicros(pid));
      } catch {
        // ended meanwhile
      }
    }
    return cpu;
  } finally {
    await c.end();
  }
}

/** What the backends spent between two readings; one opened meanwhile counts from its start. */
export const backendCpuSpent = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, cpu]) => sum + cpu - (before.get(pid) ?? 0), 0);
