import { once } from "node:events";
import net from "node:net";

/**
 * A TCP proxy the test controls, in front of a real server: `cut()` resets
 * every connection and refuses new ones (the server is gone), `blackhole()`
 * resets them and then accepts new ones that never answer (a network
 * partition), `stall()` keeps them open but forwards nothing more (a server
 * that hangs), `restore()` forwards again. `stalledBytes` counts what
 * clients sent while stalled (the commands a stalled server was asked).
 */
export class TcpProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly pairs = new Set<[client: net.Socket, upstream: net.Socket]>();
  private mode: "forward" | "refuse" | "blackhole" | "stall" = "forward";
  port = 0;
  stalledBytes = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = net.createServer((client) => this.accept(client));
  }

  async listen(): Promise<this> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  private accept(client: net.Socket): void {
    client.on("error", () => undefined);
    if (this.mode === "refuse") {
      client.resetAndDestroy();
      return;
    }
    this.track(client);
    if (this.mode === "stall") this.countStalled(client);
    if (this.mode === "blackhole" || this.mode === "stall") return; // Held open, never answered.
    const upstream = net.connect(this.targetPort, this.targetHost);
    upstream.on("error", () => client.destroy());
    this.track(upstream);
    client.pipe(upstream).pipe(client);
    this.pairs.add([client, upstream]);
    client.on("close", () => this.pairs.forEach((pair) => pair[0] === client && this.pairs.delete(pair)));
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
  }

  private dropAll(): void {
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
  }

  cut(): void {
    this.mode = "refuse";
    this.dropAll();
  }

  blackhole(): void {
    this.mode = "blackhole";
    this.dropAll();
  }

  stall(): void {
    this.mode = "stall";
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      this.countStalled(client);
    }
  }

  private countStalled(client: net.Socket): void {
    client.on("data", (chunk: Buffer) => {
      if (this.mode === "stall") this.stalledBytes += chunk.length;
    });
    client.resume();
  }

  restore(): void {
    this.dropAll();
    this.mode = "forward";
  }

  async close(): Promise<void> {
    this.dropAll();
    this.server.close();
    await once(this.server, "close");
  }
}
