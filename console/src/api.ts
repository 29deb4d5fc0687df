import type { components } from "../../clients/typescript/src/schema.js";

/**
 * Calls to the service's own API with the key the admin signed in with. The
 * key lives in sessionStorage (this tab only, gone when it closes): never a
 * cookie, never the URL. Paths are relative, so the console works behind a
 * path prefix.
 */
const STORAGE = "admin-console-key";

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The API user the key belongs to (GET /admin/session), in this page's memory. */
let signedInAs: string | undefined;

export const session = {
  key: (): string | null => sessionStorage.getItem(STORAGE),
  set: (key: string) => sessionStorage.setItem(STORAGE, key),
  clear: () => {
    sessionStorage.removeItem(STORAGE);
    signedInAs = undefined;
  },
  username: (): string | undefined => signedInAs,
  signedInAs: (username: string) => {
    signedInAs = username;
  },
};

export interface Answer<T> {
  body: T;
  headers: Headers;
}

export async function call<T>(method: string, path: string, body?: unknown, key = session.key()): Promise<Answer<T>> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (key) headers["X-API-Key"] = key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store", credentials: "omit" });
  } catch {
    throw new ApiFailure(0, "NETWORK", "The service did not answer: check the connection and try again.");
  }
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const error = (json ?? {}) as { code?: string; message?: string };
    throw new ApiFailure(res.status, error.code ?? "HTTP", error.message ?? `HTTP ${res.status}`);
  }
  return { body: json as T, headers: res.headers };
}

/** Admin API paths, relative to the console's page (/admin → /api/admin/…). */
export const api = (path: string) => `api/${path}`;

/** The admin routes' answers, as the OpenAPI document declares them (the TypeScript client's generated types). */
type Schemas = components["schemas"];
export type ApiUser = Schemas["ApiUser"];
export type AuditEntry = Schemas["AuditEntry"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type PlayerExport = Schemas["PlayerExport"];
export type ErasureReceipt = Schemas["ErasureReceipt"];
export type Season = NonNullable<Schemas["LeaderboardPeriod"]>;
