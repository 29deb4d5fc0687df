// One reader of a whole list, in a process of its own (bench/lists.ts starts four): told "go" on
// stdin, it GETs the URL and prints, as one JSON line, its time to the first byte of the body and to
// the last (ms, from its own request) and the bytes read. Four readers in one process measured their
// own event loop: the first list's chunks held back the others' first bytes. A failure is printed
// on stderr and ends the process with 1.
import { performance } from "node:perf_hooks";

const [url, key] = process.argv.slice(2);

async function read() {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { "X-API-Key": key } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  const reader = res.body.getReader();
  let firstByteMs = -1;
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstByteMs < 0) firstByteMs = performance.now() - t0;
    bytes += value.length;
  }
  return { firstByteMs, totalMs: performance.now() - t0, bytes };
}

process.stdin.once("data", () => {
  read().then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
});
// Warm: fetch's code loads on first use; the request must not pay for it.
await fetch("data:,").then((r) => r.text());
process.stdout.write("ready\n");
