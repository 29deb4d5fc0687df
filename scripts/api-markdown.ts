import { ERROR_CATALOGUE } from "../src/core/errors.js";

/**
 * docs/API.md, the per-route reference, written from the OpenAPI document (and
 * the error catalogue) so that it cannot drift from what the service does.
 */
type Schema = {
  $ref?: string;
  type?: string | string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  enum?: unknown[];
  pattern?: string;
};
type Parameter = { in: string; name: string; required?: boolean; description?: string; schema: Schema };
type Operation = {
  summary: string;
  description: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Schema }> }>;
  "x-callers": string[];
  "x-version"?: string;
};
type Document = {
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

const GROUPS = ["A", "B", "C", "D"] as const;
const INT32 = 2147483647;

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n+/g, " ");
const refName = (ref: string) => ref.split("/").pop()!;
const anchor = (method: string, path: string) =>
  `${method}-${path}`
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .replace(/ /g, "-");

function typeOf(schema: Schema): string {
  if (schema.$ref) return `[${refName(schema.$ref)}](#${refName(schema.$ref).toLowerCase()})`;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(typeOf).join(" or ");
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 1 && types[0] === "null") return "null";
  const nullable = types.includes("null");
  const base = types.find((t) => t !== "null");
  let text: string;
  if (schema.enum) text = schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(", ");
  else if (base === "array") text = `array of ${schema.items ? typeOf(schema.items) : "anything"}`;
  else if (base === "string" && schema.format === "date-time") text = "date-time";
  else if (base === "string" && schema.pattern === "^-?\\d{1,10}$") text = "integer (in the query string)";
  else if (base === "string" && (schema.minLength !== undefined || schema.maxLength !== undefined)) {
    text = `string of ${schema.minLength ?? 0} to ${schema.maxLength ?? "any number of"} characters`;
  } else if (base === "integer" && schema.minimum !== undefined && schema.maximum === INT32) text = `integer ≥ ${schema.minimum}`;
  else if (base === "integer" && schema.maximum !== undefined && Math.abs(schema.maximum) > INT32) text = "integer";
  else if (base === "number" && schema.minimum !== undefined) text = `number ≥ ${schema.minimum}`;
  else text = base ?? "any";
  return nullable ? `${text} or null` : text;
}

function fieldTable(schema: Schema): string[] {
  const required = new Set(schema.required ?? []);
  return [
    "| field | type | required | meaning |",
    "|---|---|---|---|",
    ...Object.entries(schema.properties ?? {}).map(
      ([name, s]) => `| \`${name}\` | ${cell(typeOf(s))} | ${required.has(name) ? "yes" : ""} | ${cell(s.description ?? "")} |`,
    ),
  ];
}

/** Per status, the description most operations share: shown once, under Errors, rather than under each route. */
function commonAnswers(operations: Operation[]): Map<string, string> {
  const counts = new Map<string, Map<string, number>>();
  for (const op of operations) {
    for (const [status, r] of Object.entries(op.responses)) {
      const byText = counts.get(status) ?? new Map<string, number>();
      byText.set(r.description, (byText.get(r.description) ?? 0) + 1);
      counts.set(status, byText);
    }
  }
  const common = new Map<string, string>();
  for (const [status, byText] of counts) {
    const [text, n] = [...byText].sort((a, b) => b[1] - a[1])[0]!;
    if (Number(status) >= 400 && n > operations.length / 2) common.set(status, text);
  }
  return common;
}

function operationSection(method: string, path: string, op: Operation, common: Map<string, string>): string[] {
  const [description] = op.description.split("\n\n**Callers:**");
  const lines = [`### ${method.toUpperCase()} ${path}`, "", `**${op.summary}.** ${description}`, ""];
  lines.push(`Callers: groups ${op["x-callers"].join(", ")}.${op["x-version"] ? ` Version ${op["x-version"]}.` : ""}`, "");
  const parameters = op.parameters ?? [];
  if (parameters.length > 0) {
    lines.push("| parameter | in | type | required | meaning |", "|---|---|---|---|---|");
    for (const p of parameters) {
      lines.push(`| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? "yes" : ""} | ${cell(p.description ?? p.schema.description ?? "")} |`);
    }
    lines.push("");
  }
  const body = op.requestBody?.content["application/json"]?.schema;
  if (body) lines.push("Body (`application/json`):", "", ...fieldTable(body), "");
  const answers = Object.entries(op.responses);
  const usual = answers.filter(([status, r]) => common.get(status) === r.description).map(([status]) => status);
  lines.push("| status | when | body |", "|---|---|---|");
  for (const [status, response] of answers.filter(([status]) => !usual.includes(status))) {
    const schema = response.content?.["application/json"]?.schema;
    lines.push(`| ${status} | ${cell(response.description)} | ${schema ? cell(typeOf(schema)) : ""} |`);
  }
  lines.push("", `Also, as on other routes: ${usual.join(", ")} (see [Errors](#errors)).`, "");
  return lines;
}

export function apiMarkdown(document: object): string {
  const doc = document as Document;
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const common = commonAnswers(operations.map((o) => o.op));
  const lines = [
    `# ${doc.info.title} ${doc.info.version}: reference`,
    "",
    "<!-- Generated by `npm run api:generate` from the OpenAPI document; do not edit (a test fails while it is stale). -->",
    "",
    "Every route, its callers, inputs, answers and statuses, written from the OpenAPI document",
    "([openapi.json](openapi.json), also served at `GET /api/openapi.json`). How to call it, with",
    "a worked example per route and the rules every client must know (keys, timestamps, nulls,",
    "rate limits, Idempotency-Key, ETags), is in [CALLING.md](CALLING.md).",
    "",
    doc.info.description,
    "",
    "## Routes",
    "",
    "All paths are under `/api`. ✓: the caller group may call the route.",
    "",
    `| route | summary | version | ${GROUPS.join(" | ")} |`,
    `|---|---|---|${GROUPS.map(() => "---|").join("")}`,
    ...operations.map(
      ({ path, method, op }) =>
        `| [${method.toUpperCase()} ${path}](#${anchor(method, path)}) | ${cell(op.summary)} | ${op["x-version"] ?? ""} | ${GROUPS.map((g) => (op["x-callers"].includes(g) ? "✓" : "")).join(" | ")} |`,
    ),
    "",
    ...operations.flatMap(({ path, method, op }) => operationSection(method, path, op, common)),
    "## Shapes",
    "",
    ...Object.entries(doc.components.schemas).flatMap(([name, schema]) => [`### ${name}`, "", ...fieldTable(schema), ""]),
    "## Errors",
    "",
    'Every failure is `{"code": <status>, "message": <text>}`; the kinds below are the service\'s catalogue',
    "(`src/core/errors.ts`). Clients see the status in `code`; the message says what happened in this case.",
    "",
    "The statuses most routes share mean, unless the route says otherwise:",
    "",
    ...[...common].map(([status, text]) => `- **${status}**: ${text}`),
    "",
    "| error | status | meaning | what the client should do |",
    "|---|---|---|---|",
    ...Object.entries(ERROR_CATALOGUE).map(([kind, e]) => `| \`${kind}\` | ${e.status} | ${cell(e.meaning)} | ${cell(e.action)} |`),
    "",
  ];
  return lines.join("\n");
}
