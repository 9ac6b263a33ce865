// A customer's server on the Node SDK, as the SDK's tests run it (sdk/sdk.test.ts): the hook,
// visitors' tokens, and the tools a person at the front desk uses. Settings from the environment:
// CONCIERGE_SECRETS (comma-separated, the current one first), DEPLOYMENT_ID, CONCIERGE_URL,
// CONCIERGE_API_KEY, PORT (0: any), STREAM_EVERY_MS.
import { createServer } from 'node:http';
import { ConciergeClient, mintUserToken, nodeHandler, type TranscriptEvent } from '../src/index.js';

const env = process.env;
const secrets = (env.CONCIERGE_SECRETS ?? '').split(',');
const client = new ConciergeClient({
  secret: secrets[0],
  apiKey: env.CONCIERGE_API_KEY,
  baseUrl: env.CONCIERGE_URL,
  retry: { attempts: 40, maxDelayMs: 500 },
  onRetry: (failure, attempt) => console.log(`retry ${attempt} after ${failure.status ?? failure.code}`),
});
const events: TranscriptEvent[] = [];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function* written(text: string) {
  for (const word of text.split(/(?<= )/)) {
    yield word;
    await pause(Number(env.STREAM_EVERY_MS ?? 0));
  }
}

const hook = nodeHandler({
  secrets,
  client,
  onTurn: (turn) => {
    if (/person/i.test(turn.text))
      return { reply_text: 'I am asking the front desk to join.', handoff: { reason: 'The guest asked for a person' } };
    if (/stream/i.test(turn.text)) return written(`One two three four five six seven eight, for "${turn.text}".`);
    return `You said: ${turn.text}`;
  },
  onEvent: (event) => void events.push(event),
  // A model agent's tool (README, An agent without a server): its arguments match the tool's schema.
  onTool: (call) =>
    call.tool === 'check_room' ? { night: call.arguments.night, free: call.arguments.night !== 'Saturday' } : null,
});

/** The front desk's own tools, which a person's screen would call. */
const tools: Record<string, (body: any) => Promise<unknown>> = {
  '/token': async (body) => ({
    token: mintUserToken({
      deploymentId: env.DEPLOYMENT_ID!,
      secret: secrets[0]!,
      sub: body.sub,
      name: 'Guest',
      ctx: { room: '214' },
    }),
  }),
  '/takeover': (body) => client.takeover(body.conversation_id, body.name),
  '/release': (body) => client.release(body.conversation_id),
  '/answer': (body) => client.personReply(body.conversation_id, body.turn_id, body.text),
  '/events': async () => events,
};

const server = createServer(async (req, res) => {
  if (req.url === '/hook' || req.url === '/transcript' || req.url === '/tool') return hook(req, res);
  const tool = tools[req.url ?? ''];
  if (!tool) return res.writeHead(404).end();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const result = await tool(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result ?? null));
  } catch (err) {
    res
      .writeHead(502, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: String(err), code: (err as { code?: string }).code }));
  }
});
server.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`Hotel at http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
