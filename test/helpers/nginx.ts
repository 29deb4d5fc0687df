import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "./process.js";

/**
 * Debian's nginx (nginx-light) in front of test instances, with deploy/nginx.conf as shipped: its upstream's
 * `server api:3000 …;` line given once per instance port, with the file's parameters, and its listener on a
 * loopback port. .ci/run installs it and sets REQUIRE_NGINX, which makes its absence a failure.
 */
export const NGINX = process.env.NGINX_PATH ?? "/usr/sbin/nginx";
export const nginxAvailable = existsSync(NGINX);
if (!nginxAvailable && process.env.REQUIRE_NGINX) throw new Error(`No nginx at ${NGINX}, and REQUIRE_NGINX is set (as in CI)`);

export interface Nginx {
  url: string;
  process: ChildProcess;
}

/** Starts nginx with its files in `dir`; resolves once it answers (whatever its upstreams say), within 30 s. */
export async function startNginx(dir: string, upstreamPorts: readonly number[]): Promise<Nginx> {
  const port = await freePort();
  const site = readFileSync(path.join(import.meta.dirname, "../../deploy/nginx.conf"), "utf8")
    .replace(/server api:3000([^;]*);/, (_, params: string) => upstreamPorts.map((p) => `server 127.0.0.1:${p}${params};`).join("\n    "))
    .replace("listen 80;", `listen 127.0.0.1:${port};`);
  const temp = (name: string) => `${name}_temp_path ${path.join(dir, name)};`;
  writeFileSync(
    path.join(dir, "nginx.conf"),
    `daemon off; master_process off; pid ${path.join(dir, "nginx.pid")}; error_log ${path.join(dir, "error.log")};
     events {}
     http { access_log off; ${["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(temp).join(" ")}
       ${site} }`,
  );
  const child = spawn(NGINX, ["-p", dir, "-c", path.join(dir, "nginx.conf")], { stdio: ["ignore", "ignore", "pipe"] });
  const url = `http://127.0.0.1:${port}`;
  const log = () => (existsSync(path.join(dir, "error.log")) ? readFileSync(path.join(dir, "error.log"), "utf8") : "no error.log");
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${log()}`);
    if (
      await fetch(`${url}/livez`).then(
        () => true,
        () => false,
      )
    )
      return { url, process: child };
    if (Date.now() > until) {
      child.kill("SIGKILL");
      throw new Error(`nginx did not answer within 30 s: ${log()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
