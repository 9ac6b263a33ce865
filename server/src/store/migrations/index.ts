import type { Migration } from 'kysely';
import { management } from './2026-10-02-01-management.js';
import { sessions } from './2026-10-02-02-sessions.js';
import { limits } from './2026-11-24-01-limits.js';
import { outboxUrl } from './2026-11-24-02-outbox-url.js';
import { agentVersions } from './2026-11-24-03-agent-versions.js';
import { retention } from './2026-11-24-04-retention.js';
import { history } from './2026-11-24-05-history.js';
import { consoleAccounts } from './2026-11-24-06-console.js';
import { sealedResponses } from './2026-11-25-01-sealed-responses.js';
import { manualSends } from './2026-11-25-02-manual-sends.js';
import { outboxHeads } from './2026-11-25-03-outbox-heads.js';
import { transcriptTarget } from './2026-11-25-04-transcript-target.js';
import { replyParts } from './2026-11-25-05-reply-parts.js';
import { people } from './2026-11-25-06-people.js';
import { turnLanguage } from './2026-11-26-01-turn-language.js';
import { feedback } from './2026-11-26-02-feedback.js';
import { analytics } from './2026-11-26-03-analytics.js';
import { diagnostics } from './2026-11-26-04-diagnostics.js';
import { recognition } from './2026-11-26-05-recognition.js';
import { hookNodes } from './2026-11-26-06-hook-nodes.js';
import { inbox } from './2026-11-27-01-inbox.js';
import { heard } from './2026-11-27-02-heard.js';
import { modelResponder } from './2026-11-27-03-model-responder.js';
import { knowledge } from './2026-11-27-04-knowledge.js';
import { knowledgeSources } from './2026-11-27-05-knowledge-sources.js';
import { proactive } from './2026-11-27-06-proactive.js';
import { teams } from './2026-11-28-01-teams.js';
import { knowledgeQuota } from './2026-11-29-01-knowledge-quota.js';
import { auditDetail } from './2026-11-29-02-audit-detail.js';
import { singleSignOn } from './2026-11-29-03-single-sign-on.js';
import { toolConfirmation } from './2026-11-29-04-tool-confirmation.js';
import { answering } from './2026-11-29-05-answering.js';
import { handsFree } from './2026-11-30-01-hands-free.js';
import { quality } from './2026-12-01-01-quality.js';
import { privacy } from './2026-12-02-01-privacy.js';
import { guardrails } from './2026-12-03-01-guardrails.js';

/** Every migration, in order. Names are timestamps so they sort the way they apply. */
export const migrations: Record<string, Migration> = {
  '2026-10-02-01-management': management,
  '2026-10-02-02-sessions': sessions,
  '2026-11-24-01-limits': limits,
  '2026-11-24-02-outbox-url': outboxUrl,
  '2026-11-24-03-agent-versions': agentVersions,
  '2026-11-24-04-retention': retention,
  '2026-11-24-05-history': history,
  '2026-11-24-06-console': consoleAccounts,
  '2026-11-25-01-sealed-responses': sealedResponses,
  '2026-11-25-02-manual-sends': manualSends,
  '2026-11-25-03-outbox-heads': outboxHeads,
  '2026-11-25-04-transcript-target': transcriptTarget,
  '2026-11-25-05-reply-parts': replyParts,
  '2026-11-25-06-people': people,
  '2026-11-26-01-turn-language': turnLanguage,
  '2026-11-26-02-feedback': feedback,
  '2026-11-26-03-analytics': analytics,
  '2026-11-26-04-diagnostics': diagnostics,
  '2026-11-26-05-recognition': recognition,
  '2026-11-26-06-hook-nodes': hookNodes,
  '2026-11-27-01-inbox': inbox,
  '2026-11-27-02-heard': heard,
  '2026-11-27-03-model-responder': modelResponder,
  '2026-11-27-04-knowledge': knowledge,
  '2026-11-27-05-knowledge-sources': knowledgeSources,
  '2026-11-27-06-proactive': proactive,
  '2026-11-28-01-teams': teams,
  '2026-11-29-01-knowledge-quota': knowledgeQuota,
  '2026-11-29-02-audit-detail': auditDetail,
  '2026-11-29-03-single-sign-on': singleSignOn,
  '2026-11-29-04-tool-confirmation': toolConfirmation,
  '2026-11-29-05-answering': answering,
  '2026-11-30-01-hands-free': handsFree,
  '2026-12-01-01-quality': quality,
  '2026-12-02-01-privacy': privacy,
  '2026-12-03-01-guardrails': guardrails,
};
