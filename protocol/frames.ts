import { z } from 'zod';
import { codePoints, languageTag } from './text.js';
import { ACTION_NAME, ACTION_NAME_RULE } from './tools.js';
import { pageContext, pageData, pageEventName, pageOf, proactiveEvents, proactiveRule } from './proactive.js';
import { type VoiceMode, voiceModes } from './speech-settings.js';

export { codePoints, languageTag };

/**
 * Every frame of the widget's WebSocket (README, Concierge sessions), client and server, as zod schemas: the
 * server parses client messages with them and builds its frames from their types; the widget
 * imports the types only (`import type`), so no schema reaches its bundle.
 */

export const turnModes = ['text', 'voice'] as const;
export type TurnMode = (typeof turnModes)[number];
// `model_failed`: the agent's model (README, An agent without a server) gave no answer, nor did its fallback.
export const turnFailures = [
  'hook_rejected',
  'hook_failed',
  'reply_timeout',
  'conversation_ended',
  'model_failed',
] as const;
export type TurnFailure = (typeof turnFailures)[number];
/** Who answers a conversation's turns: the turn hook, or a person (README, A person in the conversation). */
export const handlers = ['agent', 'person'] as const;
export type Handler = (typeof handlers)[number];
/** A visitor's rating of a reply (README, Knowing how it goes). */
export const feedbackRatings = ['up', 'down'] as const;
export type FeedbackRating = (typeof feedbackRatings)[number];
// `closed`: a person closed it from the inbox (README, A person in the conversation); `agent_ended`: the
// agent's model ended it with its built-in tool (README, An agent without a server).
export const endReasons = [
  'user_ended',
  'deployment_inactive',
  'max_turns',
  'deleted',
  'closed',
  'agent_ended',
] as const;
export type EndReason = (typeof endReasons)[number];
/** The codes of `error` frames: what the widget is told, the socket staying open or not. */
export const widgetErrorCodes = [
  'invalid_message',
  'rate_limited',
  'too_many_pending_turns',
  'token_expired',
  'conversation_ended',
  'speech_too_long',
  'speech_unrecognized',
  'speech_unavailable',
  'speech_busy',
] as const;
export type WidgetErrorCode = (typeof widgetErrorCodes)[number];

const token = z.string().min(1).max(8192);

const clientTurnId = z.string().min(1).max(64);
/** An open mic's turns are `{base}:{n}`: its base leaves room for the count. */
const handsFreeBase = z.string().min(1).max(56);

export { voiceModes, type VoiceMode };
/** Why an open mic closed: the visitor stayed quiet, the conversation ended, a speech budget was spent. */
export const listeningStops = ['silence', 'ended', 'budget'] as const;

/** Where the visitor's speech is recognised: by the browser, by the service (audio over the socket), or nowhere. */
export const recognitionSites = ['browser', 'service', 'none'] as const;
export type RecognitionSite = (typeof recognitionSites)[number];
/** The recognisers an operator may choose (README, Voice in every browser), as history names them. */
export const recognitionEngines = ['openai-compatible', 'pocketsphinx'] as const;
export type RecognitionEngine = (typeof recognitionEngines)[number];
/** The one sample rate the service takes audio in: 16 kHz, 16-bit, mono. */
export const AUDIO_SAMPLE_RATE = 16_000;
/** Whose voice reads replies out (README, The agent's own voice): the service's synthesiser, the browser's, or none. */
export const synthesisSites = ['service', 'browser', 'none'] as const;
export type SynthesisSite = (typeof synthesisSites)[number];
/** The synthesisers an operator may choose (README, The agent's own voice). */
export const synthesisEngines = ['openai-compatible', 'espeak-ng'] as const;
export type SynthesisEngine = (typeof synthesisEngines)[number];
/** Bytes of PCM in one binary frame, either way. */
export const MAX_AUDIO_FRAME_BYTES = 16 * 1024;

