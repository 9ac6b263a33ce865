import { randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { printListening } from './fixed-list.js';

/**
 * The throughput baseline: the hops of a turn with node:http and ws only, no store and no
 * checks. A user_turn frame is answered with turn_accepted, POSTed to HOOK_URL, acknowledged on
 * the 2xx, and the reply POSTed back to /replies is pushed to the socket as a reply frame.
 */
const hookUrl = new URL(process.env.HOOK_URL!);
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const waiting = new Map<string, WebSocket>();
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
let base = '';

wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    const turn = JSON.parse(String(data)) as { client_turn_id: string; text: string; mode: string };
    const turnId = randomUUID();
    ws.send(JSON.stringify({ type: 'turn_accepted', turn_id: turnId, client_turn_id: turn.client_turn_id, text: turn.text, mode: turn.mode }));
    waiting.set(turnId, ws);
    const body = JSON.stringify({ type: 'turn.created', turn_id: turnId, conversation_id: turnId, text: turn.text, mode: turn.mode, reply_url: `${base}/replies` });
    const req = request(hookUrl, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => ws.send(JSON.stringify({ type: 'turn_acknowledged', turn_id: turnId })));
    });
    req.on('error', () => ws.send(JSON.stringify({ type: 'turn_failed', turn_id: turnId, reason: 'hook_failed' })));
    req.end(body);
  });
});

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { turn_id: string; reply_text: string };
    const ws = waiting.get(reply.turn_id);
    waiting.delete(reply.turn_id);
    ws?.send(JSON.stringify({ type: 'reply', turn_id: reply.turn_id, text: reply.reply_text }));
    res.writeHead(202, { 'content-type': 'application/json' }).end('{"success":true}');
  });
});
server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  printListening(port);
});
