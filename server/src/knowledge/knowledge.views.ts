import type { KnowledgeBaseRow, KnowledgeChunkRow, ListedDocument } from './knowledge.repository.js';
import type { KnowledgeBase, KnowledgeChunk, KnowledgeDocument } from './knowledge.schemas.js';

// Knowledge as the API shows it (README, Answers from your documents).

export const toBase = (row: Omit<KnowledgeBaseRow, 'search_slot' | 'next_search_row'>): KnowledgeBase => ({
  id: row.id,
  name: row.name,
  language: row.language,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export const toDocument = (row: ListedDocument): KnowledgeDocument => ({
  id: row.id,
  knowledge_base_id: row.base_id,
  title: row.title,
  format: row.format,
  source: row.source,
  url: row.url,
  chars: row.chars,
  chunk_count: row.chunk_count,
  refresh_hours: row.refresh_hours,
  fetched_at: row.fetched_at,
  fetch_error: row.fetch_error,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export const toChunk = (row: KnowledgeChunkRow): KnowledgeChunk => ({
  id: row.id,
  document_id: row.document_id,
  position: row.position,
  title: row.title,
  heading: row.heading,
  url: row.url,
  text: row.text,
});