export const clientMessage = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('hello'),
    token,
    conversation_id: z.uuid().optional(),
    last_seq: z.number().int().min(0).optional(),
    // Whether this browser recognises speech itself; absent counts as true.
    browser_recognition: z.boolean().optional(),
    // The visitor's choice in the language menu: an outbound greeting is stored in it.
    language: languageTag.optional(),
  }),
  // The browser's own recognition cannot work here: its speech goes to the service's from now on.
  z.strictObject({ type: z.literal('recognition_fallback') }),
  z.strictObject({
    type: z.literal('user_turn'),
    client_turn_id: clientTurnId,
    text: z.string().min(1).max(4000),
    mode: z.enum(turnModes),
    // The visitor's choice in the language menu (README, The widget in your visitors' languages).
    language: languageTag.optional(),
    // The page it was asked on (README, Greeting visitors first).
    page: pageOf.optional(),
  }),
  z.strictObject({
    type: z.literal('feedback'),
    turn_id: z.uuid(),
    rating: z.enum(feedbackRatings),
    comment: codePoints(1, 500).optional(),
  }),
  z.strictObject({ type: z.literal('refresh_token'), token }),
  // The visitor, tired of waiting, leaves their question for the customer's team (README, A person in the conversation).
  z.strictObject({ type: z.literal('ask_for_person') }),
  z.strictObject({ type: z.literal('end') }),
  z.strictObject({ type: z.literal('ping') }),
  // What the page tells the agent (README, Greeting visitors first): an event (`Concierge.trigger`) and its context.
  z.strictObject({ type: z.literal('page_event'), name: pageEventName, data: pageData.optional() }),
  z.strictObject({ type: z.literal('context'), data: pageContext }),
  // A greeting rule's teaser was shown, or opened the conversation: counted for its analytics.
  z.strictObject({ type: z.literal('proactive'), rule_id: z.string().max(40), event: z.enum(proactiveEvents) }),
  // An utterance for the service to recognise: binary PCM frames follow (README, Voice in every browser).
  // `hands_free` opens the mic until `audio_end` (README, Hands-free voice): the service finds each turn
  // in it, named `{client_turn_id}:{n}` (absent: one the service makes).
  z
    .strictObject({
      type: z.literal('audio_start'),
      client_turn_id: handsFreeBase.optional(),
      mode: z.enum(voiceModes).optional(),
      sample_rate: z.literal(AUDIO_SAMPLE_RATE),
      language: languageTag.optional(),
    })
    .refine((m) => m.mode === 'hands_free' || m.client_turn_id !== undefined, {
      message: 'client_turn_id is required unless mode is hands_free',
      path: ['client_turn_id'],
    }),
  // Without `client_turn_id`: the open mic closes.
  z.strictObject({ type: z.literal('audio_end'), client_turn_id: clientTurnId.optional() }),
  z.strictObject({ type: z.literal('audio_cancel'), client_turn_id: clientTurnId.optional() }),
  // How far a reply's sentence was played (README, The agent's own voice): the service keeps what was heard.
  z.strictObject({
    type: z.literal('playback'),
    turn_id: z.uuid(),
    sentence: z.number().int().min(0).max(10_000),
    offset_ms: z.number().int().min(0).max(3_600_000),
    state: z.enum(['finished', 'interrupted']),
  }),
]);
export type ClientMessage = z.infer<typeof clientMessage>;

/** The deployment's `channel_config.widget`: title, accent colour, position, languages (keys it does not know are kept, and ignored). */
export const widgetTheme = z.looseObject({
  title: z.string().max(100).optional(),
  // Only hex colours: the value is written into the widget's CSS.
  accent_color: z
    .string()
    .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a hex colour such as #0a7cff')
    .optional(),
  position: z.enum(['bottom-right', 'bottom-left']).optional(),
  feedback: z.boolean().optional().meta({ description: '👍/👎 after each reply; default true' }),
  languages: languageTag
    .array()
    .max(20)
    .refine((tags) => new Set(tags).size === tags.length, 'must not name a language twice')
    .optional()
    .meta({
      description:
        "The languages the widget's menu offers (two or more show it): the visitor's choice sets the widget's words, speech and each turn's `language`",
    }),
});
export type WidgetTheme = z.infer<typeof widgetTheme>;

const seq = z.number().int().min(1);
const id = z.uuid();

/** The parts of one reply: at most this many, and at most this many characters together. */
export const REPLY_PART_LIMITS = { parts: 500, chars: 20_000, partChars: 2_000 } as const;

/** Bytes the JSON of a client action's `args` may take. */
const ACTION_ARGS_BYTES = 2048;

/** A URL the widget may open or link: `http:` or `https:` only (never `javascript:`, `data:`, ...). */
const webUrl = z.url({ protocol: /^https?$/ }).max(2000);

