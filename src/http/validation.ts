import type { z } from "zod";
import { type ApiError, errors } from "../core/errors.js";

/** Parse options that make zod keep the offending input in its issues, so messages can say what was received. */
export const PARSE_OPTIONS = { reportInput: true } as const;

/**
 * zod issues as `field: what was wrong` lines, the field path prefixed by
 * `prefix` (the import names `players[3].` there), one line per field.
 */
export function issueMessages(error: z.ZodError, prefix = ""): string[] {
  const reported = new Set<string>();
  return error.issues.flatMap((issue) => {
    const at = prefix + issue.path.map(String).join(".");
    // One message per field: the first rule it broke (a too-short name need not also hear about its characters).
    if (issue.code !== "unrecognized_keys") {
      if (reported.has(at)) return [];
      reported.add(at);
    }
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => `${at && !at.endsWith(".") ? `${at}.` : at}${key || '""'}: unknown field`);
    }
    return [`${at.replace(/\.$/, "") || "body"}: ${describe(issue)}`];
  });
}

/** One zod failure → one 400 whose message names each bad field: `id: expected an integer; foo: unknown field`. */
export function validationError(error: z.ZodError): ApiError {
  return errors.validation(issueMessages(error).slice(0, 10).join("; "));
}

function describe(issue: z.core.$ZodIssue): string {
  const message = issue.message.replace(/^Invalid input: /, "");
  if (issue.code !== "invalid_type") return message;
  if (issue.input === undefined) return "required";
  // "expected an integer, received number" would puzzle whoever sent 2.5.
  if (issue.expected === "int" && typeof issue.input === "number") return message;
  return /received /.test(message) ? message : `${message}, received ${received(issue.input)}`;
}

function received(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
