/**
 * A collector for the bench's traced servers (--tracing): takes OTLP/HTTP exports on 127.0.0.1, answers
 * each at once, counts the spans and keeps nothing. In the bench's own process: its CPU is not the server's.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export async function startSink(): Promise<{ url: string; spans(): number; exports(): number; close(): Promise<void> }> {
  let spans = 0;
  let exports = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      exports += 1;
      // A span is an object with a spanId: counted without parsing the whole export.
      spans += Buffer.concat(chunks).toString("utf8").split('"spanId"').length - 1;
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    exports: () => exports,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
