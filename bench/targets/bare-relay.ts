import { request } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { printListening } from './fixed-list.js';

/**
 * The models scenario's baseline: a bare relay of a model's stream. Each socket message `{url,
 * body}` is POSTed to the model, and each `data:` event of its server-sent events is parsed and its
 * words sent on the socket as they come (`{type: "delta", text}`), then `{type: "done"}`: the least a
 * service streaming a model's reply to a visitor must do.
 */
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    const { url, body } = JSON.parse(String(data)) as { url: string; body: string };
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        const events = pending.split('\n\n');
        pending = events.pop()!;
        for (const event of events) {
          const payload = event.slice('data: '.length);
          if (payload === '[DONE]') continue;
          const text = (JSON.parse(payload) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta
            ?.content;
          if (text) ws.send(JSON.stringify({ type: 'delta', text }));
        }
      });
      res.on('end', () => ws.send(JSON.stringify({ type: 'done' })));
    });
    req.end(body);
  });
});
const server = createServer((_req, res) => res.writeHead(404).end());
server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws)));
server.listen(0, '127.0.0.1', () => printListening((server.address() as AddressInfo).port));
