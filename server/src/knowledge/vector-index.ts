import { decodeVector } from './embeddings.js';

/** A base's vectors, one row of `dims` numbers per chunk, as read from the store. */
interface Matrix {
  fingerprint: string;
  ids: string[];
  dims: number;
  values: Float32Array;
}

/** Bases whose vectors this node keeps in memory, the least recently searched dropped first. */
const BASES = 16;

/**
 * Nearest passages by meaning (README, Answers from your documents): each base's chunk vectors
 * held in memory (every node its own copy, read again when the base's vectors change, which a cheap
 * count tells) and compared whole, since neither store here has a vector index.
 */
export class VectorIndex {
  readonly #bases = new Map<string, Matrix>();

  async nearest(
    baseId: string,
    query: Float32Array,
    limit: number,
    store: { fingerprint(): Promise<string>; vectors(): Promise<{ id: string; embedding: string }[]> },
  ): Promise<{ id: string; similarity: number }[]> {
    const fingerprint = await store.fingerprint();
    let matrix = this.#bases.get(baseId);
    if (matrix?.fingerprint !== fingerprint) {
      matrix = matrixOf(fingerprint, await store.vectors(), query.length);
      this.#bases.delete(baseId);
      this.#bases.set(baseId, matrix);
      if (this.#bases.size > BASES) this.#bases.delete(this.#bases.keys().next().value!);
    } else {
      this.#bases.delete(baseId);
      this.#bases.set(baseId, matrix);
    }
    if (matrix.dims !== query.length) return [];
    const best: { id: string; similarity: number }[] = [];
    for (let row = 0; row < matrix.ids.length; row++) {
      let dot = 0;
      const at = row * matrix.dims;
      for (let i = 0; i < matrix.dims; i++) dot += matrix.values[at + i]! * query[i]!;
      if (best.length < limit || dot > best.at(-1)!.similarity) {
        best.push({ id: matrix.ids[row]!, similarity: dot });
        best.sort((a, b) => b.similarity - a.similarity);
        if (best.length > limit) best.pop();
      }
    }
    return best;
  }
}

/** The rows of the query's length (a model changed midway leaves others, skipped until embedded again). */
function matrixOf(fingerprint: string, rows: { id: string; embedding: string }[], dims: number): Matrix {
  const vectors = rows
    .map((r) => ({ id: r.id, vector: decodeVector(r.embedding) }))
    .filter((r) => r.vector.length === dims);
  const values = new Float32Array(vectors.length * dims);
  vectors.forEach((r, i) => values.set(r.vector, i * dims));
  return { fingerprint, ids: vectors.map((r) => r.id), dims, values };
}
