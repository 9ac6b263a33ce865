import { randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { type FloorOwner, sqliteTurnWriter, type TurnWriter } from '../concierge/store-floor.js';
import { printListening } from './fixed-list.js';

/**
 * The throughput baseline: the hops of a turn with node:http and ws only, no store and no
 * checks. A user_turn frame is answered with turn_accepted, POSTed to HOOK_URL, acknowledged on
 * the 2xx, and the reply POSTed back to /replies is pushed to the socket as a reply frame. With
 * BARE_STORE (the service's SQLite file) and BARE_OWNER (JSON of its customer, deployment and
 * agent ids), each step first stores what the service stores for it, in a bare transaction: the
 * durable floor.
 */
const hookUrl = new URL(process.env.HOOK_URL!);
const store: TurnWriter | undefined = process.env.BARE_STORE
  ? sqliteTurnWriter(process.env.BARE_STORE, JSON.parse(process.env.BARE_OWNER!) as FloorOwner)
  : undefined;
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const waiting = new Map<string, { ws: WebSocket; conversationId: string }>();
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
let base = '';

wss.on('connection', (ws) => {
  const conversationId = randomUUID();
  store?.open(conversationId, `guest-${conversationId}`);
  ws.on('message', (data) => {
    const turn = JSON.parse(String(data)) as { client_turn_id: string; text: string; mode: string };
    const turnId = randomUUID();
    store?.take(conversationId, turnId, turn.client_turn_id, turn.text);
    ws.send(
      JSON.stringify({
        type: 'turn_accepted',
        turn_id: turnId,
        client_turn_id: turn.client_turn_id,
        text: turn.text,
        mode: turn.mode,
      }),
    );
    waiting.set(turnId, { ws, conversationId });
    const body = JSON.stringify({
      type: 'turn.created',
      turn_id: turnId,
      conversation_id: conversationId,
      text: turn.text,
      mode: turn.mode,
      reply_url: `${base}/replies`,
    });
    const sent = performance.now();
    const req = request(
      hookUrl,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          store?.acknowledge(conversationId, turnId, hookUrl.href, Math.round(performance.now() - sent));
          ws.send(JSON.stringify({ type: 'turn_acknowledged', turn_id: turnId }));
        });
      },
    );
    req.on('error', () => ws.send(JSON.stringify({ type: 'turn_failed', turn_id: turnId, reason: 'hook_failed' })));
    req.end(body);
  });
});

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { turn_id: string; reply_text: string };
    const turn = waiting.get(reply.turn_id);
    waiting.delete(reply.turn_id);
    if (turn) store?.resolve(turn.conversationId, reply.turn_id, reply.reply_text);
    turn?.ws.send(JSON.stringify({ type: 'reply', turn_id: reply.turn_id, text: reply.reply_text }));
    res.writeHead(202, { 'content-type': 'application/json' }).end('{"success":true}');
  });
});
server.on('upgrade', (req, socket, head) =>
  wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)),
);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  printListening(port);
});
