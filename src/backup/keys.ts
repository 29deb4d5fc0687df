import { BackupFileError } from "./format.js";

// restore --check and restore's first pass: the unique and foreign-key constraints of the target's schema,
// checked over the file's rows without keeping them, so that "whole" means the writing pass will not be refused.

/** The unique indexes (the primary key among them) and foreign keys of a table, as the target's catalog holds them. */
export interface TableConstraints {
  /** `where`: a partial index's boolean column, only the rows where it is true unique. */
  unique: { name: string; columns: string[]; types: string[]; where?: string }[];
  foreign: { name: string; columns: string[]; parent: string; parentColumns: string[] }[];
}

/** The target's constraints by table, and whether its lower() folds letters beyond ASCII (citext compares by it). */
export interface SchemaConstraints {
  tables: Map<string, TableConstraints>;
  foldsCase: boolean;
}

/**
 * Each unique constraint's rows, as 64-bit hashes of their normalized values (8 bytes a row, whatever the
 * values): two equal rows collide, two different ones with a chance of n²/2⁶⁵ (3 in 10⁸ for a million rows).
 */
class Hashes {
  private values = new BigUint64Array(1024);
  private size = 0;
  sorted = false;
  add(hash: bigint): void {
    if (this.size === this.values.length) {
      const grown = new BigUint64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.size++] = hash;
  }
  /** Sorts them; true when two are equal. */
  seal(): boolean {
    const held = this.values.subarray(0, this.size).sort();
    this.values = held;
    this.sorted = true;
    for (let i = 1; i < held.length; i++) if (held[i] === held[i - 1]) return true;
    return false;
  }
  has(hash: bigint): boolean {
    let [low, high] = [0, this.size - 1];
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const v = this.values[mid]!;
      if (v === hash) return true;
      if (v < hash) low = mid + 1;
      else high = mid - 1;
    }
    return false;
  }
}

/** Two 32-bit FNV-1a hashes of different offsets, one 64-bit value. */
function hash64(text: string): bigint {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return (BigInt(a >>> 0) << 32n) | BigInt(b >>> 0);
}

/** A timestamp's instant to the microsecond (PostgreSQL's precision), whatever its offset: equal instants, equal text. */
function instant(text: string): string {
  const m = /^(.*?)(?:\.(\d+))?(Z|[+-]\d\d(?::?\d\d)?)?$/.exec(text);
  const seconds = Date.parse(`${m?.[1] ?? text}${m?.[3] ?? "Z"}`);
  return Number.isNaN(seconds) ? text : `${seconds}.${(m?.[2] ?? "").padEnd(6, "0").slice(0, 6)}`;
}

export class KeyCheck {
  private readonly tables = new Map<string, { constraints: TableConstraints; hashes: Map<string, Hashes> }>();
  private current?: { table: string; key: string[]; constraints: TableConstraints; hashes: Map<string, Hashes> };
  /** The tables a foreign key names: their hashes are kept to the end, the others' dropped with their section. */
  private readonly parents: Set<string>;

  constructor(private readonly schema: SchemaConstraints) {
    this.parents = new Set([...schema.tables.values()].flatMap((t) => t.foreign.map((f) => f.parent)));
  }

  /** A table's section begins (the one before it ends: its repeated values are found then). */
  table(table: string, key: string[]): void {
    this.end();
    const constraints = this.schema.tables.get(table) ?? { unique: [], foreign: [] };
    const hashes = new Map(constraints.unique.map((u) => [u.name, new Hashes()]));
    this.current = { table, key, constraints, hashes };
    this.tables.set(table, { constraints, hashes });
  }

  row(row: Record<string, unknown>): void {
    const { table, key, constraints, hashes } = this.current!;
    for (const u of constraints.unique) {
      if (u.where && row[u.where] !== true) continue;
      const text = this.tuple(row, u.columns, u.types);
      if (text !== undefined) hashes.get(u.name)!.add(hash64(text));
    }
    for (const f of constraints.foreign) {
      const parent = this.tables.get(f.parent);
      const held = parent?.constraints.unique.find((u) => !u.where && u.columns.join() === f.parentColumns.join());
      const text = this.tuple(row, f.columns, held?.types ?? []);
      if (text === undefined) continue;
      const hashesOfParent = held && parent!.hashes.get(held.name);
      if (hashesOfParent?.sorted && hashesOfParent.has(hash64(text))) continue;
      const named = f.columns.map((c) => String(row[c])).join(", ");
      throw new BackupFileError(
        `the row of ${table} whose ${key.join(", ")} is ${key.map((c) => String(row[c])).join(", ")} names ${f.parent} ${f.parentColumns.join(", ")} ${named}, ` +
          `which the file does not hold before it (${f.name}): the file was altered`,
      );
    }
  }

  /** The last section ends: its repeated values are found. */
  end(): void {
    if (!this.current) return;
    const { table, constraints, hashes } = this.current;
    this.current = undefined;
    for (const u of constraints.unique) {
      if (hashes.get(u.name)!.seal()) {
        throw new BackupFileError(`two rows of ${table} hold the same ${u.columns.join(", ")} (${u.name}): the file was altered`);
      }
    }
    if (!this.parents.has(table)) this.tables.delete(table);
  }

  /** The values of `columns` as one text, undefined when one is null (never equal to anything, as in PostgreSQL). */
  private tuple(row: Record<string, unknown>, columns: string[], types: string[]): string | undefined {
    const parts: string[] = [];
    for (const [i, c] of columns.entries()) {
      const value = row[c];
      if (value === null || value === undefined) return undefined;
      const text = typeof value === "string" ? value : JSON.stringify(value);
      const type = types[i];
      parts.push(
        // Without a lower() beyond ASCII, only A–Z fold: "Élodie" and "élodie" stay two pseudos, as PostgreSQL keeps them.
        type === "citext"
          ? this.schema.foldsCase
            ? text.toLowerCase()
            : text.replace(/[A-Z]/g, (l) => l.toLowerCase())
          : type === "timestamptz" || type === "timestamp"
            ? instant(text)
            : text,
      );
    }
    // NUL ends no text PostgreSQL stores: the separator cannot be part of a value.
    return parts.join("\u0000");
  }
}
