import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { printListening } from './fixed-list.js';

/** Idle-memory baseline: a bare ws server that holds every connection and does nothing else. */
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
const server = createServer((_req, res) => res.writeHead(404).end());
server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, () => {}));
server.listen(0, '127.0.0.1', () => printListening((server.address() as AddressInfo).port));
