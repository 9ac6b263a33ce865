import { type EgressPolicy, guardedPost } from '../shared/egress.js';

export interface EmbeddingsSettings {
  /** The base URL (`…/v1`): requests go to `{url}/embeddings`. */
  url: string;
  model: string;
  key: string | undefined;
}

/** Texts per request: well inside every OpenAI-compatible server's batch limit. */
const BATCH = 64;
/** An answer's largest size: 64 texts of 3,072 numbers as JSON. */
const ANSWER_LIMIT = 16 * 1024 * 1024;

/** A vector as it is stored: Float32, little-endian, base64. */
export const encodeVector = (vector: Float32Array): string =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const copy = new Uint8Array(bytes.length - (bytes.length % 4));
  copy.set(bytes.subarray(0, copy.length));
  return new Float32Array(copy.buffer);
}

/** Scaled to length 1, so a dot product is the cosine. */
function normalised(values: readonly number[]): Float32Array {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (const v of vector) sum += v * v;
  const length = Math.sqrt(sum) || 1;
  for (let i = 0; i < vector.length; i++) vector[i]! /= length;
  return vector;
}

/**
 * An OpenAI-compatible embeddings endpoint (README, Answers from your documents: `EMBEDDINGS_URL`):
 * `POST {url}/embeddings {model, input: [...]}` answered `{data: [{index, embedding}]}`, called
 * through the egress guard. Rejects with a plain reason when it cannot give every vector.
 */
export class Embeddings {
  constructor(
    private readonly settings: EmbeddingsSettings,
    private readonly egress: EgressPolicy,
  ) {}

  async embed(texts: readonly string[], timeoutMs: number): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let at = 0; at < texts.length; at += BATCH)
      vectors.push(...(await this.#batch(texts.slice(at, at + BATCH), timeoutMs)));
    return vectors;
  }

  async #batch(input: readonly string[], timeoutMs: number): Promise<Float32Array[]> {
    const body = JSON.stringify({ model: this.settings.model, input });
    const chunks: Buffer[] = [];
    let size = 0;
    const response = await guardedPost(
      `${this.settings.url}/embeddings`,
      body,
      {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'concierge-knowledge/1',
        ...(this.settings.key ? { authorization: `Bearer ${this.settings.key}` } : {}),
      },
      timeoutMs,
      this.egress,
      undefined,
      {
        wanted: (status) => status === 200,
        data: (chunk) => {
          size += chunk.length;
          if (size <= ANSWER_LIMIT) chunks.push(chunk);
        },
      },
    );
    if (response.status !== 200) throw new Error(`the embeddings endpoint answered ${response.status}`);
    if (size > ANSWER_LIMIT) throw new Error('the embeddings endpoint answered more than 16 MB');
    let parsed: { data?: { index?: number; embedding?: unknown }[] };
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new Error('the embeddings endpoint answered something other than JSON');
    }
    const vectors: Float32Array[] = [];
    for (const [i, item] of (parsed.data ?? []).entries()) {
      const embedding = item.embedding;
      if (!Array.isArray(embedding) || !embedding.length || !embedding.every((n) => typeof n === 'number'))
        throw new Error('the embeddings endpoint answered an item with no vector of numbers');
      vectors[item.index ?? i] = normalised(embedding);
    }
    if (vectors.length !== input.length || vectors.includes(undefined as never))
      throw new Error(`the embeddings endpoint gave ${parsed.data?.length ?? 0} vectors for ${input.length} texts`);
    return vectors;
  }
}
