import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly json: any;
}

export interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/**
 * A real HTTP receiver on 127.0.0.1 recording every POST. `respond` decides each answer
 * (default 200); `stop()` closes the port (connections are refused) and `start()` reopens the same port.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  /** null holds the request open without answering (until the sender gives up or dies). */
  respond: (request: Received, n: number) => Answer | null = () => ({ status: 200 });
  private server: Server | undefined;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const received = { headers: req.headers, body, json };
        this.received.push(received);
        const answer = this.respond(received, this.received.length);
        if (answer === null) return;
        res.writeHead(answer.status, { connection: 'close', ...answer.headers });
        res.end(answer.body ?? '');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Received bodies by `webhook-id`. */
  byId(): Map<string, Received[]> {
    const out = new Map<string, Received[]>();
    for (const r of this.received) {
      const id = String(r.headers['webhook-id']);
      out.set(id, [...(out.get(id) ?? []), r]);
    }
    return out;
  }
}
