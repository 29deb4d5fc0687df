import http from "node:http";
import https from "node:https";
import net from "node:net";
import { Webhook } from "standardwebhooks";
import { guardedLookup, isPrivateAddress, RefusedTarget } from "./address-guard.js";

/** What a receiver's answer leaves behind: its status and the start of its body, no more. */
export const EXCERPT_CHARS = 200;
/** Bytes of the answer read at most (for the excerpt); the rest is discarded. */
const READ_BYTES = 4_096;

/**
 * Text PostgreSQL can store: it refuses U+0000 in text (22021), and a lone surrogate (an excerpt cut
 * inside a pair) is no UTF-8; both become U+FFFD, as bytes that are not UTF-8 already do when decoded.
 */
export function storableText(text: string): string {
  return text.replaceAll("\u0000", "\uFFFD").toWellFormed();
}

export interface Message {
  /** The webhook-id header: the event's, the same on every attempt and for every endpoint. */
  messageId: string;
  type: string;
  /** The resource as JSON text, as the API answers it. */
  data: string;
  createdAt: Date;
}

export interface AttemptResult {
  ok: boolean;
  status: number | null;
  /** The answer's first characters, or what went wrong. */
  excerpt: string;
  /** No retry can succeed (the endpoint's URL is not one): the delivery fails now. */
  final?: boolean;
}

/**
 * The body of a message (Standard Webhooks: type, timestamp, data). Built
 * from the stored JSON text, so data's fields keep the API's order.
 */
export function messageBody(message: Message): string {
  return `{"type":${JSON.stringify(message.type)},"timestamp":${JSON.stringify(message.createdAt.toISOString())},"data":${message.data}}`;
}

/** The Standard Webhooks headers of one attempt, signed with the endpoint's secret by the standardwebhooks library. */
export function signedHeaders(secret: string, messageId: string, body: string, at: Date): Record<string, string> {
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(messageId, at, body),
  };
}

/**
 * One POST of a message to an endpoint: 2xx is delivered, anything else (a
 * redirect included: never followed) or no answer within `timeoutMs` is not.
 */
export function attempt(
  url: string,
  secret: string,
  message: Message,
  options: { timeoutMs: number; allowPrivate: boolean; userAgent: string; traceparent?: string | null },
): Promise<AttemptResult> {
  const body = messageBody(message);
  const target = URL.parse(url);
  // Only a restored or hand-edited row can hold one (webhook add checks): never sent, never retried.
  if (!target || (target.protocol !== "http:" && target.protocol !== "https:")) {
    return Promise.resolve({ ok: false, status: null, excerpt: "refused: the endpoint's URL is not an http(s) URL", final: true });
  }
  const client = target.protocol === "https:" ? https : http;
  // An address in the URL is connected to without a lookup: checked here.
  const literal = target.hostname.replace(/^\[|\]$/g, "");
  if (!options.allowPrivate && net.isIP(literal) && isPrivateAddress(literal)) {
    return Promise.resolve({ ok: false, status: null, excerpt: `refused: ${literal} is a private, loopback or link-local address` });
  }
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const done = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, excerpt: storableText(result.excerpt) });
    };
    const request = client.request(
      target,
      {
        method: "POST",
        lookup: guardedLookup(options.allowPrivate),
        agent: false,
        headers: {
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(body),
          "User-Agent": options.userAgent,
          ...signedHeaders(secret, message.messageId, body, new Date()),
          // The delivery's span (tracing on): the receiver may join the trace of the write.
          ...(options.traceparent ? { traceparent: options.traceparent } : {}),
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          if (read < READ_BYTES) chunks.push(chunk);
          read += chunk.length;
          if (read >= READ_BYTES) response.destroy();
        });
        const finish = () => {
          const text = Buffer.concat(chunks).toString("utf8").replace(/\s+/g, " ").trim();
          const excerpt = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS - 1)}…` : text;
          const redirect = status >= 300 && status < 400 ? ` (redirect to ${String(response.headers.location ?? "nowhere")} not followed)` : "";
          done({ ok: status >= 200 && status < 300, status, excerpt: `${excerpt}${redirect}`.slice(0, 500) });
        };
        response.on("end", finish);
        response.on("close", finish);
        response.on("error", finish);
      },
    );
    const timer = setTimeout(() => {
      done({ ok: false, status: null, excerpt: `no answer within ${options.timeoutMs} ms` });
      request.destroy();
    }, options.timeoutMs);
    request.on("error", (error) => {
      const reason = error instanceof RefusedTarget ? `refused: ${error.message}` : `${(error as NodeJS.ErrnoException).code ?? "error"}: ${error.message}`;
      done({ ok: false, status: null, excerpt: reason.slice(0, 500) });
    });
    request.end(body);
  });
}
