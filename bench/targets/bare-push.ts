import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { printListening } from './fixed-list.js';

/** The floor for reply latency: a POST's body is pushed as is to the connected socket. */
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
let peer: WebSocket | undefined;
wss.on('connection', (ws) => {
  peer = ws;
});

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    peer?.send(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(202, { 'content-type': 'application/json' }).end('{"success":true}');
  });
});
server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)));
server.listen(0, '127.0.0.1', () => printListening((server.address() as AddressInfo).port));
