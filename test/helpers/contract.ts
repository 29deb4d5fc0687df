import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { buildOpenApiDocument } from "../../src/api-document/openapi.js";
import type { RouteSpec } from "../../src/http/route.js";
import { JSON_HEADERS } from "../../src/http/security-headers.js";
import { apiRoutes } from "../../src/resources/index.js";

/**
 * The contract check every test app runs on every response it sent: the
 * status must be documented for the operation, a JSON body must match the
 * schema the OpenAPI document gives for that operation and status, and the
 * headers must be the ones it declares, both ways: none sent that it does not
 * declare, none it declares required missing.
 */
export interface SeenResponse {
  method: string;
  path: string;
  status: number;
  /** Names in lower case, as Node keeps them. */
  headers: Record<string, unknown>;
  /** The JSON sent, if any. */
  body?: unknown;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

type Ref = { $ref: string };
type Response = { headers?: Record<string, Ref> };
type Document = {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { headers: Record<string, { required?: boolean }> };
};

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** Paths served outside the documented operations (the probes are described in docs/OPERATIONS.md; /admin is the console's page). */
const UNDOCUMENTED_OK = [/^\/api\/openapi\.json$/, /^\/api\/docs(\/|$)/, /^\/(livez|readyz)$/, /^\/admin(\/|$)/];

/**
 * Headers no operation lists, since they say nothing a client of this API acts on: HTTP's own framing
 * (Content-Type and Content-Length follow from the content documented; Connection: close when the
 * instance stops, Keep-Alive, Date) and the security headers every answer carries for browsers (src/service/app.ts).
 */
const TRANSPORT_HEADERS = new Set([
  "content-type",
  "content-length",
  "transfer-encoding",
  "date",
  "connection",
  "keep-alive",
  ...JSON_HEADERS.map(([name]) => name.toLowerCase()),
]);

/** Headers of answers outside any operation (an unknown path, a method a path does not have: 404, 405). */
function offDocumentHeaders(status: number): Record<string, boolean> {
  return {
    "x-request-id": true,
    "error-name": true,
    ratelimit: false,
    "ratelimit-policy": false,
    ...(status === 429 || status === 503 ? { "retry-after": true } : {}),
    ...(status === 405 ? { allow: true } : {}),
  };
}

/** A checker for an app serving these routes (tests may add probes to the twelve). */
export function contractChecker(routes: readonly RouteSpec[]): (seen: SeenResponse) => string | undefined {
  const document = buildOpenApiDocument(routes) as unknown as Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, "openapi");

  /** The declared headers of a response, by lower-case name: whether each is required. */
  const declared = (response: Response) =>
    Object.fromEntries(
      Object.entries(response.headers ?? {}).map(([name, ref]) => {
        const component = document.components.headers[ref.$ref.split("/").at(-1)!];
        if (!component) throw new Error(`No header component at ${ref.$ref}`);
        return [name.toLowerCase(), component.required === true];
      }),
    );

  return (seen) => {
    const where = `${seen.method} ${seen.path} → ${seen.status}`;
    if (UNDOCUMENTED_OK.some((p) => p.test(seen.path))) return undefined;
    const path = seen.path.replace(/^\/api(?=\/)/i, "");
    const method = seen.method === "HEAD" ? "get" : seen.method.toLowerCase();
    // The document's paths are under /api: the same path without it is no operation (a 404 in the Error shape).
    const operation = path === seen.path ? undefined : document.paths[path]?.[method];
    let ref: string;
    let headers: Record<string, boolean>;
    if (operation) {
      const response = operation.responses[String(seen.status)];
      if (!response) return `${where}: status ${seen.status} is not documented for this operation`;
      ref = `openapi#/${pointer("paths", path, method, "responses", String(seen.status), "content", "application/json", "schema")}`;
      headers = declared(response);
    } else if (seen.status >= 400) {
      ref = "openapi#/components/schemas/Error";
      headers = offDocumentHeaders(seen.status);
    } else {
      return `${where}: a success on an undocumented operation`;
    }
    const problems: string[] = [];
    for (const name of Object.keys(seen.headers)) {
      if (!(name in headers) && !TRANSPORT_HEADERS.has(name)) problems.push(`header ${name} is sent but not declared`);
    }
    for (const [name, required] of Object.entries(headers)) {
      if (required && seen.headers[name] === undefined) problems.push(`header ${name} is declared as always sent but missing`);
    }
    if (seen.body !== undefined) {
      const validate = ajv.getSchema(ref);
      if (!validate) problems.push(`no schema at ${ref}`);
      else if (!validate(seen.body)) problems.push(`${ajv.errorsText(validate.errors)} in ${JSON.stringify(seen.body).slice(0, 300)}`);
    }
    return problems.length > 0 ? `${where}: ${problems.join("; ")}` : undefined;
  };
}

/** The document of the twelve routes. */
export const document = buildOpenApiDocument(apiRoutes) as unknown as Document;