const label = codePoints(1, 40);

/** What a reply may offer beside its text (README, Actions on a reply): a link, a quick reply, or an action the host page runs. */
export const replyAction = z.discriminatedUnion('type', [
  z
    .strictObject({ type: z.literal('link'), label, url: webUrl })
    .meta({ id: 'LinkAction', description: 'Opened in a new tab (rel="noopener noreferrer")' }),
  z.strictObject({ type: z.literal('quick_reply'), label, text: codePoints(1, 500) }).meta({
    id: 'QuickReplyAction',
    description:
      "A button that sends `text` as the visitor's next turn (mode `text`); gone once the visitor sends any turn",
  }),
  z
    .strictObject({
      type: z.literal('client'),
      name: z.string().regex(ACTION_NAME, ACTION_NAME_RULE),
      label: label.optional(),
      args: z
        .record(z.string(), z.unknown())
        .refine(
          (args) => new TextEncoder().encode(JSON.stringify(args)).length <= ACTION_ARGS_BYTES,
          `must be at most ${ACTION_ARGS_BYTES} bytes as JSON`,
        )
        .optional(),
    })
    .meta({
      id: 'ClientAction',
      description:
        'Runs the handler the host page registered with `Concierge.registerAction(name, handler)`: at once without a `label`, on click with one',
    }),
]);
export type ReplyAction = z.infer<typeof replyAction>;
export const replyActions = replyAction.array().max(6);

/** The events stored per conversation, each with its `seq`, delivered at least once and in order. */
export const storedEvent = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('greeting'), seq, text: z.string() }),
  // `language`: the turn's (README, The widget in your visitors' languages); absent on turns taken before it was recorded.
  z.strictObject({
    type: z.literal('turn_accepted'),
    seq,
    turn_id: id,
    client_turn_id: z.string(),
    text: z.string(),
    mode: z.enum(turnModes),
    language: z.string().optional(),
  }),
  z.strictObject({ type: z.literal('turn_acknowledged'), seq, turn_id: id }),
  z.strictObject({ type: z.literal('reply_part'), seq, turn_id: id, part: z.number().int().min(0), text: z.string() }),
  // `name`: the person who answered (README, A person in the conversation); absent when the agent did.
  z.strictObject({
    type: z.literal('reply'),
    seq,
    turn_id: id,
    text: z.string(),
    actions: replyAction.array(),
    name: z.string().optional(),
    // The reply hands the conversation to a person: a notice, which the widget offers no rating for.
    handoff: z.literal(true).optional(),
  }),
  z.strictObject({ type: z.literal('message'), seq, text: z.string(), actions: replyAction.array(), name: z.string() }),
  z.strictObject({ type: z.literal('operator_joined'), seq, name: z.string() }),
  z.strictObject({ type: z.literal('operator_left'), seq, name: z.string() }),
  // The visitor asked for a person: the conversation needs one.
  z.strictObject({ type: z.literal('person_requested'), seq }),
  // Nobody took the request for a person in runtime_config.person_wait_notice_s: the customer's words, or the widget's own.
  z.strictObject({ type: z.literal('still_waiting'), seq, text: z.string().optional() }),
  // A hands-free visitor said nothing for the agent's voice.reengage_after_s: asked once if they are still there.
  z.strictObject({ type: z.literal('reengaged'), seq, text: z.string() }),
  z.strictObject({ type: z.literal('turn_failed'), seq, turn_id: id, reason: z.enum(turnFailures) }),
  z.strictObject({ type: z.literal('feedback_recorded'), seq, turn_id: id, rating: z.enum(feedbackRatings) }),
  z.strictObject({ type: z.literal('conversation_ended'), seq, reason: z.enum(endReasons) }),
  // An event of the visitor's page (README, Greeting visitors first): kept for the agent, never shown to the visitor.
  z.strictObject({ type: z.literal('page_event'), seq, name: z.string(), data: z.json().optional() }),
]);
export type StoredEvent = z.infer<typeof storedEvent>;
/** An event about to be stored: its `seq` is taken when it is. */
export type NewEvent = StoredEvent extends infer E ? (E extends StoredEvent ? Omit<E, 'seq'> : never) : never;

