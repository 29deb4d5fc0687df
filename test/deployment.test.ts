import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ENV_VARIABLES, loadConfig } from "../src/core/config.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

/**
 * The container files read for the properties they must have, and what runs without an engine (the
 * health check's command). test/containers/ builds and runs them for real, with podman
 * (npm run test:containers).
 */
const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const run = promisify(execFile);

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions by stage, line continuations joined, comments dropped. */
function dockerStages(text: string): { name: string; from: string; instructions: Instruction[] }[] {
  const lines = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const stages: { name: string; from: string; instructions: Instruction[] }[] = [];
  for (const line of lines) {
    const [, op = "", args = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?/i.exec(args)!;
      stages.push({ from: m[1]!, name: m[2] ?? String(stages.length), instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

describe("the Dockerfile", () => {
  const stages = dockerStages(read("Dockerfile"));
  const runtime = stages.at(-1)!;
  const find = (op: string) => runtime.instructions.filter((i) => i.op === op);

  it("when built, then a build stage compiles and a slim runtime stage of its own runs", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages[0]!.instructions.some((i) => i.op === "RUN" && /npm run build/.test(i.args))).toBe(true);
    // The production runtime is the Node.js major of .nvmrc, in both stages.
    const major = read(".nvmrc").trim();
    for (const stage of stages) expect(stage.from).toMatch(new RegExp(`^node:${major}[\\w.-]*-slim(\\s|$)`));
    expect(runtime.instructions.some((i) => i.op === "COPY" && i.args.startsWith(`--from=${stages[0]!.name} /app/dist`))).toBe(true);
    // Nothing of the source tree beyond what the runtime needs.
    expect(find("COPY").map((i) => i.args)).not.toContainEqual(expect.stringMatching(/^\.\s/));
  });

  it("when run, then as a non-root user, in production, with production dependencies only, the migrations and the compiled Prisma client", () => {
    const user = find("USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(
      find("ENV")
        .map((i) => i.args)
        .join(" "),
    ).toMatch(/\bNODE_ENV=production\b/);
    expect(find("RUN").some((i) => /npm ci\b.*--omit=dev/.test(i.args))).toBe(true);
    expect(find("COPY").some((i) => /^prisma\/migrations\s/.test(i.args))).toBe(true);
    // The generated client lives in src/generated and is compiled with the rest into dist/.
    const build = JSON.parse(read("tsconfig.build.json")) as { include: string[]; exclude?: string[] };
    expect(build.include).toContain("src");
    expect(build.exclude ?? []).not.toContainEqual(expect.stringMatching(/generated/));
    expect(JSON.parse(find("CMD").at(-1)!.args) as string[]).toContain("dist/main.js");
  });

  it("when run, then node gets the memory flags npm start gives it", () => {
    const { scripts } = JSON.parse(read("package.json")) as { scripts: { start: string } };
    const startFlags = /\bnode ((?:--\S+ )+)dist\/main\.js/.exec(scripts.start)?.[1]?.trim().split(" ");
    expect(startFlags).toContainEqual(expect.stringMatching(/^--max-old-space-size=/));
    expect(JSON.parse(find("CMD").at(-1)!.args)).toEqual(["node", ...startFlags!, "dist/main.js"]);
  });

  it("when the image runs, then its HEALTHCHECK asks /readyz, and that command answers 0 on a ready instance and 1 otherwise", async () => {
    const healthcheck = find("HEALTHCHECK").at(-1)!.args;
    expect(healthcheck).toMatch(/--interval=\d+s/);
    expect(healthcheck).toMatch(/--timeout=\d+s/);
    const command = JSON.parse(/CMD\s+(\[.*\])$/.exec(healthcheck)![1]!) as string[];
    expect(command.join(" ")).toContain("/readyz");
    const [bin, ...args] = command;
    expect(bin).toBe("node");
    const t: TestApp = await startTestApp();
    try {
      const port = new URL(t.url).port;
      await expect(run(process.execPath, args, { env: { ...process.env, PORT: port } })).resolves.toBeDefined();
      await t.close();
      await expect(run(process.execPath, args, { env: { ...process.env, PORT: port } })).rejects.toMatchObject({ code: 1 });
    } finally {
      await t.close().catch(() => undefined);
    }
  });

  it("when it copies files, then they exist and .dockerignore does not exclude them", () => {
    const ignored = read(".dockerignore")
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    const sources = stages
      .flatMap((s) => s.instructions)
      .filter((i) => i.op === "COPY" && !i.args.startsWith("--from"))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(path.join(root, source)), source).toBe(true);
      expect(
        ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)),
        source,
      ).toBe(false);
    }
  });
});

