import net from 'node:net';

/**
 * A TCP forwarder in front of a shared test server (PostgreSQL, Redis) that tests can take down
 * and bring back on the same port, or make stop answering, to simulate the server going away or
 * hanging and returning without touching the shared server.
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  /** While held, what either side sent, in order, to be delivered on release(). */
  private held: (() => void)[] | undefined;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<number> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      this.forward(client, upstream);
      this.forward(upstream, client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
    return this.port;
  }

  /**
   * Keeps every connection open but delivers nothing in either direction until release(), like
   * a server that stopped answering or a network that drops packets.
   */
  hold(): void {
    this.held ??= [];
  }

  /** Delivers what was held, in order, and forwards as usual again. */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const deliver of held) deliver();
  }

  private forward(from: net.Socket, to: net.Socket): void {
    const later = (deliver: () => void) => (this.held ? this.held.push(deliver) : deliver());
    from.on('data', (chunk: Buffer) => later(() => to.write(chunk)));
    from.on('end', () => later(() => to.end()));
  }

  /** Refuses new connections and cuts every open one, like a server that went down. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
