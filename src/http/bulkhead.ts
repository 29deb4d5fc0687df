/**
 * At most `limit` holders at once; the others wait their turn, in order.
 * Used for the full lists: each one in flight holds its answer several times
 * over (PostgreSQL's bytes, the string, the encoded body), so memory is
 * bounded by how many are built and sent at once, not by how many clients ask.
 */
export class Bulkhead {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}
