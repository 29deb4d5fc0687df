import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runThroughServer } from "../src/cli/control-client.js";
import { controlPaths, FILE_ANSWER_TIMEOUT_MS, MAX_MESSAGE_CHARS } from "../src/cli/control-protocol.js";
import { onPostgres } from "./helpers/database.js";
import { cliProcess, type Output, type ServiceProcess, spawnOwned, spawnService } from "./helpers/process.js";

/**
 * The command line while the server runs on the embedded database (which
 * admits one process): the server runs each command for it through the
 * control channel in DATA_DIR. A real server process; the CLI as a real
 * process where its entry point matters, else its client in this process
 * (the same code path from the socket on).
 */
const root = path.resolve(import.meta.dirname, "..");
let dir: string;
let service: ServiceProcess;
let url: string;
let firstKey: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "cli-beside-"));
  service = spawnService({ DATA_DIR: dir, DATABASE_URL: "", DATABASE_READ_URL: "", WEBHOOKS_ALLOW_PRIVATE: "true" });
  url = `http://127.0.0.1:${await service.port()}`;
  firstKey = /\b(gsk_[A-Za-z0-9_-]{43})\b/.exec(service.output())![1]!;
}, 60_000);
afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The real CLI entry point in a process of its own, beside the server (on its DATA_DIR). */
function cliBeside(args: string[]): Promise<Output> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir, LOG_LEVEL: "info" };
  delete env.DATABASE_URL;
  return cliProcess(args, env);
}

