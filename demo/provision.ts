import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { api, expect2xx } from './management-api.js';
import { provisionQuality } from './quality.js';

export interface Provisioned {
  apiKey: string;
  agentId: string;
  deploymentId: string;
  signingSecret: string;
  /** The stand-in analyst's model endpoint (demo/quality.ts); absent in a demo provisioned before it. */
  analystEndpointId?: string;
}

export interface DemoHooks {
  hookUrl: string;
  transcriptUrl: string;
  origin: string;
  /** The hotel's guest guide, where the service fetches it for the agent's knowledge base. */
  guideUrl: string;
  /** The demo's stand-in analyst (an OpenAI-compatible base URL), for the agent's analysis. */
  analystUrl: string;
}

/** Who answers a new demo agent: the hotel's server (the QA stack), or its pages (`npm start`). */
export type DemoDefault = 'hook' | 'knowledge';

const channel = (hooks: DemoHooks) => ({
  hook_url: hooks.hookUrl,
  transcript_hook_url: hooks.transcriptUrl,
  allowed_origins: [hooks.origin],
  // The language menu: the hotel answers in German, French and Spanish too (demo/answers.ts).
  widget: {
    title: 'Harbor Hotel',
    accent_color: '#0b6e4f',
    position: 'bottom-right',
    languages: ['en-US', 'de-DE', 'fr-FR', 'es-ES', 'ar-SA', 'he-IL'],
  },
});

/**
 * The hotel's welcome line in the languages it answers in (README, The widget in your visitors'
 * languages), greeting the signed-in guest by the name the hotel's token gives (README, Variables
 * and guardrails).
 */
export const DEMO_GREETING = {
  en: 'Hello {{visitor.name|there}}, this is the Harbor Hotel concierge. How can I help you today?',
  de: 'Hallo {{visitor.name|zusammen}}, hier ist der Concierge des Harbor Hotels. Wie kann ich Ihnen helfen?',
  fr: 'Bonjour {{visitor.name|à vous}}, ici le concierge du Harbor Hotel. Comment puis-je vous aider ?',
  es: 'Hola {{visitor.name|a todos}}, le atiende el conserje del Harbor Hotel. ¿En qué puedo ayudarle?',
};

/**
 * What the hotel's agent may say when a model answers (README, Variables and guardrails): hotel
 * topics only, never the competitor across the harbour, and the guest's room from the token.
 */
export const DEMO_GUARDRAILS = {
  topics: {
    allowed: [
      'the Harbor Hotel: rooms, rates and bookings',
      'breakfast, the restaurant and room service',
      'parking, the spa, check-in and checkout',
      'the harbour town around the hotel',
    ],
  },
  blocked_terms: ['Grand Hotel'],
  refuse_text: 'I can only help with your stay at the Harbor Hotel.',
};

/**
 * The hotel greets first (README, Greeting visitors first): a guest who stays on its rooms for 20
 * seconds, and one whom the booking form refused (its page event).
 */
export const DEMO_GREETINGS = [
  {
    id: 'rooms',
    when: { path: '/rooms', seconds_on_page: 20 },
    teaser: {
      en: 'Choosing a room? I can tell you which ones have a balcony or a garden.',
      de: 'Sie suchen ein Zimmer? Ich sage Ihnen, welche einen Balkon oder Garten haben.',
      fr: 'Vous choisissez une chambre ? Je vous dis lesquelles ont un balcon ou un jardin.',
      es: '¿Eligiendo habitación? Le digo cuáles tienen balcón o jardín.',
    },
  },
  {
    id: 'booking-help',
    when: { path: '/book', event: 'booking_form_error' },
    teaser: {
      en: 'The form said no? I can arrange a larger table for you.',
      de: 'Das Formular sagt nein? Ich kann einen größeren Tisch für Sie arrangieren.',
      fr: 'Le formulaire refuse ? Je peux vous arranger une plus grande table.',
      es: '¿El formulario dice que no? Puedo organizarle una mesa más grande.',
    },
    once_per: 'session',
  },
];

/**
 * The demo customer's agent and deployment, through the management API like any customer.
 * Kept in `statePath` (the signing secret is shown once), and re-pointed at the demo's current
 * URLs on every start.
 */
