/**
 * The streams bench/events.ts opens on GET /api/events: one that parses its events (timed), idle ones
 * that only read, and the fan-out's readers in processes of their own.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import os from "node:os";

/**
 * Opens a stream; resolves once the head came. With `onEvent`, calls it with each event's data and its
 * arrival time; without, reads and drops what comes (idle streams).
 */
export function openStream(url: string, key: string, agent: http.Agent, onEvent?: (data: string, at: number) => void): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/events?types=reward_log.created`, { headers: { "X-API-Key": key }, agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
      if (!onEvent) {
        res.resume();
        resolve(req);
        return;
      }
      res.setEncoding("utf8");
      let buffer = "";
      res.on("data", (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (data !== undefined) onEvent(data, at);
        }
      });
      resolve(req);
    });
    req.on("error", reject);
  });
}

/** `count` streams of one key, 50 connecting at a time. */
export async function openMany(url: string, key: string, count: number, agent: http.Agent): Promise<http.ClientRequest[]> {
  const opened: http.ClientRequest[] = [];
  for (let i = 0; i < count; i += 50) {
    opened.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => openStream(url, key, agent)))));
  }
  return opened;
}

/**
 * The fan-out's readers: a process of their own at the lowest priority (so that reading 1,000 streams
 * neither slows this process's timing of the writes nor takes the instances' CPU first), raw sockets
 * counting bytes. Resolves once every stream answered 200; `stop()` closes them and tells what came.
 */
const READERS = `
const net = require("node:net");
const [url, key, count] = process.argv.slice(1);
const { hostname, port } = new URL(url);
const buffer = Buffer.alloc(65536);
let bytes = 0, closed = 0, opened = 0;
const sockets = [];
const open = () => new Promise((resolve, reject) => {
  let first = true;
  const socket = net.connect({ host: hostname, port: Number(port), onread: { buffer, callback: (n) => {
    bytes += n;
    if (first) {
      first = false;
      if (buffer.toString("latin1", 0, 12) !== "HTTP/1.1 200") reject(new Error("stream answered " + buffer.toString("latin1", 0, 12)));
      else resolve();
    }
  } } });
  socket.on("error", reject);
  socket.on("close", () => closed++);
  socket.write("GET /api/events?types=reward_log.created HTTP/1.1\\r\\nHost: bench\\r\\nX-API-Key: " + key + "\\r\\n\\r\\n");
  sockets.push(socket);
});
(async () => {
  for (let i = 0; i < Number(count); i += 50) await Promise.all(Array.from({ length: Math.min(50, Number(count) - i) }, open));
  opened = sockets.length;
  process.send({ opened });
})().catch((error) => { console.error(error); process.exit(1); });
process.on("message", () => {
  const open = sockets.length - closed;
  for (const s of sockets) s.destroy();
  process.send({ bytes, cutOff: opened - open }, () => process.exit(0));
});
`;

export async function readers(url: string, key: string, count: number): Promise<{ pid: number; stop(): Promise<{ bytes: number; cutOff: number }> }> {
  const child = spawn(process.execPath, ["-e", READERS, url, key, String(count)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  os.setPriority(child.pid!, 19);
  const next = () =>
    new Promise<Record<string, number>>((resolve, reject) => {
      child.once("message", (m) => resolve(m as Record<string, number>));
      child.once("exit", (code) => reject(new Error(`stream readers exited with ${code}`)));
    });
  await next();
  return {
    pid: child.pid!,
    async stop() {
      const report = next();
      child.send("stop");
      const { bytes, cutOff } = await report;
      return { bytes: bytes!, cutOff: cutOff! };
    },
  };
}
