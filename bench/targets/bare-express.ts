import type { AddressInfo } from 'node:net';
import express from 'express';
import { fixedList, printListening } from './fixed-list.js';

const list = fixedList();
const app = express();
app.get('/api/v1/agents', (_req, res) => {
  res.json(list);
});
const server = app.listen(0, '127.0.0.1', () => printListening((server.address() as AddressInfo).port));
