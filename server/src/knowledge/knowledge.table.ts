/** A customer's knowledge base (README, Answers from your documents): documents an agent answers from. */
export interface KnowledgeBaseTable {
  id: string;
  customer_id: string;
  name: string;
  /** BCP 47: the language its full-text search stems words in. */
  language: string;
  created_at: string;
  updated_at: string;
}

export const documentFormats = ['text', 'markdown'] as const;
export type DocumentFormat = (typeof documentFormats)[number];

export interface KnowledgeDocumentTable {
  id: string;
  base_id: string;
  customer_id: string;
  title: string;
  format: DocumentFormat;
  /** Where the document lives for readers: its citations link there. */
  url: string | null;
  /** Its text as given: cut again when its title, format or URL change. */
  text: string;
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
  created_at: string;
}
