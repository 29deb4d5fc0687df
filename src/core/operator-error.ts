/**
 * A failure the operator fixes by reading its message (a variable to change, a folder to mount writable,
 * a database to create): the server and the CLI print it as one line, without a stack trace, and exit 1.
 * Anything else is a defect, printed with its stack.
 */
export class OperatorError extends Error {}

/** What the entry points print for a failure that ends them. */
export function failureText(error: unknown, prefix = ""): string {
  if (error instanceof OperatorError) return `${error.message}\n`;
  return `${prefix}${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
}
