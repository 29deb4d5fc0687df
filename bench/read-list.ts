/**
 * One reader of a whole list, in a process of its own (bench/lists.ts starts four): told "go" on
 * stdin, it GETs the URL and prints, as one JSON line, its time to the first byte of the body and to
 * the last (ms, from its own request) and the bytes read. Four readers in one process measured their
 * own event loop: the first list's chunks held back the others' first bytes. A failure is printed on
 * stderr and ends the process with 1.
 */
import { timedGet } from "./timed-get.js";

const [url, key] = process.argv.slice(2) as [string, string];

process.stdin.once("data", () => {
  timedGet(url, key).then(
    ({ headers: _headers, ...timed }) => {
      process.stdout.write(`${JSON.stringify(timed)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
// Warm: fetch's code loads on first use; the request must not pay for it.
await fetch("data:,").then((r) => r.text());
process.stdout.write("ready\n");
