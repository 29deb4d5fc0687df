import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createServerDatabase, onPostgres } from "./database.js";
import { type ServiceProcess, spawnService } from "./process.js";

/** A span as an OTLP/HTTP (JSON) export carries it: what the tracing tests read of it. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links?: { traceId: string; spanId: string }[];
  name: string;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
  status?: { code?: number };
}

/** A collector: every span it was sent, and the raw bodies (to look for what must not be in them). */
export async function startCollector(): Promise<{ url: string; spans: OtlpSpan[]; bodies: string[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      bodies.push(body);
      const parsed = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const r of parsed.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export const attribute = (span: OtlpSpan | undefined, key: string) => {
  const value = span?.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

export interface Served {
  service: ServiceProcess;
  url: string;
  /** The first user's key, as the first start printed it. */
  key: string;
  /** Stops the service, drops its database and its files. */
  close: () => Promise<void>;
}

/** The service as a process of its own (embedded, or on a fresh PostgreSQL database), with `env` (the OTEL_* settings). */
export async function serveTraced(env: Record<string, string>): Promise<Served> {
  const dir = mkdtempSync(path.join(tmpdir(), "tracing-"));
  const database = onPostgres ? await createServerDatabase() : undefined;
  const service = spawnService({ DATA_DIR: path.join(dir, "data"), DATABASE_URL: database?.url ?? "", DATABASE_READ_URL: "", REDIS_URL: "", ...env });
  const close = async () => {
    await service.stop();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = `http://127.0.0.1:${await service.port()}`;
    return { service, url, key: /\b(gsk_[A-Za-z0-9_-]{43})\b/.exec(service.output())![1]!, close };
  } catch (error) {
    await close();
    throw error;
  }
}
