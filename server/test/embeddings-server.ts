import { loopbackEndpoint } from './loopback-endpoint.js';

/**
 * Words that mean one thing: a scripted embedding model's dimensions. A text's vector counts its
 * words of each meaning, so "vehicle" lands beside "garage" although no word is shared, as a real
 * model's would, and tests can say which passage is nearest.
 */
export const MEANINGS: readonly (readonly string[])[] = [
  ['car', 'cars', 'vehicle', 'garage', 'parking', 'park', 'drive', 'charger'],
  ['breakfast', 'eat', 'food', 'meal', 'buffet', 'hungry', 'dinner', 'restaurant'],
  ['pool', 'swim', 'sauna', 'spa', 'towels', 'massage', 'relax'],
  ['dog', 'dogs', 'pet', 'pets', 'puppy', 'cat'],
  ['wifi', 'internet', 'network', 'password', 'online'],
];

export function vectorOf(text: string): number[] {
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  // A small constant keeps every vector non-zero: a text of no known meaning still has a direction.
  return [...MEANINGS.map((meaning) => words.filter((w) => meaning.includes(w)).length), 0.01];
}

export interface EmbeddingsCall {
  authorization: string | undefined;
  body: { model: string; input: string[] };
}

/**
 * An OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`) answering as OpenAI documents it:
 * `{object: "list", data: [{object: "embedding", index, embedding}], model, usage}`. `down` makes it
 * answer 500, as a server that is failing does.
 */
export async function startEmbeddingsServer() {
  const calls: EmbeddingsCall[] = [];
  const endpoint = await loopbackEndpoint('/v1/embeddings', { down: false }, (raw, req, res, behaviour) => {
    const body = JSON.parse(raw.toString('utf8')) as EmbeddingsCall['body'];
    calls.push({ authorization: req.headers.authorization, body });
    if (behaviour.down) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"overloaded"}}');
      return;
    }
    const input = Array.isArray(body.input) ? body.input : [body.input];
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        object: 'list',
        // Listed in reverse: the client must place each by its index.
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) })).reverse(),
        model: body.model,
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      }),
    );
  });
  return {
    baseUrl: endpoint.url.replace(/\/embeddings$/, ''),
    calls,
    set down(value: boolean) {
      endpoint.state.behaviour.down = value;
    },
    close: endpoint.close,
  };
}
