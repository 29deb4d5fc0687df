import { once } from "node:events";
import net, { type Server } from "node:net";
import { OperatorError } from "../core/operator-error.js";

/** A listener that could not open: names the variable that chose its address. */
export class ListenError extends OperatorError {}

/**
 * Listens on host:port. When the address is taken or refused, the error says
 * which variable set it, so that an operator starting a second instance on
 * one host knows what to change.
 */
export async function listen(server: Server, port: number, host: string, variable: "PORT" | "METRICS_PORT"): Promise<void> {
  server.listen(port, host);
  try {
    await once(server, "listening");
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== "EADDRINUSE" && code !== "EACCES" && code !== "EADDRNOTAVAIL") throw error;
    const why = code === "EADDRINUSE" ? "the address is in use (another instance?)" : code === "EACCES" ? "permission denied" : "no such address here";
    const hint = variable === "METRICS_PORT" ? "set METRICS_PORT to a free port, 0 for any, or off" : "set PORT to a free port, or 0 for any";
    throw new ListenError(`Cannot listen on ${host}:${port} (${variable}=${port}): ${why} (${code}); ${hint}`, { cause: error });
  }
}

/**
 * Binds now, accepts later, for the metrics listeners: a start takes its ports before it writes anything
 * (migrations, the first user and its key), so that one that cannot listen leaves the database as it was.
 * Until `accept()`, a connection is closed as soon as it arrives (Node 22 and later close connections over
 * a maxConnections of 0), as if nothing listened yet. The API's listener answers 503 STARTING instead (server.ts).
 */
export async function bindFirst(server: Server, port: number, host: string, variable: "PORT" | "METRICS_PORT"): Promise<() => void> {
  const limit = server.maxConnections;
  server.maxConnections = 0;
  await listen(server, port, host, variable);
  return () => {
    server.maxConnections = limit;
  };
}

/** Whether host:port can be listened on now (throws the ListenError if not); for a process that listens later, elsewhere. */
export async function checkPort(port: number, host: string, variable: "PORT" | "METRICS_PORT"): Promise<void> {
  const probe = net.createServer();
  await listen(probe, port, host, variable);
  await new Promise((resolve) => probe.close(resolve));
}
