import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { isMainThread } from "node:worker_threads";

/**
 * The embedded database's folder is its owner's alone: it holds players'
 * tokens and addresses (the WAL too), and its settings (postgresql.auto.conf)
 * decide how the next start goes. PGlite creates more files as it runs (WAL
 * segments), so the process that opens it takes umask 077 for good: whatever
 * it creates from then on is 0600 (files) or 0700 (folders). What an earlier
 * start left looser, and what PGlite's first start on a new folder sets to
 * 0666 itself (open.ts), is tightened here.
 *
 * Returns how many files and folders were tightened.
 */
export function makeDataDirOwnerOnly(dataDir: string): number {
  // A worker thread may not change the umask (tests); the server and the CLI are main threads.
  if (isMainThread) process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let tightened = 0;
  const visit = (entry: string) => {
    const stat = lstatSync(entry);
    if (stat.isSymbolicLink()) return; // chmod would change what it points to, which is not the folder's
    if ((stat.mode & 0o077) !== 0) {
      chmodSync(entry, stat.mode & 0o700);
      tightened++;
    }
    if (stat.isDirectory()) for (const name of readdirSync(entry)) visit(path.join(entry, name));
  };
  visit(dataDir);
  return tightened;
}
