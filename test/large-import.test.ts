import { once } from "node:events";
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onPostgres } from "./helpers/database.js";
import { type ServiceProcess, spawnOwned, spawnService } from "./helpers/process.js";

/**
 * An import several times the server's heap, run by the CLI beside the running
 * server (embedded database): the file crosses the control channel in pieces
 * and is staged in the database record by record, so the server, capped at
 * HEAP_MB, imports it and goes on answering.
 */
const root = path.resolve(import.meta.dirname, "..");
const HEAP_MB = 64;
const FILE_MB = 200;
let dir: string;
let service: ServiceProcess;
let url: string;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "large-import-"));
  service = spawnService({ DATA_DIR: path.join(dir, "data"), DATABASE_URL: "", DATABASE_READ_URL: "" }, { nodeOptions: [`--max-old-space-size=${HEAP_MB}`] });
  url = `http://127.0.0.1:${await service.port()}`;
  key = /\b(gsk_[A-Za-z0-9_-]{43})\b/.exec(service.output())![1]!;
}, 60_000);
afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const player = {
  id: 1,
  pseudo: "Writer",
  token: "tok-1",
  credit: 0,
  gradeId: 1,
  modStatus: false,
  staff: false,
  alert: true,
  nickname: null,
  firstConnection: "2025-06-01T12:00:00Z",
  totalTimeConnection: 1,
  status: "Offline",
  ip: "203.0.113.7",
  chatId: null,
  language: "FR",
  streamerPoint: 0,
  tag: null,
  color: null,
  highclub: false,
  vote: 0,
};

/** A file of about FILE_MB: one player and as many form answers (about 12 KB each) as it takes; written as it is made. */
async function writeLargeFile(file: string): Promise<number> {
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, "drain");
  };
  await write(`{"players":[${JSON.stringify(player)}],"formAnswers":[`);
  const answer = (n: number, q: number) => `${n}:${q} `.padEnd(2000, "abcdefghij");
  let count = 0;
  for (let bytes = 0; bytes < FILE_MB * 1024 * 1024; count++) {
    const record = JSON.stringify({
      id: count + 1,
      playerId: 1,
      video: `https://video.example/${count}`,
      question1: answer(count, 1),
      question2: answer(count, 2),
      question3: answer(count, 3),
      question4: answer(count, 4),
      question5: answer(count, 5),
      stage1: null,
      stage2: null,
      stage3: null,
      comment: answer(count, 6),
    });
    await write(`${count ? "," : ""}\n${record}`);
    bytes += record.length + 2;
  }
  await write("]}\n");
  out.end();
  await once(out, "finish");
  return count;
}

describe.runIf(!onPostgres)("an import several times the server's heap, beside the running server", () => {
  it(`when a ${FILE_MB} MB file is imported into a server capped at ${HEAP_MB} MB of heap, then it is imported whole and the server goes on answering`, async () => {
    const file = path.join(dir, "large.json");
    const count = await writeLargeFile(file);
    expect(statSync(file).size).toBeGreaterThan(3 * HEAP_MB * 1024 * 1024);

    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: path.join(dir, "data") };
    delete env.DATABASE_URL;
    const cli = spawnOwned(process.execPath, ["--import", "tsx", path.join(root, "src/cli/main.ts"), "import", file], { cwd: root, env, stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    cli.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    cli.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => cli.on("exit", resolve));
    // While it runs, the server answers what needs no database (the import holds PGlite's one connection).
    let done = false;
    void exited.then(() => (done = true));
    const answers: number[] = [];
    while (!done)
      answers.push(
        await request(url)
          .get("/livez")
          .then(
            (r) => r.status,
            () => 0,
          ),
      );

    expect(await exited, `${stderr}\n${service.output().slice(-3000)}`).toBe(0);
    expect(stdout).toBe(`Imported 1 players, ${count} formAnswers.\n`);
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((s) => s !== 200)).toEqual([]);
    expect(service.child.exitCode).toBeNull();
    const players = await request(url).get("/api/player/get-all-players").set("X-API-Key", key);
    expect(players.status).toBe(200);
    expect(players.body).toEqual(expect.arrayContaining([expect.objectContaining({ id: 1, pseudo: "Writer" })]));
  }, 600_000);
});
