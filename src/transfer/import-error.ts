import { formatTimestamp } from "../fields/timestamp.js";

/** An import refused whole: every problem named by array, index and field (the first MAX_PROBLEMS of them). */
export class ImportError extends Error {
  static readonly HEADING = "Import refused, nothing was written:";
  constructor(readonly problems: string[]) {
    super(`${ImportError.HEADING}\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ImportError";
  }
}

const MAX_PROBLEMS = 20;

/** The problems found so far: the first MAX_PROBLEMS kept, the others counted. */
export class Problems {
  private readonly kept: string[] = [];
  private count = 0;

  add(...problems: string[]): void {
    for (const p of problems) if (this.kept.length < MAX_PROBLEMS) this.kept.push(p);
    this.count += problems.length;
  }

  /** Problems a query found: the first of them, and how many there were in all. */
  addFound(problems: string[], total: number): void {
    this.add(...problems);
    this.count += Math.max(0, total - problems.length);
  }

  get any(): boolean {
    return this.count > 0;
  }

  /** Throws the import's refusal when there is any problem. */
  check(): void {
    if (this.count === 0) return;
    const more = this.count - this.kept.length;
    throw new ImportError(more > 0 ? [...this.kept, `… and ${more} more`] : this.kept);
  }
}

/** A value as a problem names it. */
export function display(value: unknown): string {
  if (value instanceof Date) return formatTimestamp(value);
  return typeof value === "string" ? `'${value}'` : String(value);
}

export const LIMIT_PROBLEMS = MAX_PROBLEMS;
