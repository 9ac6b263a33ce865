import { z } from 'zod';
import { pageQuery } from '../http/pagination.js';
import { atLeastOneField, httpUrl, timestamp } from '../shared/schemas.js';
import { languageTag } from '#protocol/frames';
import { documentFormats, documentSources } from './knowledge.table.js';

/** Limits a customer meets with a plain error (README, Answers from your documents). */
export const KNOWLEDGE_LIMITS = {
  bases: 100,
  documents: 2_000,
  documentChars: 1_000_000,
  /** A file uploaded, or a page fetched. */
  fileBytes: 5 * 1024 * 1024,
} as const;

const name = z.string().trim().min(1, 'must not be blank').max(200);

export const knowledgeBaseSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    language: z.string().meta({ description: 'BCP 47: the language its search stems words in' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'KnowledgeBase' });
export type KnowledgeBase = z.infer<typeof knowledgeBaseSchema>;

export const createKnowledgeBaseBody = z
  .strictObject({ name, language: languageTag.default('en').meta({ description: 'Default `en`' }) })
  .meta({ id: 'CreateKnowledgeBase' });
export type CreateKnowledgeBaseInput = z.infer<typeof createKnowledgeBaseBody>;

export const updateKnowledgeBaseBody = z
  .strictObject({ name: name.optional() })
  .refine(atLeastOneField, { message: 'at least one field is required' })
  .meta({ id: 'UpdateKnowledgeBase' });

const text = z
  .string()
  .min(1)
  .max(
    KNOWLEDGE_LIMITS.documentChars,
    `must be at most ${KNOWLEDGE_LIMITS.documentChars.toLocaleString('en')} characters`,
  )
  .refine((t) => t.trim().length > 0, 'must not be blank');

export const documentSchema = z
  .object({
    id: z.uuid(),
    knowledge_base_id: z.uuid(),
    title: z.string(),
    format: z.enum(documentFormats),
    source: z.enum(documentSources).meta({ description: 'Its text given as JSON, a file uploaded, or a URL fetched' }),
    url: z.string().nullable(),
    chars: z.number().int(),
    chunk_count: z.number().int(),
    refresh_hours: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'A URL document: fetched again every this many hours; null: only when asked' }),
    fetched_at: timestamp.nullable().meta({ description: 'A URL document: when it was last fetched' }),
    fetch_error: z
      .string()
      .nullable()
      .meta({ description: 'A URL document: why its last fetch failed (the passages before it stay)' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'KnowledgeDocument' });
export type KnowledgeDocument = z.infer<typeof documentSchema>;

const givenFormats = z.enum(['text', 'markdown', 'html']);
const refreshHours = z.number().int().min(1).max(720);

export const createDocumentBody = z
  .strictObject({
    title: name.optional().meta({ description: "Required with `text`; else the page's or file's own title" }),
    text: text.optional().meta({ description: 'Its text; without it, `url` is fetched' }),
    format: givenFormats
      .default('text')
      .meta({ description: '`markdown`: cut by its headings too; `html`: read as its reader sees it' }),
    url: httpUrl.optional().meta({
      description:
        'With `text`: where readers find it (citations link there). Alone: the page to fetch (HTML, Markdown, text or PDF)',
    }),
    refresh_hours: refreshHours.optional().meta({
      description: 'A fetched page: fetch it again every this many hours (1 to 720); default only when asked',
    }),
  })
  .superRefine((body, ctx) => {
    if (body.text === undefined && body.url === undefined)
      ctx.addIssue({ code: 'custom', path: ['text'], message: 'give `text`, or a `url` to fetch' });
    if (body.text !== undefined && body.title === undefined)
      ctx.addIssue({ code: 'custom', path: ['title'], message: 'is required with `text`' });
    if (body.text !== undefined && body.refresh_hours !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['refresh_hours'],
        message: 'only for a page fetched from `url` (no `text`)',
      });
  })
  .meta({ id: 'CreateKnowledgeDocument' });
export type CreateDocumentInput = z.infer<typeof createDocumentBody>;

/** The text fields sent beside an uploaded file. */
export const uploadDocumentFields = z.object({
  title: name.optional().meta({ description: "Default: the file's own title, else its name" }),
  url: httpUrl.optional().meta({ description: "Where readers find it: its passages' citations link there" }),
});
export type UploadDocumentFields = z.infer<typeof uploadDocumentFields>;

export const updateDocumentBody = z
  .strictObject({
    title: name.optional(),
    text: text.optional().meta({ description: 'Not for a URL document (its text comes from its page)' }),
    format: givenFormats.optional(),
    url: httpUrl.nullable().optional(),
    refresh_hours: refreshHours.nullable().optional().meta({ description: 'A URL document only' }),
  })
  .refine(atLeastOneField, { message: 'at least one field is required' })
  .meta({ id: 'UpdateKnowledgeDocument' });
export type UpdateDocumentInput = z.infer<typeof updateDocumentBody>;

export const chunkSchema = z
  .object({
    id: z.uuid(),
    document_id: z.uuid(),
    position: z.number().int().meta({ description: 'From 0, in the order of the document' }),
    title: z.string().meta({ description: "The document's title" }),
    heading: z.string().meta({ description: 'The headings above it, outermost first, joined by " › "' }),
    url: z.string().nullable().meta({ description: "The document's URL, with its section's anchor" }),
    text: z.string(),
  })
  .meta({ id: 'KnowledgeChunk' });
export type KnowledgeChunk = z.infer<typeof chunkSchema>;

export const foundChunkSchema = chunkSchema
  .extend({
    score: z.number().meta({ description: 'Higher is better; comparable within one search only' }),
    matched: z.array(z.string()).meta({ description: "The question's words found in it" }),
  })
  .meta({ id: 'FoundKnowledgeChunk' });

export const retrievalSchema = z.object({
  retrieval: z.enum(['hybrid', 'full_text']).meta({
    description: '`hybrid`: by words and by meaning (EMBEDDINGS_URL), ranks fused; `full_text`: by words alone',
  }),
  embeddings_error: z
    .string()
    .optional()
    .meta({ description: 'Why the search was by words alone although EMBEDDINGS_URL is set' }),
});

export const searchQuery = z.object({
  q: z.string().trim().min(1).max(500).meta({ description: 'A question, in plain words' }),
  limit: z.coerce.number().int().min(1).max(20).default(5),
});

export const documentParams = z.object({ id: z.uuid(), document_id: z.uuid() });
export const listQuery = pageQuery;