/** The CLI's client of the control channel, in this process. */
async function cli(argv: string[]): Promise<{ code: number | undefined; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runThroughServer(dir, argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => probe.once("listening", resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Resolves once something accepts connections on localhost:port. */
async function waitForListener(port: number): Promise<void> {
  for (;;) {
    const connected = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "localhost", () => (socket.end(), resolve(true)));
      socket.on("error", () => resolve(false));
    });
    if (connected) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const players = (key: string) => request(url).get("/api/player/get-all-players").set("X-API-Key", key);

describe.runIf(!onPostgres)("the command line while the server holds the embedded database", () => {
  it("when the first-start banner's command is run as printed, then it prints a new key that works at once and the old one stops", async () => {
    const printed = /`npm run --silent cli -- ([^`]+)`/.exec(service.output())![1]!;
    expect(printed).toBe("user rotate user-A --grace 0");
    const r = await cliBeside(printed.split(" "));
    expect(r.stderr).toContain("Rotated the key of 'user-A': the previous key no longer works.");
    expect(r.code).toBe(0);
    const key = r.stdout.trim();
    expect(key).toMatch(/^gsk_[A-Za-z0-9_-]{43}$/);
    expect((await players(key)).status).toBe(200);
    expect((await players(firstKey)).status).toBe(401);
    firstKey = key;
  }, 30_000);

  it("when the channel is made, then its folder is the owner's alone, the socket and token too", () => {
    const paths = controlPaths(dir);
    expect(lstatSync(paths.dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(paths.socket).isSocket()).toBe(true);
    expect(lstatSync(paths.socket).mode & 0o777).toBe(0o600);
    expect(lstatSync(paths.token).mode & 0o777).toBe(0o600);
  });

  it("when a connection sends a wrong token, then the command is refused and nothing runs", async () => {
    const socket = net.connect(controlPaths(dir).socket);
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => (answer += d));
    socket.write(`${JSON.stringify({ token: "0".repeat(64), argv: ["user", "create", "intruder"] })}\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toContain("its token does not match");
    expect(answer).toContain('"code":1');
    expect((await cli(["user", "list"])).stdout).not.toContain("intruder");
  });

  it(
    `when the CLI stops answering about its file during a backup (suspended, a stuck disk), then within ${FILE_ANSWER_TIMEOUT_MS / 1000} s the server gives up, rolls back and serves`,
    async () => {
      const paths = controlPaths(dir);
      const socket = net.connect(paths.socket);
      let answer = "";
      socket.setEncoding("utf8");
      socket.on("data", (d: string) => (answer += d));
      socket.on("error", () => undefined);
      const closed = new Promise((resolve) => socket.on("close", resolve));
      const file = path.join(dir, "never-written.backup");
      socket.write(`${JSON.stringify({ token: readFileSync(paths.token, "utf8"), argv: ["backup", file] })}\n`);
      // The server sends the backup's first piece and waits for an answer that never comes, holding its one connection.
      while (!answer.includes('"type":"write"')) await new Promise((r) => setTimeout(r, 20));
      const read = players(firstKey).then((res) => res.status);
      await closed;
      expect(await read).toBe(200);
      expect((await cli(["user", "list"])).code).toBe(0);
      expect(() => lstatSync(file)).toThrow();
    },
    FILE_ANSWER_TIMEOUT_MS + 30_000,
  );

  it("when a connection sends a message over the limit, then it is refused with a message and the server goes on serving", async () => {
    const socket = net.connect(controlPaths(dir).socket);
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => (answer += d));
    socket.on("error", () => undefined); // the server may close while the rest is still being written
    socket.write("x".repeat(MAX_MESSAGE_CHARS + 1));
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toContain(`refused a message over ${MAX_MESSAGE_CHARS} characters`);
    expect(answer).toContain('"code":1');
    expect((await players(firstKey)).status).toBe(200);
    expect((await cli(["user", "list"])).code).toBe(0);
  });

  it("when a user is created, then its key is printed alone on stdout, as on a direct run, and works", async () => {
    const r = await cli(["user", "create", "user-B"]);
    expect(r).toMatchObject({ code: 0, stderr: "Created 'user-B' (groups B). The key above is shown only once.\n" });
    expect(r.stdout).toMatch(/^gsk_[A-Za-z0-9_-]{43}\n$/);
    expect((await players(r.stdout.trim())).status).toBe(200);
    const taken = await cli(["user", "create", "user-B"]);
    expect(taken).toMatchObject({ code: 1, stdout: "" });
    expect(taken.stderr).toContain("'user-B' is already used");
  });

  it("when a webhook is added, then its id and secret are printed and it is listed", async () => {
    const r = await cli(["webhook", "add", "http://127.0.0.1:9/hooks", "--events", "reward_log.created"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^1\nwhsec_\S+\n$/);
    expect(r.stderr).toContain("Added webhook 1 → http://127.0.0.1:9/hooks (reward_log.created)");
    expect((await cli(["webhook", "list"])).stdout).toMatch(/^1\s+http:\/\/127\.0\.0\.1:9\/hooks\s+reward_log\.created/m);
  });

  it("when the README's webhook recipe is followed beside a server with WEBHOOKS_ALLOW_PRIVATE=true, then its receiver prints the next write's event", async () => {
    const block = /<!-- run by test\/cli-beside-server\.test\.ts[^>]*-->\n```sh\n([\s\S]*?)```/.exec(readFileSync(path.join(root, "README.md"), "utf8"))![1]!;
    const [receiverLine, addLine] = block.trim().split("\n");
    const port = await freePort();
    const script = /^node -e '(.*)'$/.exec(receiverLine!)![1]!.replace(".listen(4000)", `.listen(${port})`);
    const receiver = spawnOwned(process.execPath, ["-e", script], { stdio: "pipe" });
    let received = "";
    receiver.stdout.on("data", (d: Buffer) => (received += d.toString()));
    try {
      await waitForListener(port);
      const args = /^npm run --silent cli -- (.*?)\s+#/.exec(addLine!)![1]!.replace("localhost:4000", `localhost:${port}`).split(" ");
      const added = await cli(args);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toMatch(/whsec_/);
      const write = await request(url).post("/api/inscription").set("X-API-Key", firstKey).send({ username: "recipe-reader" });
      expect(write.status).toBe(201);
      await expect.poll(() => received, { timeout: 20_000 }).toContain('"username":"recipe-reader"');
    } finally {
      receiver.kill();
    }
  }, 30_000);

  it("when a file is imported and exported, then the CLI's own files are read and written, and the data is served", async () => {
    const file = path.join(dir, "in.json");
    writeFileSync(file, JSON.stringify({ parkourMaps: [{ id: 61, name: "Beside run", enable: true, spawnLocation: "1,2,3", difficulty: "easy" }] }));
    const imported = await cliBeside(["import", file]);
    expect(imported).toMatchObject({ code: 0, stdout: "Imported 1 parkourMaps.\n" });
    const map = await request(url).get("/api/parkour/get-all-maps").set("X-API-Key", firstKey);
    expect(map.status, JSON.stringify(map.body)).toBe(200);
    expect(map.body).toEqual(expect.arrayContaining([expect.objectContaining({ id: 61, name: "Beside run" })]));

    const missing = await cli(["import", path.join(dir, "nope.json")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^Cannot read .*nope\.json as JSON: ENOENT: no such file or directory/);

    const out = path.join(dir, "out.json");
    const exported = await cli(["export", out]);
    expect(exported).toMatchObject({ code: 0, stdout: "", stderr: `Exported to ${out}\n` });
    const written = JSON.parse(readFileSync(out, "utf8")) as { parkourMaps: { name: string }[] };
    expect(written.parkourMaps.map((m) => m.name)).toContain("Beside run");
    const toStdout = await cli(["export"]);
    expect(JSON.parse(toStdout.stdout)).toEqual(written);
  });

  it("when commands carry a key or a path as arguments, then the server logs their names and neither", async () => {
    const logged = () =>
      service
        .lines()
        .filter((l) => l.msg === "CLI command through the control channel")
        .map((l) => l.command);
    const key = `gsk_${"k".repeat(43)}`;
    const secretPath = path.join(dir, "secret-folder", "file.json");
    await cli(["import", key]);
    await cli(["import", secretPath]);
    await cli(["user", key]);
    // Lines are written in blocks: the last three, once there.
    await service.waitFor("the three commands logged by name", () => logged().slice(-3).join() === "import,import,user");
    const output = service.output();
    expect(output).not.toContain(key);
    expect(output).not.toContain("secret-folder");
  });

  it("when the audit log is read, then the commands run through the server are in it, by the CLI's user", async () => {
    const r = await cli(["audit", "--json"]);
    expect(r.code).toBe(0);
    const entries = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { actor: string; action: string });
    const actions = entries.filter((e) => e.actor.startsWith("cli:")).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["api_user.rotate", "api_user.register", "webhook.add", "data.import"]));
  });

  it("when the sample is seeded into the database that now holds data, or a command is misused, then it is refused as on a direct run", async () => {
    const seed = await cli(["seed"]);
    expect(seed.code).toBe(1);
    expect(seed.stderr).toContain("the sample is loaded into an empty database only");
    const misuse = await cli(["user", "frobnicate"]);
    expect(misuse.code).toBe(2);
    expect(misuse.stderr).toMatch(/^Unknown user command 'frobnicate'\n\nUsage: /);
  });

  it("when the server stops, then the channel is gone and the CLI opens the database itself, finding the same data", async () => {
    const throughServer = (await cli(["export"])).stdout;
    expect(await service.stop()).toBe(0);
    expect(() => lstatSync(controlPaths(dir).socket)).toThrow();
    expect(await cli(["user", "list"])).toMatchObject({ code: undefined });
    const direct = await cliBeside(["export"]);
    expect(direct.code).toBe(0);
    expect(direct.stdout).toBe(throughServer);
  }, 30_000);
});
