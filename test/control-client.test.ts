import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runThroughServer } from "../src/cli/control-client.js";
import { controlPaths } from "../src/cli/control-protocol.js";

/**
 * The CLI's side of the control channel, against servers this test plays: it
 * talks only to a socket of its own user (or root's) in folders no one else
 * can write, and hands a server only the files its command names. "Another
 * user" is uid 65534 (nobody), made owner with chown: only root may do that,
 * so those cases run as root alone.
 */
const isRoot = process.getuid?.() === 0;
const OTHER = 65534;
let dir: string;
const servers: net.Server[] = [];
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "control-client-"));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A server in `folder` answering as `script` says; `heard` gets every line a CLI sends it. */
async function fakeServer(folder: string, script: (line: Record<string, unknown>, socket: net.Socket) => void): Promise<{ heard: string[] }> {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(folder, "token"), "t".repeat(64), { mode: 0o600 });
  const heard: string[] = [];
  const server = net.createServer((socket) => {
    socket.setEncoding("utf8");
    let rest = "";
    socket.on("data", (chunk: string) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        heard.push(line);
        script(JSON.parse(line) as Record<string, unknown>, socket);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path.join(folder, "cli.sock"), resolve));
  return { heard };
}

const exit = (socket: net.Socket) => socket.end(`${JSON.stringify({ type: "exit", code: 0 })}\n`);

async function cli(dataDir: string, argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runThroughServer(dataDir, argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

function dataDir(): string {
  return mkdtempSync(path.join(dir, "data-"));
}

describe("the CLI's trust in the control channel", () => {
  it("when control/ is a symbolic link to a folder elsewhere (another user's), then the CLI refuses naming it and never connects", async () => {
    const data = dataDir();
    const elsewhere = path.join(dir, `elsewhere-${path.basename(data)}`);
    const fake = await fakeServer(elsewhere, (_, socket) => exit(socket));
    if (isRoot) chownSync(elsewhere, OTHER, OTHER);
    symlinkSync(elsewhere, controlPaths(data).dir);
    const r = await cli(data, ["user", "list"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Refusing the control channel at ${controlPaths(data).dir}: it is not a folder (a symbolic link?)`);
    expect(fake.heard).toEqual([]);
  });

  it("when control/ can be written by other users, then the CLI refuses naming it and never connects", async () => {
    const data = dataDir();
    const fake = await fakeServer(controlPaths(data).dir, (_, socket) => exit(socket));
    chmodSync(controlPaths(data).dir, 0o777);
    const r = await cli(data, ["user", "list"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Refusing the control channel at ${controlPaths(data).dir}: other users can write it (mode 777)`);
    expect(fake.heard).toEqual([]);
  });

  it.runIf(isRoot)("when control/ or its socket belongs to another user, then the CLI refuses naming it and never connects", async () => {
    const folderOwned = dataDir();
    const fakeA = await fakeServer(controlPaths(folderOwned).dir, (_, socket) => exit(socket));
    chownSync(controlPaths(folderOwned).dir, OTHER, OTHER);
    const a = await cli(folderOwned, ["user", "list"]);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain(`Refusing the control channel at ${controlPaths(folderOwned).dir}: it belongs to another user (uid ${OTHER})`);

    const socketOwned = dataDir();
    const fakeB = await fakeServer(controlPaths(socketOwned).dir, (_, socket) => exit(socket));
    lchownSync(controlPaths(socketOwned).socket, OTHER, OTHER);
    const b = await cli(socketOwned, ["user", "list"]);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain(`Refusing the control channel at ${controlPaths(socketOwned).socket}: it belongs to another user (uid ${OTHER})`);
    expect([...fakeA.heard, ...fakeB.heard]).toEqual([]);
  });

  it("when a server asks for files the command does not name, then the CLI refuses each request: nothing read is sent, nothing is written", async () => {
    const data = dataDir();
    const secret = path.join(dir, "secret.txt");
    const named = path.join(dir, "named.json");
    const planted = path.join(dir, "planted");
    writeFileSync(secret, "the secret", { mode: 0o600 });
    writeFileSync(named, "{}");
    let answered = 0;
    const fake = await fakeServer(controlPaths(data).dir, (line, socket) => {
      if ("argv" in line) {
        const send = (m: unknown) => socket.write(`${JSON.stringify(m)}\n`);
        send({ type: "read", id: 1, stream: 1, file: secret });
        send({ type: "write", id: 2, stream: 2, file: planted, data: Buffer.from("owned").toString("base64"), end: true });
      } else if (++answered === 2) exit(socket);
    });
    for (const argv of [
      ["user", "list"],
      ["import", named],
      ["export", named],
      ["backup", named],
      ["restore", named],
      ["restore", "--check", named],
    ]) {
      answered = 0;
      fake.heard.length = 0;
      expect((await cli(data, argv)).code).toBe(0);
      const answers = fake.heard.slice(1).map((l) => JSON.parse(l) as { id: number; error?: string; data?: string });
      expect(answers).toEqual([
        { id: 1, error: `the server asked to read ${secret}, which the command does not name` },
        { id: 2, error: `the server asked to write ${planted}, which the command does not name` },
      ]);
    }
    expect(existsSync(planted)).toBe(false);
  });
});
