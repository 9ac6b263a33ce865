import { type AddressInfo, createServer, type Server, type Socket, connect } from 'node:net';

/** One browser connection through the relay and its twin to the service. */
interface Link {
  browser: Socket;
  service: Socket;
  /** A widget's WebSocket, told apart by its upgrade request; the faults touch only these. */
  widget: boolean;
  /** Forwards nothing either way and closes nothing: a connection that died without a word. */
  stalled: boolean;
}

/**
 * A TCP relay between the browser and the service, standing where a visitor's network would: it
 * forwards bytes untouched until a test breaks the widget's connections in one of the ways real
 * networks do. Connections made after a fault are forwarded normally again.
 */
export class Relay {
  private readonly links = new Set<Link>();
  private loseConfirmation = false;
  /** Confirmations lost so far. */
  lost = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: URL): Promise<Relay> {
    const relay: { value?: Relay } = {};
    const server = createServer((browser) => relay.value!.forward(browser, Number(target.port), target.hostname));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    relay.value = new Relay(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return relay.value;
  }

  /** Every open widget connection is reset (TCP RST), as when a router drops its state. */
  reset(): number {
    const widgets = this.widgetLinks();
    for (const link of widgets) this.cut(link);
    return widgets.length;
  }

  /** Every open widget connection goes silent both ways and stays open, as on a phone leaving Wi-Fi. */
  stall(): number {
    const widgets = this.widgetLinks();
    for (const link of widgets) link.stalled = true;
    return widgets.length;
  }

  /** The next `turn_accepted` the service sends is lost with the connection that carried it. */
  loseNextConfirmation(): void {
    this.loseConfirmation = true;
  }

  async close(): Promise<void> {
    for (const link of this.links) this.cut(link);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private widgetLinks(): Link[] {
    return [...this.links].filter((l) => l.widget && !l.stalled);
  }

  private forward(browser: Socket, port: number, host: string): void {
    const link: Link = { browser, service: connect(port, host), widget: false, stalled: false };
    this.links.add(link);
    let first = true;
    browser.on('data', (chunk: Buffer) => {
      if (first) link.widget = /^GET \/embed\/concierge\/[^ ]+\/ws /.test(chunk.toString('latin1', 0, 200));
      first = false;
      if (!link.stalled) link.service.write(chunk);
    });
    link.service.on('data', (chunk: Buffer) => {
      if (link.stalled) return;
      // Server frames are unmasked and uncompressed: the event type is plain in the bytes.
      if (link.widget && this.loseConfirmation && chunk.includes('"type":"turn_accepted"')) {
        this.loseConfirmation = false;
        this.lost++;
        return this.cut(link);
      }
      link.browser.write(chunk);
    });
    const browserGone = () => this.cut(link);
    // A stalled connection says nothing to the browser, whatever happens behind it.
    const serviceGone = () => {
      if (!link.stalled) this.cut(link);
    };
    browser.on('close', browserGone);
    browser.on('error', browserGone);
    link.service.on('close', serviceGone);
    link.service.on('error', serviceGone);
  }

  private cut(link: Link): void {
    this.links.delete(link);
    link.service.destroy();
    if (!link.browser.destroyed) link.browser.resetAndDestroy();
  }
}
