import { z } from 'zod';
import { pageQuery } from '../http/pagination.js';
import { atLeastOneField, httpUrl, SPEC_MAX_BYTES, timestamp } from '../shared/schemas.js';
import { voiceModes, widgetTheme } from '#protocol/frames';
import { proactiveRules } from '#protocol/proactive';
import { transcriptHookStatuses } from './deployment.table.js';
import { speechRecognitionSettings, speechSynthesisSettings } from '#protocol/speech-settings';
import { keepModes, patternKinds, redactionKinds } from '#protocol/privacy';

export const environments = ['development', 'staging', 'production'] as const;
export const callDirections = ['inbound', 'outbound'] as const;
export const deploymentStatuses = ['inactive', 'active'] as const;

const origin = z
  .string()
  .max(300)
  .refine(
    (value) => {
      const url = URL.parse(value);
      return !!url && (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
    },
    { message: 'must be an origin such as https://example.com (scheme, host and optional port, no path)' },
  );

const withinSize = <T extends z.ZodType>(schema: T) =>
  schema.refine((v) => Buffer.byteLength(JSON.stringify(v)) <= SPEC_MAX_BYTES, {
    message: 'must be at most 64 KiB as JSON',
  });

// Only the keys the service reads are checked; anything else is kept as the customer wrote it.
export const channelConfigSchema = withinSize(
  z.looseObject({
    hook_url: httpUrl.optional().meta({ description: "The customer's turn hook" }),
    transcript_hook_url: httpUrl.optional(),
    allowed_origins: z
      .array(origin)
      .max(100)
      .optional()
      .meta({ description: 'Origins allowed to open widget sessions; empty or absent: any' }),
    widget: widgetTheme.optional(),
  }),
).meta({ id: 'ChannelConfig' });

/** Each setting once, with its default: documented in the API, applied when the service reads it. */
const engagementRules = {
  max_turns_per_conversation: z.number().int().min(1).max(10_000).default(200),
  max_pending_turns: z.number().int().min(1).max(50).default(3),
  turns_per_minute: z.number().int().min(1).max(600).default(20),
};
const runtimeSettings = {
  hook_timeout_ms: z.number().int().min(500).max(15_000).default(5000),
  reply_timeout_s: z.number().int().min(5).max(3600).default(120),
  // A turn a person handles waits this long for their answer (README, A person in the conversation).
  person_reply_timeout_s: z.number().int().min(60).max(86_400).default(900),
  // A visitor waiting this long for a person (asked by them or the hook) is told once; 0: never.
  person_wait_notice_s: z.number().int().min(0).max(86_400).default(300).meta({
    description:
      'After this many seconds of a request for a person that nobody took, the visitor is told once (`still_waiting`); 0: never',
  }),
  // Where the visitor's speech is recognised (README, Voice in every browser).
  speech_recognition: z.enum(speechRecognitionSettings).default('auto').meta({
    description:
      "`auto`: the browser's recognition where it has one, else the service's; `browser`; `service` (audio streamed to the service's recogniser); `off` (text only)",
  }),
  // Whose voice reads replies out (README, The agent's own voice).
  speech_synthesis: z.enum(speechSynthesisSettings).default('auto').meta({
    description:
      "`auto`: the service's voice where it has a synthesiser, else the browser's; `service`; `browser`; `off` (replies shown, never spoken)",
  }),
};

/** The API keeps what the customer wrote: a default is documented, not filled in. */
function documented<S extends Record<string, z.ZodDefault<z.ZodType>>>(
  shape: S,
): { [K in keyof S]: z.ZodOptional<ReturnType<S[K]['unwrap']>> } {
  return Object.fromEntries(
    Object.entries(shape).map(([key, setting]) => [
      key,
      setting.unwrap().optional().meta({ default: setting.def.defaultValue }),
    ]),
  ) as {
    [K in keyof S]: z.ZodOptional<ReturnType<S[K]['unwrap']>>;
  };
}

export const engagementRulesSchema = withinSize(
  z.looseObject({
    ...documented(engagementRules),
    proactive: proactiveRules.optional().meta({
      description:
        "Greeting rules the widget evaluates on every page (README, Greeting visitors first): when all of a rule's `when` holds, its teaser shows beside the launcher, or the panel opens",
    }),
  }),
).meta({ id: 'EngagementRules' });
/** Settings with no default: absent means the service's own behaviour. */
const runtimeChoices = {
  // How the visitor talks (README, Hands-free voice).
  voice_mode: z.enum(voiceModes).optional().meta({
    description:
      "`hands_free`: the mic stays open and the service finds each turn, and the visitor can speak over the agent; `push_to_talk`: one press per utterance. Absent: hands-free where the service recognises this widget's speech; the browser's recognition is always push-to-talk",
  }),
  // What is kept of the conversations (README, Privacy: what is kept).
  privacy: z
    .strictObject({
      keep: z.enum(keepModes).optional().meta({
        default: 'everything',
        description:
          '`everything`: every word as said; `redacted`: the words with each value of `redact` replaced by its kind (`[phone]`) before anything is stored; `metadata`: no words at all, only timing, lengths, outcomes and feedback',
      }),
      redact: z
        .array(z.enum(redactionKinds))
        .min(1)
        .max(redactionKinds.length)
        .refine((kinds) => new Set(kinds).size === kinds.length, { message: 'must not repeat a kind' })
        .optional()
        .meta({
          description:
            "What `redacted` replaces: `email`, `phone`, `card`, `iban` by their patterns and checks; `name` and `address` found by the agent's evaluation or own model, asked before the visitor's turn is stored (without a model they are not found). Absent: the four pattern kinds",
          default: [...patternKinds],
        }),
      retention_days: z.number().int().min(1).max(3650).optional().meta({
        description:
          "Ended conversations of this deployment are deleted this many days after their last change, sooner than the service's own retention when it keeps them longer",
      }),
    })
    .optional()
    .meta({ description: 'What is kept of what the visitor and the agent say. Absent: everything, as said' }),
  person_wait_notice: z.string().trim().min(1).max(1000).optional().meta({
    description:
      "What the visitor is told after person_wait_notice_s; absent: the widget's own words in the visitor's language (nobody is free yet, their message is kept)",
  }),
};
export const runtimeConfigSchema = withinSize(
  z.looseObject({ ...documented(runtimeSettings), ...runtimeChoices }),
).meta({ id: 'RuntimeConfig' });

/** The rules and timeouts a deployment runs with: what it stores, defaults applied. */
export const effectiveEngagementRules = z.object({
  ...engagementRules,
  // Rules stored before a change of their schema are not read rather than failing the deployment.
  proactive: proactiveRules.catch([]),
});
export const effectiveRuntimeConfig = z.object({ ...runtimeSettings, ...runtimeChoices });
export type ChannelConfig = z.infer<typeof channelConfigSchema>;

const agentVersion = z.number().int().min(1).nullable().meta({
  description:
    'The agent version conversations start with: null follows the latest published one; a number pins it (rolling back is pinning the previous one)',
});

/** New conversations split between published versions (README, Tests and analysis). */
const versionShares = z
  .strictObject({ version: z.number().int().min(1), weight: z.number().int().min(1).max(100) })
  .array()
  .min(2)
  .max(5)
  .refine((shares) => new Set(shares.map((s) => s.version)).size === shares.length, 'each version once')
  .nullable()
  .meta({
    id: 'VersionShares',
    description:
      'Splits new conversations between published versions by weight (a visitor keeps theirs); null: every new conversation gets agent_version',
  });

export const deploymentSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    environment: z.enum(environments),
    status: z.enum(deploymentStatuses),
    agent_name: z.string(),
    call_direction: z.enum(callDirections),
    agent_version: agentVersion,
    versions: versionShares,
    engagement_rules: engagementRulesSchema,
    channel_config: channelConfigSchema,
    runtime_config: runtimeConfigSchema,
    deployed_at: timestamp.nullable().meta({ description: 'Set by the last activation' }),
    transcript_hook_status: z.enum(transcriptHookStatuses).meta({
      description:
        'disabled after the transcript target answered 410 Gone or failed every attempt for 72 h: events wait, in order, until POST /api/v1/deployments/{id}/transcript-hook/enable or a new transcript_hook_url',
    }),
    transcript_hook_disabled_at: timestamp.nullable(),
    transcript_hook_disabled_reason: z
      .string()
      .nullable()
      .meta({ description: 'Why it was disabled, e.g. "410 Gone from https://…"' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Deployment' });
export type Deployment = z.infer<typeof deploymentSchema>;

export const createdDeploymentSchema = deploymentSchema
  .extend({ signing_secret: z.string().meta({ description: 'Shown only here and on rotation' }) })
  .meta({ id: 'CreatedDeployment' });

export const configWarningsMetaSchema = z
  .object({
    warnings: z.array(z.object({ path: z.string(), message: z.string() })).meta({
      description:
        'Keys of channel_config, engagement_rules or runtime_config the service does not read: stored as sent, each with the known key it most likely meant',
    }),
  })
  .meta({ id: 'ConfigWarningsMeta' });

export const createDeploymentBody = z
  .strictObject({
    agent_id: z.uuid(),
    environment: z.enum(environments).default('production'),
    call_direction: z.enum(callDirections).default('inbound'),
    agent_version: agentVersion.default(null),
    versions: versionShares.default(null),
    channel_config: channelConfigSchema.default({}),
    engagement_rules: engagementRulesSchema.default({}),
    runtime_config: runtimeConfigSchema.default({}),
  })
  .meta({ id: 'CreateDeployment' });
export type CreateDeploymentInput = z.infer<typeof createDeploymentBody>;

export const updateDeploymentBody = z
  .strictObject({
    environment: z.enum(environments).optional(),
    call_direction: z.enum(callDirections).optional(),
    agent_version: agentVersion.optional(),
    versions: versionShares.optional(),
    channel_config: channelConfigSchema.optional(),
    engagement_rules: engagementRulesSchema.optional(),
    runtime_config: runtimeConfigSchema.optional(),
  })
  .refine(atLeastOneField, { message: 'at least one field is required (agent_id cannot be changed)' })
  .meta({ id: 'UpdateDeployment' });
export type UpdateDeploymentInput = z.infer<typeof updateDeploymentBody>;

export const listDeploymentsQuery = pageQuery.extend({
  agent_id: z.uuid().optional(),
  status: z.enum(deploymentStatuses).optional(),
  environment: z.enum(environments).optional(),
});

export const rotateSecretBody = z
  .strictObject({ grace_period_s: z.number().int().min(0).max(604_800).default(3600) })
  .meta({ id: 'RotateSecret' });

export const rotatedSecretSchema = z
  .object({
    signing_secret: z.string(),
    previous_secret_expires_at: timestamp
      .nullable()
      .meta({ description: 'Until then the previous secret still verifies' }),
  })
  .meta({ id: 'RotatedSecret' });
