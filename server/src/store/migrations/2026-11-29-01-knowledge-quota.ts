import type { Kysely, Migration } from 'kysely';

/** A customer's quota of knowledge (README, Answers from your documents) is summed over their documents. */
export const knowledgeQuota: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('knowledge_documents_customer')
      .on('knowledge_documents')
      .column('customer_id')
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('knowledge_documents_customer').execute();
  },
};
