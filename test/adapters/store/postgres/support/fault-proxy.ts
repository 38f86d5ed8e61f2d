import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can cut a connection at a chosen moment:
 * - `dropNextReply()`: the next bytes the server sends on any connection are thrown away and that connection is
 *   closed on both sides: the server has run (and, for an autocommit statement, committed) what it was sent, and
 *   the client never hears of it;
 * - `dropNextRequest()`: the next bytes a client sends are thrown away and the connection closed: the server never
 *   sees the statement.
 */
export class PgFaultProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #dropReply = false;
  #dropRequest = false;
  #fired = 0;

  constructor(
    private readonly target: { readonly host: string; readonly port: number },
  ) {
    this.#server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      this.#sockets.add(client).add(upstream);
      const cut = (): void => {
        this.#fired++;
        client.destroy();
        upstream.destroy();
      };
      client.on('data', (chunk) => {
        if (this.#dropRequest) {
          this.#dropRequest = false;
          cut();
        } else upstream.write(chunk);
      });
      upstream.on('data', (chunk) => {
        if (this.#dropReply) {
          this.#dropReply = false;
          cut();
        } else client.write(chunk);
      });
      const close = (): void => {
        client.destroy();
        upstream.destroy();
        this.#sockets.delete(client);
        this.#sockets.delete(upstream);
      };
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as net.AddressInfo).port;
  }

  dropNextReply(): void {
    this.#dropReply = true;
  }
  dropNextRequest(): void {
    this.#dropRequest = true;
  }
  /** How many connections were cut. */
  get fired(): number {
    return this.#fired;
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