export async function provision(
  serviceUrl: string,
  apiKey: string,
  hooks: DemoHooks,
  statePath: string | undefined,
  answeredBy: DemoDefault = 'hook',
): Promise<Provisioned> {
  const saved =
    statePath && existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')) as Provisioned) : undefined;
  if (saved && saved.apiKey === apiKey) {
    const found = await api(serviceUrl, apiKey, 'PUT', `/api/v1/deployments/${saved.deploymentId}`, {
      channel_config: channel(hooks),
      engagement_rules: { proactive: DEMO_GREETINGS },
    });
    if (found.status === 200) {
      await provisionKnowledge(serviceUrl, apiKey, saved.agentId, hooks.guideUrl);
      const analystEndpointId = await provisionQuality(
        serviceUrl,
        apiKey,
        saved.agentId,
        hooks.analystUrl,
        saved.analystEndpointId,
      );
      await expect2xx(
        api(serviceUrl, apiKey, 'POST', `/api/v1/deployments/${saved.deploymentId}/activate`),
        'activate',
      );
      return kept(statePath, { ...saved, analystEndpointId });
    }
  }
  const created = await expect2xx(
    api(serviceUrl, apiKey, 'POST', '/api/v1/agents', {
      name: 'Harbor Hotel concierge',
      description: 'Answers guests of a small harbour hotel: breakfast, checkout, parking, spa.',
    }),
    'create agent',
  );
  for (let i = 0; ; i++) {
    const job = await expect2xx(api(serviceUrl, apiKey, 'GET', `/api/v1/jobs/${created.job_id}/status`), 'job status');
    if (job.status === 'succeeded') break;
    if (job.status === 'failed' || i > 300) throw new Error(`demo: agent generation ${job.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const agentId: string = created.agent_id;
  await provisionKnowledge(serviceUrl, apiKey, agentId, hooks.guideUrl);
  const spec = await expect2xx(api(serviceUrl, apiKey, 'GET', `/api/v1/agents/${agentId}/spec`), 'agent spec');
  await expect2xx(
    api(serviceUrl, apiKey, 'PUT', `/api/v1/agents/${agentId}`, {
      draft_spec: {
        ...spec.draft_spec,
        greeting: DEMO_GREETING,
        ...(answeredBy === 'knowledge' ? { responder: { type: 'knowledge' } } : {}),
      },
    }),
    'save draft',
  );
  await expect2xx(api(serviceUrl, apiKey, 'POST', `/api/v1/agents/${agentId}/publish`), 'publish');
  const analystEndpointId = await provisionQuality(serviceUrl, apiKey, agentId, hooks.analystUrl, undefined);
  const deployment = await expect2xx(
    api(serviceUrl, apiKey, 'POST', '/api/v1/deployments', {
      agent_id: agentId,
      channel_config: channel(hooks),
      engagement_rules: { proactive: DEMO_GREETINGS },
      // The hotel keeps what guests say with their numbers and addresses taken out (README, Privacy: what is kept).
      runtime_config: { reply_timeout_s: 20, hook_timeout_ms: 3000, privacy: { keep: 'redacted' } },
    }),
    'create deployment',
  );
  await expect2xx(api(serviceUrl, apiKey, 'POST', `/api/v1/deployments/${deployment.id}/activate`), 'activate');
  return kept(statePath, {
    apiKey,
    agentId,
    deploymentId: deployment.id,
    signingSecret: deployment.signing_secret,
    analystEndpointId,
  });
}

/** The demo's state, written where the next start finds it (owner-only: it holds the signing secret). */
function kept(statePath: string | undefined, state: Provisioned): Provisioned {
  if (statePath) writeFileSync(statePath, JSON.stringify(state, null, 2), { mode: 0o600 });
  return state;
}

const KNOWLEDGE_BASE = "Harbor Hotel's pages";

/** The guest guide's translations, beside the English one: a guest asking in German is answered from the German guide. */
const GUIDE_TRANSLATIONS = ['de', 'fr', 'es'];

/**
 * The hotel's pages as a knowledge base of the demo customer (README, Answers from your documents):
 * its guest guide in English, German, French and Spanish, fetched by the service from the demo site
 * and refreshed daily, at the site's current address. The agent reads it whoever answers: the
 * hotel's server gets the passages too.
 */
async function provisionKnowledge(serviceUrl: string, apiKey: string, agentId: string, guideUrl: string) {
  const bases = await expect2xx(api(serviceUrl, apiKey, 'GET', '/api/v1/knowledge-bases?per_page=100'), 'bases');
  const baseId: string =
    bases.find((b: { name: string }) => b.name === KNOWLEDGE_BASE)?.id ??
    (await expect2xx(api(serviceUrl, apiKey, 'POST', '/api/v1/knowledge-bases', { name: KNOWLEDGE_BASE }), 'base')).id;
  const documents: { id: string; url: string | null; source: string }[] = await expect2xx(
    api(serviceUrl, apiKey, 'GET', `/api/v1/knowledge-bases/${baseId}/documents?per_page=100`),
    'documents',
  );
  const guides = [guideUrl, ...GUIDE_TRANSLATIONS.map((language) => `${guideUrl}/${language}`)];
  // The site moved (another DEMO_PORT): the guide at its old address goes.
  for (const stale of documents.filter((d) => d.source === 'url' && !guides.includes(d.url ?? '')))
    await api(serviceUrl, apiKey, 'DELETE', `/api/v1/knowledge-bases/${baseId}/documents/${stale.id}`);
  for (const url of guides.filter((url) => !documents.some((d) => d.url === url)))
    await expect2xx(
      api(serviceUrl, apiKey, 'POST', `/api/v1/knowledge-bases/${baseId}/documents`, { url, refresh_hours: 24 }),
      `add the guest guide at ${url}`,
    );
  await expect2xx(
    api(serviceUrl, apiKey, 'PUT', `/api/v1/agents/${agentId}`, { knowledge_base_id: baseId }),
    'agent knowledge base',
  );
}

/** What the demo hotel's agent knows, for a model answering in its place (README, An agent without a server). */
const HOTEL_INSTRUCTIONS = [
  'You are the concierge of the Harbor Hotel, a small hotel on the harbour. Answer guests briefly and warmly.',
  'Breakfast is served from 7 to 10:30 in the garden room, on weekends until 11. Checkout is at 11, check-in from 3 pm.',
  'Parking is in the garage behind the hotel, 18 euros a night. The spa (sauna and pool) is open from 9 to 21.',
  'The restaurant takes tables from 6 pm to 10 pm. If you cannot help, offer to hand over to the front desk.',
  'The guest is in room {{ctx.room|unknown}}.',
];

/** Who answers the demo agent's turns now: the hotel's server, its pages, or a model on one of its endpoints. */
export interface DemoResponder {
  responder: 'hook' | 'knowledge' | 'model';
  endpointId: string | null;
  model: string | null;
  /** The customer's model endpoints, to choose from. */
  endpoints: { id: string; name: string; base_url: string }[];
}

export async function demoResponder(serviceUrl: string, demo: Provisioned): Promise<DemoResponder> {
  const [spec, endpoints] = await Promise.all([
    expect2xx(api(serviceUrl, demo.apiKey, 'GET', `/api/v1/agents/${demo.agentId}/spec`), 'agent spec'),
    expect2xx(api(serviceUrl, demo.apiKey, 'GET', '/api/v1/model-endpoints?per_page=100'), 'model endpoints'),
  ]);
  const responder = (spec.agent_spec?.responder ?? {}) as { type?: string; endpoint_id?: string; model?: string };
  return {
    responder: responder.type === 'model' || responder.type === 'knowledge' ? responder.type : 'hook',
    endpointId: responder.endpoint_id ?? null,
    model: responder.model ?? null,
    // The stand-in analyst answers analyses only: it is not offered to answer visitors.
    endpoints: endpoints
      .filter((e: { id: string }) => e.id !== demo.analystEndpointId)
      .map((e: { id: string; name: string; base_url: string }) => ({ id: e.id, name: e.name, base_url: e.base_url })),
  };
}

/**
 * Switches who answers the demo agent (the QA panel): the hotel's server, its pages, or a model on
 * one of the customer's endpoints, through the management API: its draft's responder, then a publish.
 */
export async function switchDemoResponder(
  serviceUrl: string,
  demo: Provisioned,
  to: { responder: 'hook' | 'knowledge' } | { responder: 'model'; endpointId: string; model: string },
): Promise<DemoResponder> {
  const spec = await expect2xx(
    api(serviceUrl, demo.apiKey, 'GET', `/api/v1/agents/${demo.agentId}/spec`),
    'agent spec',
  );
  const draft = { ...(spec.agent_spec ?? spec.draft_spec ?? {}) };
  if (to.responder === 'model') {
    draft.responder = { type: 'model', endpoint_id: to.endpointId, model: to.model };
    draft.instructions = HOTEL_INSTRUCTIONS;
    draft.guardrails = DEMO_GUARDRAILS;
  } else if (to.responder === 'knowledge') draft.responder = { type: 'knowledge' };
  else delete draft.responder;
  await expect2xx(
    api(serviceUrl, demo.apiKey, 'PUT', `/api/v1/agents/${demo.agentId}`, { draft_spec: draft }),
    'save draft',
  );
  await expect2xx(api(serviceUrl, demo.apiKey, 'POST', `/api/v1/agents/${demo.agentId}/publish`), 'publish');
  return demoResponder(serviceUrl, demo);
}
