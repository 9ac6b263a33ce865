import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixedList, printListening } from './fixed-list.js';

const list = fixedList();
const server = createServer((_req, res) => {
  const body = JSON.stringify(list);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => printListening((server.address() as AddressInfo).port));
