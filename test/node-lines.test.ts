import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeLines, isSupported, parseEngines, supportedLines } from "../src/core/node-support.js";
import { freePort } from "./helpers/process.js";

/**
 * The Node.js lines the service runs on are the maintained ones, written once in package.json's engines.
 * On an older Node (20, past its end of life, which Debian 12 still ships), each way in — `npm start`,
 * `npm test`, `npm run cli`, `node dist/main.js` — stops with one line before it binds a port or opens
 * the data folder: no crash deep in a dependency, no data folder half made. The supported lines
 * themselves run the suite in CI (.ci/run).
 */
const root = path.resolve(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { engines: { node: string } };

describe("the supported Node.js lines", () => {
  it("when package.json's engines are read, then they are 22 from 22.12, 24, and 26 on", () => {
    expect(describeLines(supportedLines())).toBe("22 (22.12 or later), 24 or 26 and later");
    expect(parseEngines(pkg.engines.node)).toEqual(supportedLines());
  });

  it.each([
    ["20.20.2", false],
    ["21.7.3", false],
    ["22.11.0", false],
    ["22.12.0", true],
    ["22.23.5", true],
    ["23.11.1", false],
    ["24.0.0", true],
    ["25.9.0", false],
    ["26.12.1", true],
    ["28.0.0", true],
  ] as const)("when the version is %s, then supported is %s", (version, supported) => {
    expect(isSupported(version, supportedLines())).toBe(supported);
  });

  it("when engines hold a range of another form, then reading them says which part", () => {
    expect(() => parseEngines("^22 || 24.x")).toThrow(/"24\.x" is not of the form/);
  });

  it("when the README says which Node the image runs, then it is the Dockerfile's", () => {
    const image = /^FROM node:(\d+)-/m.exec(readFileSync(path.join(root, "Dockerfile"), "utf8"))![1]!;
    expect(readFileSync(path.join(root, ".nvmrc"), "utf8").trim()).toBe(image);
    expect(readFileSync(path.join(root, "README.md"), "utf8")).toContain(`the container image runs Node.js ${image}`);
  });
});

describe("on Node.js 20, past its end of life", () => {
  let node20: string;
  let dir: string;
  beforeAll(() => {
    // The machine's own when it is 20 (CI here), else the registry's, installed once (scripts/node-runtime.mjs).
    node20 = execFileSync(process.execPath, [path.join(root, "scripts/node-runtime.mjs"), "20"], { cwd: root, encoding: "utf8" }).trim();
    dir = mkdtempSync(path.join(tmpdir(), "node20-"));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const ways: [string, string, string[]][] = [
    ["npm start", "npm", ["start"]],
    // A test file that does not exist: were the check to let it through, vitest would find nothing to run, not the suite.
    ["npm test", "npm", ["test", "--", "test/no-such-file-for-node-20.test.ts"]],
    ["npm run cli", "npm", ["run", "--silent", "cli", "--", "user", "list"]],
    ["node dist/main.js", "node", ["dist/main.js"]],
    ["node dist/cli/main.js", "node", ["dist/cli/main.js", "user", "create", "someone"]],
  ];

  it.each(ways)(
    "when %s is run, then it exits 1 with one line naming 20 and the supported lines, before any port or data folder",
    async (_name, command, args) => {
      const dataDir = path.join(dir, "data");
      const bin = path.dirname(node20);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: `${bin}${path.delimiter}${process.env.PATH}`,
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        HOST: "127.0.0.1",
      };
      delete env.DATABASE_URL;
      delete env.npm_config_node_options;
      const run = spawnSync(command === "node" ? node20 : command, args, { cwd: root, env, encoding: "utf8", timeout: 60_000 });
      const lines = run.stderr.split("\n").filter(Boolean);
      // npm prints its own header (`> game-community-api@… start`) on stdout; the refusal is stderr's only line.
      expect(lines, run.stderr).toEqual([
        expect.stringMatching(
          /^game-community-api does not run on Node\.js 20\.\d+\.\d+ \(.*\): it needs Node\.js 22 \(22\.12 or later\), 24 or 26 and later, the maintained lines\./,
        ),
      ]);
      expect(run.status).toBe(1);
      expect(run.stdout).not.toMatch(/listening|First start|gsk_/);
      expect(existsSync(dataDir)).toBe(false);
    },
    90_000,
  );
});
