import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP endpoint on loopback for a test's scripted server (a recogniser, a synthesiser): each
 * request's whole body handed to `handle`, how it answers in `state.behaviour` (a test may swap it),
 * and the responses a client cut off before they ended counted in `state.aborted`.
 */
export async function loopbackEndpoint<B>(
  path: string,
  behaviour: B,
  handle: (body: Buffer, req: IncomingMessage, res: ServerResponse, behaviour: B) => void,
) {
  const state = { behaviour, aborted: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    res.on('close', () => {
      if (!res.writableFinished) state.aborted++;
    });
    req.on('end', () => handle(Buffer.concat(chunks), req, res, state.behaviour));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
