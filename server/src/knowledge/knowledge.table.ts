/** A customer's knowledge base (README, Answers from your documents): documents an agent answers from. */
export interface KnowledgeBaseTable {
  id: string;
  customer_id: string;
  name: string;
  /** BCP 47: the language its full-text search stems words in. */
  language: string;
  /** SQLite: its range of the search index's rowids (this times 2^32), and the next rowid in it. */
  search_slot: number;
  next_search_row: number;
  created_at: string;
  updated_at: string;
}

export const documentFormats = ['text', 'markdown', 'html', 'pdf'] as const;
export type DocumentFormat = (typeof documentFormats)[number];

/** How a document came: its text in JSON, a file, or a URL fetched (and refreshed). */
export const documentSources = ['text', 'file', 'url'] as const;
export type DocumentSource = (typeof documentSources)[number];

export interface KnowledgeDocumentTable {
  id: string;
  base_id: string;
  customer_id: string;
  title: string;
  format: DocumentFormat;
  /** Where the document lives for readers: its citations link there. */
  url: string | null;
  /** Its text as read (an HTML page's as Markdown, a PDF's pages): cut again when its title or URL change. */
  text: string;
  source: DocumentSource;
  /** URL documents: fetched again every this many hours (null: only when asked). */
  refresh_hours: number | null;
  etag: string | null;
  last_modified: string | null;
  fetched_at: string | null;
  next_fetch_at: string | null;
  /** Why the last fetch failed (the passages of the one before stay); null once one succeeds. */
  fetch_error: string | null;
  /** The characters of its text, and the passages it was cut into. */
  chars: number;
  chunk_count: number;
  created_at: string;
  updated_at: string;
}

/** A passage of a document, searched on its own (SQLite: `knowledge_search`; PostgreSQL: `search`). */
export interface KnowledgeChunkTable {
  id: string;
  document_id: string;
  base_id: string;
  customer_id: string;
  position: number;
  title: string;
  heading: string;
  url: string | null;
  text: string;
  /** Its vector from the embeddings endpoint (Float32, base64), where one is configured. */
  embedding: string | null;
  created_at: string;
}
