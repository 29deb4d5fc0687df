import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Webhook settings for tests with a receiver on 127.0.0.1: private addresses
 * allowed, a short timeout and short back-offs, so that a retry comes within
 * a test's time.
 */
export const FAST_WEBHOOKS = {
  WEBHOOKS_ALLOW_PRIVATE: "true",
  WEBHOOKS_TIMEOUT_MS: "1000",
  WEBHOOKS_BACKOFF_BASE_MS: "50",
  WEBHOOKS_BACKOFF_MAX_MS: "200",
};

export interface Received {
  /** The request's path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered (0: not answered, "hang"). */
  status: number;
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1: records every request and answers what
 * `answer` says (a status, or "hang": never answers until closed).
 */
export interface Receiver {
  url: string;
  received: Received[];
  /** The requests answered 2xx, by webhook-id (a duplicate appears twice). */
  delivered(): Map<string, Received[]>;
  answer: (request: Received, res: ServerResponse) => number | "hang" | "handled";
  waitFor(what: string, test: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(path = "/hook"): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: "",
    received: [],
    answer: () => 204,
    delivered() {
      const byId = new Map<string, Received[]>();
      for (const r of receiver.received) {
        if (r.status < 200 || r.status > 299) continue;
        const id = String(r.headers["webhook-id"]);
        byId.set(id, [...(byId.get(id) ?? []), r]);
      }
      return byId;
    },
    async waitFor(what, test, ms = 30_000) {
      const until = Date.now() + ms;
      while (!test()) {
        if (Date.now() > until) throw new Error(`receiver: no ${what} after ${ms} ms (${receiver.received.length} requests)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const request: Received = { url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status: 0, at: Date.now() };
      const answer = receiver.answer(request, res);
      if (answer === "hang") {
        // Recorded with status 0: never answered.
        receiver.received.push(request);
        hanging.add(res);
        return;
      }
      if (answer === "handled") return;
      request.status = answer;
      receiver.received.push(request);
      res.writeHead(answer, { "Content-Type": "text/plain" }).end(answer >= 400 ? `receiver says ${answer}` : "");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
