import type { AuditTrail } from '../audit/audit-trail.js';
import { type RouteDef, defineRoute } from '../http/route.js';
import { deletedSchema, idParams } from '../shared/schemas.js';
import {
  chunkSchema,
  type CreateDocumentInput,
  createDocumentBody,
  createKnowledgeBaseBody,
  KNOWLEDGE_LIMITS,
  documentParams,
  documentSchema,
  foundChunkSchema,
  knowledgeBaseSchema,
  listQuery,
  retrievalSchema,
  searchQuery,
  updateDocumentBody,
  updateKnowledgeBaseBody,
  type UploadDocumentFields,
  uploadDocumentFields,
} from './knowledge.schemas.js';
import type { KnowledgeService } from './knowledge.service.js';

/** README, Answers from your documents. */
export function knowledgeRoutes(knowledge: KnowledgeService, trail: AuditTrail): RouteDef[] {
  const tag = 'Knowledge bases';
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/knowledge-bases',
      operationId: 'listKnowledgeBases',
      summary: 'List knowledge bases, newest first',
      tag,
      query: listQuery,
      success: { status: 200, description: 'A page of knowledge bases', data: knowledgeBaseSchema.array(), list: true },
      handler: ({ principal, query }) => knowledge.listBases(principal.customerId, query),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/knowledge-bases',
      operationId: 'createKnowledgeBase',
      summary: 'Create a knowledge base (at most 100 per customer)',
      tag,
      body: createKnowledgeBaseBody,
      errors: ['invalid_state'],
      success: { status: 201, description: 'The knowledge base', data: knowledgeBaseSchema },
      handler: async (ctx) => ({ data: await knowledge.createBase(ctx.principal.customerId, ctx.body, trail.by(ctx)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/knowledge-bases/:id',
      operationId: 'getKnowledgeBase',
      summary: 'Get a knowledge base',
      tag,
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The knowledge base', data: knowledgeBaseSchema },
      handler: async ({ principal, params }) => ({ data: await knowledge.getBase(principal.customerId, params.id) }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/knowledge-bases/:id',
      operationId: 'updateKnowledgeBase',
      summary: 'Rename a knowledge base',
      tag,
      params: idParams,
      body: updateKnowledgeBaseBody,
      errors: ['not_found'],
      success: { status: 200, description: 'The knowledge base', data: knowledgeBaseSchema },
      handler: async (ctx) => ({
        data: await knowledge.updateBase(ctx.principal.customerId, ctx.params.id, ctx.body, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/knowledge-bases/:id',
      operationId: 'deleteKnowledgeBase',
      summary: 'Delete a knowledge base with every document and passage it holds',
      tag,
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'Deleted', data: deletedSchema },
      handler: async (ctx) => ({
        data: await knowledge.deleteBase(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/knowledge-bases/:id/documents',
      operationId: 'listKnowledgeDocuments',
      summary: "List a knowledge base's documents, newest first",
      tag,
      params: idParams,
      query: listQuery,
      errors: ['not_found'],
      success: { status: 200, description: 'A page of documents', data: documentSchema.array(), list: true },
      handler: ({ principal, params, query }) => knowledge.listDocuments(principal.customerId, params.id, query),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/knowledge-bases/:id/documents',
      operationId: 'addKnowledgeDocument',
      summary:
        'Add a document: text, Markdown or HTML as JSON, a page fetched from a URL, or a file (.txt, .md, .html, .pdf; at most 5 MB) as multipart/form-data. It is cut into passages at once',
      tag,
      params: idParams,
      body: createDocumentBody,
      upload: {
        limit: KNOWLEDGE_LIMITS.fileBytes,
        fields: uploadDocumentFields,
        description: 'The file: .txt, .md, .html or .pdf, at most 5 MB',
      },
      errors: ['not_found', 'invalid_state', 'quota_exceeded', 'payload_too_large', 'rate_limited'],
      success: { status: 201, description: 'The document, with how many passages it gave', data: documentSchema },
      handler: async (ctx) => ({
        data: ctx.file
          ? await knowledge.addFile(
              ctx.principal.customerId,
              ctx.params.id,
              ctx.file,
              ctx.body as UploadDocumentFields,
              trail.by(ctx),
            )
          : await knowledge.addDocument(
              ctx.principal.customerId,
              ctx.params.id,
              ctx.body as CreateDocumentInput,
              trail.by(ctx),
            ),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/knowledge-bases/:id/documents/:document_id/refresh',
      operationId: 'refreshKnowledgeDocument',
      summary:
        "Fetch a URL document's page again now (conditionally): changed, it is cut again; unchanged, it stays; a failure is kept in `fetch_error`",
      tag,
      params: documentParams,
      errors: ['not_found', 'invalid_state', 'quota_exceeded', 'rate_limited'],
      success: { status: 200, description: 'The document after the fetch', data: documentSchema },
      handler: async (ctx) => ({
        data: await knowledge.refreshDocument(
          ctx.principal.customerId,
          ctx.params.id,
          ctx.params.document_id,
          trail.by(ctx),
        ),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/knowledge-bases/:id/documents/:document_id',
      operationId: 'getKnowledgeDocument',
      summary: 'Get a document',
      tag,
      params: documentParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The document', data: documentSchema },
      handler: async ({ principal, params }) => ({
        data: await knowledge.getDocument(principal.customerId, params.id, params.document_id),
      }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/knowledge-bases/:id/documents/:document_id',
      operationId: 'updateKnowledgeDocument',
      summary: 'Change a document: it is cut again and its passages replaced at once',
      tag,
      params: documentParams,
      body: updateDocumentBody,
      errors: ['not_found', 'invalid_state', 'quota_exceeded', 'rate_limited'],
      success: { status: 200, description: 'The document', data: documentSchema },
      handler: async (ctx) => ({
        data: await knowledge.updateDocument(
          ctx.principal.customerId,
          ctx.params.id,
          ctx.params.document_id,
          ctx.body,
          trail.by(ctx),
        ),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/knowledge-bases/:id/documents/:document_id',
      operationId: 'deleteKnowledgeDocument',
      summary: 'Delete a document and its passages',
      tag,
      params: documentParams,
      errors: ['not_found'],
      success: { status: 200, description: 'Deleted', data: deletedSchema },
      handler: async (ctx) => ({
        data: await knowledge.deleteDocument(
          ctx.principal.customerId,
          ctx.params.id,
          ctx.params.document_id,
          trail.by(ctx),
        ),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/knowledge-bases/:id/documents/:document_id/chunks',
      operationId: 'listKnowledgeChunks',
      summary: "A document's passages, in order",
      tag,
      params: documentParams,
      errors: ['not_found'],
      success: { status: 200, description: 'Its passages', data: chunkSchema.array() },
      handler: async ({ principal, params }) => ({
        data: await knowledge.chunks(principal.customerId, params.id, params.document_id),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/knowledge-bases/:id/search',
      operationId: 'searchKnowledgeBase',
      summary: 'The passages a question finds, best first, with the words each holds',
      tag,
      params: idParams,
      query: searchQuery,
      errors: ['not_found'],
      success: {
        status: 200,
        description: 'The passages found',
        data: foundChunkSchema.array(),
        meta: retrievalSchema,
      },
      handler: async ({ principal, params, query }) => {
        const { found, how } = await knowledge.retrieval.search(principal.customerId, params.id, query.q, query.limit);
        return { data: found, meta: how };
      },
    }),
  ];
}