/** The agent's voice, from its published spec (README, Field reference): a voice the browser knows by name, its rate and pitch. */
export const agentVoice = z.strictObject({
  name: z.string().optional(),
  rate: z.number().optional(),
  pitch: z.number().optional(),
});
export type AgentVoice = z.infer<typeof agentVoice>;

/** A word said differently from how it is written (README, The agent's own voice): in what is spoken, never in what is shown. */
export const pronunciation = z.strictObject({
  term: z.string().trim().min(1, 'must not be empty').max(100),
  say: z.string().trim().min(1, 'must not be empty').max(200),
  language: languageTag.optional(),
});
export type Pronunciation = z.infer<typeof pronunciation>;

const agentInfo = z.strictObject({
  name: z.string(),
  // In the agent's language; `greetings` holds it in each language the agent has one for.
  greeting: z.string().nullable(),
  greetings: z.record(z.string(), z.string()).optional(),
  language: z.string(),
  voice: agentVoice.nullable(),
  // Said by the browser's voice as by the service's; absent when the agent has none.
  pronunciations: pronunciation.array().optional(),
});
export type AgentInfo = z.infer<typeof agentInfo>;

const readyFrame = z.strictObject({
  type: z.literal('ready'),
  conversation_id: id,
  resumed: z.boolean(),
  last_seq: z.number().int().min(0),
  token_expires_at: z.iso.datetime(),
  agent: agentInfo,
  widget: widgetTheme,
  speech: z.strictObject({
    recognition: z.enum(recognitionSites),
    // With `none`: the deployment chose text only, so the widget shows no microphone (else it
    // explains why this browser cannot talk).
    text_only: z.literal(true).optional(),
    // With `browser` under `auto`: the service recognises too, so a browser whose own recognition
    // fails here sends `recognition_fallback` and streams its audio instead.
    fallback: z.literal('service').optional(),
    // Whose voice reads replies out: `service` sends `speech` frames and PCM.
    synthesis: z.enum(synthesisSites),
    // How the visitor talks (README, Hands-free voice): `hands_free` only where the service recognises.
    mode: z.enum(voiceModes),
  }),
  // The deployment's greeting rules, which the widget evaluates on the page (README, Greeting visitors first).
  proactive: proactiveRule.array().optional(),
});

const errorFrame = z.strictObject({ type: z.literal('error'), code: z.enum(widgetErrorCodes), message: z.string() });

/** Every frame the server sends: `ready`, `error`, `pong`, `transcribing` and the speech frames are not stored. */
export const serverFrame = z.union([
  readyFrame,
  errorFrame,
  z.strictObject({ type: z.literal('pong') }),
  // The utterance arrived whole and is with the recogniser: not stored.
  z.strictObject({ type: z.literal('transcribing'), client_turn_id: z.string() }),
  // The open mic (README, Hands-free voice), none of it stored: speech began and stopped, the words
  // of the turn so far, the agent's voice to stop (or, a false alarm, to come back), the mic closed.
  z.strictObject({ type: z.literal('speech_started') }),
  z.strictObject({ type: z.literal('speech_stopped') }),
  z.strictObject({ type: z.literal('transcript_partial'), text: z.string() }),
  z.strictObject({ type: z.literal('interrupt'), turn_id: id }),
  z.strictObject({ type: z.literal('resume'), turn_id: id }),
  z.strictObject({ type: z.literal('listening_stopped'), reason: z.enum(listeningStops) }),
  // A sentence in the service's voice: binary PCM frames follow, then `speech_end`; none of them stored.
  // `turn_id` for a reply's sentence; a person's message carries the message's `message_seq` instead.
  z.strictObject({
    type: z.literal('speech'),
    turn_id: id.optional(),
    message_seq: seq.optional(),
    sentence: z.number().int().min(0),
    text: z.string(),
    sample_rate: z.number().int().min(8_000).max(48_000),
  }),
  z.strictObject({
    type: z.literal('speech_end'),
    turn_id: id.optional(),
    message_seq: seq.optional(),
    sentence: z.number().int().min(0),
  }),
  // The synthesiser failed this sentence: the widget says it in the browser's voice, if it has one.
  z.strictObject({
    type: z.literal('speech_unavailable'),
    turn_id: id.optional(),
    message_seq: seq.optional(),
    sentence: z.number().int().min(0),
  }),
  storedEvent,
]);
export type ServerFrame = z.infer<typeof serverFrame>;
