import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * What the suite leaves behind (helpers/run-scope.ts, helpers/process.ts): a run of its own, of a test that
 * leaves a temp folder and processes running, then fails, or is interrupted.
 */
const root = path.resolve(import.meta.dirname, "..");

interface LeakyRun {
  output: string;
  left: { folder: string; pids: number[] };
}

function runLeaky(interrupt: boolean): Promise<LeakyRun> {
  const child = spawn(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--config", "test/fixtures/leaky.vitest.config.ts"], {
    cwd: root,
    env: { ...process.env, LEAKY_HANG: interrupt ? "1" : "", FORCE_COLOR: "0" },
    // Its own group, as a terminal's foreground job is: Ctrl-C reaches vitest and its workers, not the groups tests made.
    detached: true,
  });
  let output = "";
  let interrupted = false;
  const collect = (d: Buffer) => {
    output += d.toString();
    if (interrupt && !interrupted && /LEFT \{.*\}/.test(output)) {
      interrupted = true;
      process.kill(-child.pid!, "SIGINT");
    }
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", () => {
      const left = /LEFT (\{.*\})/.exec(output);
      if (!left) reject(new Error(`the fixture said nothing:\n${output}`));
      else resolve({ output, left: JSON.parse(left[1]!) as LeakyRun["left"] });
    });
  });
}

/** Running: not gone, and not a zombie (killed, waiting for its parent to be told). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
};

function expectNothingLeft({ output, left }: LeakyRun): void {
  expect(left.pids.filter(alive), output).toEqual([]);
  expect(existsSync(left.folder), output).toBe(false);
  expect(output).toMatch(/Test teardown: killed \d+ process\(es\) the tests left running/);
}

describe("what a run leaves behind", () => {
  it("when a test fails with processes and a temp folder left, then the run ends with none of them, and says which it killed", async () => {
    const run = await runLeaky(false);
    expect(run.output).toMatch(/1 failed/);
    expectNothingLeft(run);
  }, 120_000);

  it("when the run is interrupted (SIGINT) mid-test, then nothing it started is left running, nor its temp folder", async () => {
    expectNothingLeft(await runLeaky(true));
  }, 120_000);
});
