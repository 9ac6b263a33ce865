import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { type WebSocket, WebSocketServer } from 'ws';
import { type ReplyWriter, replyWriterFor, type ResolvedTurn } from '../concierge/store-floor.js';
import { printListening } from './fixed-list.js';

/**
 * The floor for reply latency: a POST's body is pushed as is to the connected socket. With
 * BARE_EXPRESS=1 the same handler sits behind an Express 5 route, to show what the framework
 * alone costs the reply. With BARE_STORE (a SQLite file or a `postgres://` URL) and BARE_TURNS (a
 * JSON file of the turns the service resolved), each POST first stores what the service stores
 * for a reply, for the next of those turns, in a bare transaction: the durable floor.
 */
const durable = process.env.BARE_STORE
  ? {
      store: process.env.BARE_STORE,
      turns: JSON.parse(readFileSync(process.env.BARE_TURNS!, 'utf8')) as ResolvedTurn[],
    }
  : undefined;
const writer: ReplyWriter | undefined = durable && (await replyWriterFor(durable.store, durable.turns));
let next = 0;
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
let peer: WebSocket | undefined;
wss.on('connection', (ws) => {
  peer = ws;
});

function push(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    if (writer) await writer.write(durable!.turns[next++ % durable!.turns.length]!);
    peer?.send(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(202, { 'content-type': 'application/json' }).end('{"success":true}');
  });
}

let handler = push;
if (process.env.BARE_EXPRESS) {
  const app = express();
  app.post('/embed/concierge/:id/replies', push);
  handler = app as unknown as typeof push;
}
const server = createServer(handler);
server.on('upgrade', (req, socket, head) =>
  wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)),
);
server.listen(0, '127.0.0.1', () => printListening((server.address() as AddressInfo).port));
