import type { z } from "zod";
import { errors, type ApiError } from "../errors.js";

/**
 * One zod failure → one 400 whose message names each bad field:
 * `gradeId: expected an integer; foo: unknown field`.
 */
export function validationError(error: z.ZodError): ApiError {
  const parts = error.issues.slice(0, 10).flatMap((issue) => {
    const at = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => `${at ? `${at}.` : ""}${key}: unknown field`);
    }
    return [`${at || "body"}: ${describe(issue)}`];
  });
  return errors.validation(parts.join("; "));
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type") {
    // zod says "Invalid input: expected string, received undefined" for a missing field.
    if (/received undefined$/.test(issue.message)) return "required";
    return `expected ${issue.expected}, received ${received(issue.input)}`;
  }
  return issue.message;
}

function received(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
