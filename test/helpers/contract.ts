import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { buildOpenApiDocument } from "../../src/http/openapi.js";
import type { RouteSpec } from "../../src/http/route.js";
import { apiRoutes } from "../../src/resources/index.js";

/**
 * The contract check every test app runs on every JSON response it sent:
 * the body must match the schema the OpenAPI document gives for that
 * operation and status, and the status must be documented for it.
 */
export interface SeenResponse {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

type Document = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** Paths served outside the documented operations (the probes are described in docs/OPERATIONS.md). */
const UNDOCUMENTED_OK = [/^\/api\/openapi\.json$/, /^\/api\/docs(\/|$)/, /^\/(livez|readyz)$/];

/** A checker for an app serving these routes (tests may add probes to the twelve). */
export function contractChecker(routes: readonly RouteSpec[]): (seen: SeenResponse) => string | undefined {
  const document = buildOpenApiDocument(routes) as unknown as Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, "openapi");
  return (seen) => {
    const where = `${seen.method} ${seen.path} → ${seen.status}`;
    const path = seen.path.replace(/^\/api(?=\/)/i, "");
    const method = seen.method === "HEAD" ? "get" : seen.method.toLowerCase();
    const operation = document.paths[path]?.[method];
    let ref: string;
    if (operation) {
      if (!operation.responses[String(seen.status)]) return `${where}: status ${seen.status} is not documented for this operation`;
      ref = `openapi#/${pointer("paths", path, method, "responses", String(seen.status), "content", "application/json", "schema")}`;
    } else if (seen.status >= 400) {
      ref = "openapi#/components/schemas/Error";
    } else if (UNDOCUMENTED_OK.some((p) => p.test(seen.path))) {
      return undefined;
    } else {
      return `${where}: a success on an undocumented operation`;
    }
    const validate = ajv.getSchema(ref);
    if (!validate) return `${where}: no schema at ${ref}`;
    if (validate(seen.body)) return undefined;
    return `${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(seen.body).slice(0, 300)}`;
  };
}

/** The document of the twelve routes. */
export const document = buildOpenApiDocument(apiRoutes) as unknown as Document;
