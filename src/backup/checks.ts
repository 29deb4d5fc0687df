import { ENTITIES } from "../entities/all.js";
import { isEventType } from "../events/catalogue.js";
import type { Entity } from "../fields/entity.js";
import { issueMessages, PARSE_OPTIONS } from "../http/validation.js";
import { parseEndpointUrl } from "../webhooks/manage.js";
import { BackupFileError, signedWith } from "./format.js";
import type { SchemaConstraints } from "./keys.js";

// What restore and restore --check check of a backup beyond its form (format.ts): its signature and its rows.

/** Whose backups are trusted: those signed with `signingKey` (BACKUP_SIGNING_KEY), or any when `unsigned` (restore --unsigned). */
export interface BackupTrust {
  signingKey?: string;
  unsigned?: boolean;
}

/** With BACKUP_SIGNING_KEY: a file signed with it, or the operator's explicit --unsigned (said in a warning). */
export function checkSignature(seal: string, signature: string | undefined, trust: BackupTrust): string | undefined {
  if (!trust.signingKey) return undefined;
  const problem =
    signature === undefined
      ? "it is not signed, and BACKUP_SIGNING_KEY is set"
      : !signedWith(seal, signature, trust.signingKey)
        ? "its signature is not made with this BACKUP_SIGNING_KEY (the file was altered and sealed again, or comes from a server with another key)"
        : undefined;
  if (problem === undefined) return undefined;
  if (!trust.unsigned) throw new BackupFileError(`${problem}: restore --unsigned takes it anyway, if you know where it comes from`);
  return `${problem}; taken as you asked (--unsigned): its API users and webhook endpoints are installed as it holds them.`;
}

/** The API's resources by table: their rows are checked as an import checks a record. */
export const ENTITY_OF = new Map<string, Entity>(ENTITIES.map((e) => [e.table, e as unknown as Entity]));

/**
 * A resource's row as `import` would take it (types, lengths, formats, ranges): a backup holds only what the
 * API and import wrote, so anything else was put there by hand. Columns that are not fields (a cosmetic's
 * version) are left to the column check of the writing pass.
 */
export function checkRecord(table: string, row: Record<string, unknown>): void {
  const entity = ENTITY_OF.get(table)!;
  const record = Object.fromEntries(Object.keys(entity.fields).map((name) => [name, row[name]]));
  const result = entity.record.safeParse(record, PARSE_OPTIONS);
  if (!result.success) {
    const key = entity.primaryKey ?? "id";
    throw new BackupFileError(
      `the row of ${table} whose ${key} is ${String(row[key])} is not one the API would store (${issueMessages(result.error).join("; ")}): the file was altered`,
    );
  }
}

/** An endpoint as `webhook add` would take it: an http(s) URL (never echoed: it may hold a credential), known event types. */
export function checkEndpoint(row: Record<string, unknown>): void {
  const id = String(row.id);
  try {
    parseEndpointUrl(String(row.url));
  } catch (error) {
    throw new BackupFileError(`webhook endpoint ${id}'s ${(error as Error).message}: the file was altered`);
  }
  const events = row.events;
  if (!Array.isArray(events) || !events.every((e) => typeof e === "string" && isEventType(e))) {
    throw new BackupFileError(`webhook endpoint ${id}'s events are not a list of this service's event types: the file was altered`);
  }
}

/** What is wrong with a row's columns against the target's (`here`), or undefined: the same words for --check and restore. */
export function columnProblem(table: string, here: readonly string[], there: readonly string[]): string | undefined {
  const missing = here.filter((c) => !there.includes(c));
  const extra = there.filter((c) => !here.includes(c));
  if (!missing.length && !extra.length) return undefined;
  return `The backup's ${table} do not have this database's columns (${[...missing.map((c) => `missing ${c}`), ...extra.map((c) => `unknown ${c}`)].join(", ")}).`;
}

/** The database a file is checked against (restore --check): its schema, each table's columns as a restore copies them, its constraints. */
export interface CheckTarget {
  schema: string;
  columns(table: string): Promise<string[]>;
  constraints(): Promise<SchemaConstraints>;
}