describe("the production dependencies", () => {
  it("when the service's code imports a package, then it is a production dependency (the image has no others)", () => {
    const pkg = JSON.parse(read("package.json")) as { dependencies: Record<string, string> };
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const full = path.join(dir, entry);
        if (statSync(full).isDirectory()) {
          if (entry !== "generated") walk(full);
        } else if (full.endsWith(".ts")) files.push(full);
      }
    };
    walk(path.join(root, "src"));
    const imported = new Set<string>();
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const specifiers = [
        ...[...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?\sfrom\s+"([^"]+)"/gm)].map((m) => m[1]!),
        ...[...text.matchAll(/^\s*import\s+"([^"]+)"/gm)].map((m) => m[1]!),
        ...[...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]!),
      ];
      for (const s of specifiers) {
        if (s.startsWith(".") || s.startsWith("node:") || builtinModules.includes(s)) continue;
        imported.add(s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!);
      }
    }
    expect(imported.size).toBeGreaterThan(5);
    // The generated Prisma client imports @prisma/client's runtime.
    imported.add("@prisma/client");
    for (const name of imported) expect(Object.keys(pkg.dependencies), `${name} is imported by src/ but not a production dependency`).toContain(name);
  });
});

describe("compose.yaml", () => {
  type Service = {
    image?: string;
    build?: unknown;
    deploy?: { replicas?: number };
    environment?: Record<string, string>;
    healthcheck?: { test: unknown };
    volumes?: string[];
    depends_on?: Record<string, { condition: string }>;
    stop_grace_period?: string;
    ports?: string[];
  };
  let compose: { services: Record<string, Service>; volumes: Record<string, unknown> };
  beforeAll(() => {
    compose = parseYaml(read("compose.yaml")) as typeof compose;
  });

  const seconds = (duration: string) => {
    const m = /^(\d+)(ms|s|m)$/.exec(duration)!;
    return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2] as "ms" | "s" | "m"];
  };

  it("when brought up, then PostgreSQL and Redis run with volumes and health checks", () => {
    for (const name of ["postgres", "redis"]) {
      const service = compose.services[name]!;
      expect(service.healthcheck?.test, name).toBeDefined();
      const volume = service.volumes?.[0]?.split(":")[0];
      expect(volume, name).toBeDefined();
      expect(Object.keys(compose.volumes)).toContain(volume);
    }
  });

  it("when brought up, then two replicas of the image built here wait for healthy PostgreSQL and Redis, with a valid configuration wired to them", () => {
    const api = compose.services.api!;
    expect(api.build).toBe(".");
    expect(api.deploy?.replicas).toBe(2);
    expect(api.depends_on).toEqual({ postgres: { condition: "service_healthy" }, redis: { condition: "service_healthy" } });
    const env = api.environment!;
    for (const name of Object.keys(env)) expect(ENV_VARIABLES, `${name} is not a variable the service reads`).toContain(name);
    // Compose substitutes ${VAR:-default} and refuses to start without ${VAR:?…}; the service must accept
    // what results (a hex password, as the comment advises, keeps the URL valid).
    const substituted = Object.fromEntries(
      Object.entries(env).map(([k, v]) => [
        k,
        String(v)
          .replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1")
          .replace(/\$\{[A-Z_]+:\?[^}]*\}/g, "0123456789abcdef"),
      ]),
    );
    // No default password: compose refuses to start without one.
    expect(read("compose.yaml")).not.toMatch(/POSTGRES_PASSWORD:-/);
    const config = loadConfig(substituted);
    expect(new URL(config.databaseUrl!).hostname).toBe("postgres");
    expect(new URL(config.redisUrl!).hostname).toBe("redis");
    // Exactly one trusted hop, nginx, which replaces X-Forwarded-For: a client cannot name its own address.
    expect(config.trustProxy).toBe(1);
    expect(seconds(api.stop_grace_period!)).toBeGreaterThan(config.shutdownTimeoutMs / 1000);
    // No replica publishes a host port (two could not share it): the balancer does.
    expect(api.ports).toBeUndefined();
  });

  it("when brought up, then a load balancer publishes the port and spreads requests over the replicas", () => {
    const lb = compose.services.lb!;
    expect(lb.ports).toEqual(["3000:80"]);
    expect(lb.depends_on).toEqual({ api: { condition: "service_healthy" } });
    const mounted = lb.volumes![0]!.split(":")[0]!;
    const nginx = read(mounted);
    expect(nginx).toMatch(/server api:3000( [^;]*)?;/);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);
    // And the host and scheme, which the trusted hop makes the document's servers URL from: a client cannot choose them.
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-Host \$host;/);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-Proto \$scheme;/);
    // nginx drops idle upstream connections before the service does (KEEP_ALIVE_TIMEOUT_MS).
    const upstreamIdle = Number(/keepalive_timeout (\d+)s;/.exec(nginx)![1]);
    const serviceIdle = loadConfig(compose.services.api!.environment).keepAliveTimeoutMs / 1000;
    expect(upstreamIdle).toBeLessThan(serviceIdle);
  });
});
