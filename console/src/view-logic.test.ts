import { describe, expect, it } from 'vitest';
import { checklist, isLive } from './checklist';
import { languageProblems, localeLabel, originProblems } from './form-checks';
import { startOfDay } from './format';
import { routeOf } from './routes';
import { serverSnippetOf, signedStringOf, snippetOf } from './snippets';
import {
  criteriaAsLines,
  customCriteriaOf,
  inLanguagesLines,
  inLanguagesOf,
  nestedValues,
  pronunciationsAsLines,
  pronunciationsOf,
  toolsOf,
} from './spec-fields';
import { lineDiff } from './text-diff';
import {
  guardrailInWords,
  guardrailsInWords,
  handsFreeInWords,
  keptInWords,
  saidInWords,
  turnTimeline,
} from './turn-timeline';
import type { Delivery, Turn } from './types';

const delivery = (over: Partial<Delivery> = {}): Delivery => ({
  id: 'd1',
  kind: 'turn_hook',
  deployment_id: 'dep',
  conversation_id: 'c1',
  turn_id: 't1',
  event_id: null,
  event_type: 'turn.created',
  url: 'https://hooks.example/turn',
  attempt: 1,
  sent_at: '2026-11-24T10:00:00.100Z',
  duration_ms: 42,
  request: { headers: { 'Webhook-Id': 'msg_1', 'Webhook-Timestamp': '1764000000' }, body: '{"text":"hi"}' },
  response: { status: 202, headers: {}, body: '', truncated: false },
  error: null,
  error_detail: null,
  outcome: 'succeeded',
  model_usage: null,
  ...over,
});

describe('console view logic', () => {
  it('reads hash routes, decoding ids and ignoring the query', () => {
    expect(routeOf('')).toEqual([]);
    expect(routeOf('#/')).toEqual([]);
    expect(routeOf('#/agents/a%20b')).toEqual(['agents', 'a b']);
    expect(routeOf('#/deployments?agent=1')).toEqual(['deployments']);
  });

  it('ticks the checklist from the counts, in order', () => {
    const zero = { agents: 0, published: 0, deployments: 0, tests: 0, active: 0, conversations: 0, visitors: 0 };
    const none = checklist(zero);
    expect(none.map((s) => s.done)).toEqual([false, false, false, false, false, false]);
    const half = checklist({ ...zero, agents: 2, published: 1, deployments: 1 });
    expect(half.map((s) => s.id)).toEqual(['agent', 'publish', 'deployment', 'test', 'install', 'conversation']);
    expect(half.find((s) => !s.done)?.id).toBe('test');
  });

  it('calls the concierge live once an active deployment has had visitors, Try it aside', () => {
    const done = { agents: 1, published: 1, deployments: 1, tests: 1, active: 1, conversations: 3, visitors: 0 };
    expect(isLive(done)).toBe(false);
    expect(isLive({ ...done, visitors: 1 })).toBe(true);
    expect(isLive({ ...done, active: 0, visitors: 1 })).toBe(false);
  });

  it('turns a local day into the instant it starts, the next day for an inclusive end', () => {
    expect(startOfDay('')).toBe('');
    expect(startOfDay('2026-11-24')).toBe(new Date(2026, 10, 24).toISOString());
    expect(startOfDay('2026-11-30', 1)).toBe(new Date(2026, 11, 1).toISOString());
  });

  it('diffs two specs line by line', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc\nd')).toEqual([
      { kind: ' ', text: 'a' },
      { kind: '-', text: 'b' },
      { kind: '+', text: 'B' },
      { kind: ' ', text: 'c' },
      { kind: '+', text: 'd' },
    ]);
    expect(lineDiff('same', 'same')).toEqual([{ kind: ' ', text: 'same' }]);
  });

  it('warns about an empty allowed-origins list and about values that are not origins', () => {
    expect(originProblems([])).toEqual([
      'The list is empty: a page on any site can open sessions with this deployment.',
    ]);
    expect(originProblems(['https://www.example.com', 'http://localhost:8080'])).toEqual([]);
    expect(originProblems(['https://example.com/', 'example.com'])).toHaveLength(2);
  });

  it('builds the signed string from the headers as sent, whatever their case', () => {
    expect(signedStringOf(delivery())).toBe('msg_1.1764000000.{"text":"hi"}');
    expect(snippetOf('https://svc.example', 'dep-1')).toBe(
      '<script src="https://svc.example/widget/concierge.js" data-deployment-id="dep-1" data-token-url="/your/token-endpoint" async></script>',
    );
    const server = serverSnippetOf('https://svc.example', 'dep-1').split('\n');
    expect(server[0]).toBe('npm install https://svc.example/sdk/concierge-server.tgz');
    expect(server).toContain(
      "export const tokenFor = (user) => mintUserToken({ deploymentId: 'dep-1', secret, sub: user.id, name: user.name });",
    );
  });

  it("shows a model agent's calls in a turn's timeline: each model call with its figures, each tool by name", () => {
    const model = delivery({
      kind: 'model',
      event_type: 'model.call',
      sent_at: '2026-11-24T10:00:00.400Z',
      request: { headers: {}, body: '{"model":"gpt-4o-mini","messages":[]}' },
      response: { status: 200, headers: {}, body: 'Yes.', truncated: false },
      model_usage: { first_token_ms: 310, tokens_in: 120, tokens_out: 17 },
    });
    const tool = delivery({
      kind: 'tool',
      event_type: 'tool.call',
      sent_at: '2026-11-24T10:00:00.900Z',
      request: { headers: {}, body: '{"type":"tool.call","tool":"check_room"}' },
      outcome: 'failed',
      response: null,
      error: 'timeout',
      error_detail: 'timed out after 10000 ms',
    });
    const turn = {
      id: 't1',
      text: 'Free on Friday?',
      words: { kept: 'everything', text_chars: 15, reply_chars: 4 },
      mode: 'text',
      language: 'en-US',
      status: 'resolved',
      created_at: '2026-11-24T10:00:00.000Z',
      acknowledged_at: '2026-11-24T10:00:00.010Z',
      parts: [],
      hook_attempts: [],
      model_calls: [model, tool],
      reply_received: { at: '2026-11-24T10:00:01.000Z', duplicates: 0 },
      reply_text: 'Yes.',
      replied_by: { type: 'agent' },
      guardrails: [{ rule: 'injection', action: 'refuse', sentence: 'My instructions say…' }],
    } as unknown as Turn;
    const titles = turnTimeline(turn).map((i) => i.title);
    expect(titles.at(-1)).toBe(
      "Guardrail: a sentence was stopped, it repeated the agent's instructions; replaced by the refusal: “My instructions say…”",
    );
    expect(titles).toContain('Model gpt-4o-mini (call 1): 200 in 42 ms, first token in 310 ms, 120 tokens in, 17 out');
    expect(titles).toContain('Tool check_room: timeout in 42 ms: timed out after 10000 ms');
  });

  it("says a hands-free turn's figures in words, a reply not spoken as such", () => {
    const voice = { speech_ms: 1840, end_of_turn_ms: 640, recognition_ms: 210, first_audio_ms: 1230 };
    expect(handsFreeInWords(voice)).toBe(
      "Hands-free: 1.8 s of speech, its end heard after 640 ms, recognised in 210 ms; the reply's voice 1.2 s after the visitor stopped",
    );
    expect(handsFreeInWords({ ...voice, first_audio_ms: null })).toBe(
      'Hands-free: 1.8 s of speech, its end heard after 640 ms, recognised in 210 ms; the reply not spoken',
    );
  });

  it("checks an agent's tools as the publish would, each problem in words", () => {
    expect(toolsOf('', 'server')).toEqual({ list: [], problems: [] });
    expect(toolsOf('{', 'server').problems[0]).toMatch(/^Not valid JSON/);
    expect(toolsOf('{}', 'server').problems).toEqual(['Must be a JSON array of tools: [{"name": …}]']);
    const good = {
      name: 'check_room',
      description: 'Free?',
      parameters: { type: 'object' },
      url: 'https://x.example/t',
    };
    expect(toolsOf(JSON.stringify([good]), 'server')).toEqual({ list: [good], problems: [] });
    expect(
      toolsOf(
        JSON.stringify([
          { name: 'end_conversation', parameters: { type: 'object', properties: { a: { pattern: 'x' } } } },
        ]),
        'server',
      ).problems,
    ).toEqual([
      'Tool 1 (end_conversation): name is a built-in tool',
      'Tool 1 (end_conversation): description is required',
      'Tool 1 (end_conversation): parameters may not use pattern or patternProperties',
      'Tool 1 (end_conversation): url must be an http(s) URL of your server',
    ]);
    expect(toolsOf(JSON.stringify([{ ...good, name: 'Open-Form', url: undefined }]), 'page').problems).toEqual([
      'Tool 1 (Open-Form): name must be 1 to 64 of a-z, 0-9, _ . -',
    ]);
  });

  it('puts a turn in time order: question, attempts, acknowledgement, reply with its duplicates', () => {
    const turn: Turn = {
      id: 't1',
      client_turn_id: 'c',
      text: 'Is breakfast included?',
      words: { kept: 'everything', text_chars: 22, reply_chars: null },
      mode: 'text',
      language: 'en-US',
      feedback: null,
      recognition: null,
      voice: null,
      heard: null,
      page: { url: 'https://hotel.example/rooms', title: 'Our rooms' },
      status: 'resolved',
      failure_reason: null,
      reply_text: 'Yes, 7 to 10.',
      reply_actions: [],
      replied_by: { type: 'agent' },
      parts: [],
      first_part_at: null,
      guardrails: [],
      created_at: '2026-11-24T10:00:00.000Z',
      acknowledged_at: '2026-11-24T10:00:00.300Z',
      resolved_at: '2026-11-24T10:00:01.000Z',
      hook_attempts: [
        delivery({ attempt: 2, sent_at: '2026-11-24T10:00:00.200Z' }),
        delivery({ outcome: 'failed', response: { status: 500, headers: {}, body: '', truncated: false } }),
      ],
      reply_received: { at: '2026-11-24T10:00:01.000Z', duplicates: 2 },
      model_calls: [],
      knowledge: [{ chunk_id: 'k1', document_id: 'd1', title: 'Guest guide', url: null, score: 2.4 }],
    } as Turn;
    const items = turnTimeline(turn);
    expect(items.map((i) => i.kind)).toEqual([
      'visitor',
      'visitor',
      'knowledge',
      'attempt',
      'attempt',
      'acknowledged',
      'reply',
      'resolved',
    ]);
    expect(items[1]!.title).toBe('On the page Our rooms (https://hotel.example/rooms)');
    expect(items[2]!.title).toBe('Knowledge: Guest guide (2.4)');
    expect(items[3]).toMatchObject({ title: 'Hook attempt 1: 500 in 42 ms', ok: false });
    expect(items[6]!.title).toBe('Reply received (2 duplicates ignored): Yes, 7 to 10.');
    const failed = turnTimeline({
      ...turn,
      status: 'failed',
      failure_reason: 'hook_failed',
      reply_received: null,
      acknowledged_at: null,
      hook_attempts: [],
    } as Turn);
    expect(failed.at(-1)).toMatchObject({ kind: 'failed', title: 'Turn failed: hook_failed' });
  });

  it("shows a streamed reply's parts as they came and the actions it offered; a refused answer says why", () => {
    const turn = {
      id: 't1',
      text: 'Dinner?',
      words: { kept: 'everything', text_chars: 7, reply_chars: 13 },
      mode: 'voice',
      language: 'fr-FR',
      feedback: { rating: 'down', comment: 'Too late for us', at: '2026-11-24T10:00:05.000Z' },
      heard: { text: 'From 6', interrupted: true, at: '2026-11-24T10:00:03.000Z' },
      status: 'resolved',
      failure_reason: null,
      reply_text: 'From 6 to 10.',
      reply_actions: [
        { type: 'link', label: 'Book', url: 'https://hotel.example/book' },
        { type: 'quick_reply', label: '7 pm', text: 'At 7, please' },
        { type: 'client', name: 'show_rooms' },
      ],
      parts: [
        { part: 0, text: 'From 6 ', received_at: '2026-11-24T10:00:00.400Z' },
        { part: 1, text: 'to 10.', received_at: '2026-11-24T10:00:00.600Z' },
      ],
      first_part_at: '2026-11-24T10:00:00.400Z',
      guardrails: [],
      created_at: '2026-11-24T10:00:00.000Z',
      acknowledged_at: '2026-11-24T10:00:00.100Z',
      resolved_at: '2026-11-24T10:00:00.900Z',
      hook_attempts: [],
      model_calls: [],
      reply_received: { at: '2026-11-24T10:00:00.900Z', duplicates: 0 },
    } as unknown as Turn;
    const timeline = turnTimeline(turn);
    expect(timeline.map((i) => i.title)).toEqual([
      'Visitor (voice, fr-FR): Dinner?',
      'Acknowledged',
      'Reply received: From 6 to 10.',
      'Resolved, offering link "Book" (https://hotel.example/book), quick reply "7 pm", client action show_rooms',
      'Interrupted; the visitor heard: “From 6”',
      'Rated 👎 not helpful: “Too late for us”',
    ]);
    // A streamed reply is one row, its parts folded under it; while it streams, one row says how far it got.
    expect(timeline[2]!.parts?.map((p) => p.title)).toEqual(['Part 0 (first): From 6 ', 'Part 1: to 10.']);
    const streaming = turnTimeline({ ...turn, reply_received: null, reply_text: null } as unknown as Turn);
    expect(streaming.filter((i) => i.kind === 'part').map((i) => [i.title, i.parts?.length])).toEqual([
      ['Streaming: 2 parts so far', 2],
    ]);
    expect(turnTimeline({ ...turn, replied_by: { type: 'person', name: 'Maria' } } as unknown as Turn)[2]!.title).toBe(
      'Reply from Maria: From 6 to 10.',
    );
    const failedWith = (attempt: Partial<Delivery>) =>
      turnTimeline({
        ...turn,
        status: 'failed',
        parts: [],
        reply_received: null,
        hook_attempts: [delivery({ outcome: 'failed', ...attempt })],
      } as unknown as Turn);
    const refused = failedWith({
      error: 'invalid_answer',
      error_detail: 'actions.0.url: Invalid URL',
      response: { status: 200, headers: {}, body: '{}', truncated: false },
    });
    expect(refused[1]!.title).toBe('Hook attempt 1: 200 in 42 ms, refused: actions.0.url: Invalid URL');
    const unreachable = failedWith({
      error: 'egress_refused',
      error_detail:
        '10.0.0.5 is not a public address; the service calls only public addresses unless HOOK_ALLOWED_HOSTS allows WHO@10.0.0.5:80',
      response: null,
    });
    expect(unreachable[1]!.title).toBe(
      'Hook attempt 1: egress_refused in 42 ms: 10.0.0.5 is not a public address; the service calls only public addresses unless HOOK_ALLOWED_HOSTS allows WHO@10.0.0.5:80',
    );
  });
});

describe("the widget's languages", () => {
  it('names each tag that is not BCP 47, one named twice (in any case), and more than 20', () => {
    expect(languageProblems(['en-US', 'de-DE', 'fr'])).toEqual([]);
    expect(languageProblems(['en-US', 'en_GB', 'de-de', 'de-DE'])).toEqual([
      'en_GB is not a language tag such as de-DE or en-GB',
      'de-DE is named twice',
    ]);
    expect(
      languageProblems(
        Array.from({ length: 21 }, (_, i) => `en-${String.fromCharCode(65 + i)}${String.fromCharCode(65 + i)}`),
      ),
    ).toEqual(['At most 20 languages (21 given)']);
  });

  it('labels a locale in its own language, with its tag', () => {
    expect([localeLabel('de'), localeLabel('zh-Hans'), localeLabel('he')]).toEqual([
      'Deutsch (de)',
      '简体中文 (zh-Hans)',
      'עברית (he)',
    ]);
  });

  it('reads pronunciations one a line, and writes them back the same way', () => {
    const lines = 'Adlon = Ad-lonn\nSpa = Schpa [de]\n\nno equals sign';
    expect(pronunciationsOf(lines)).toEqual({
      list: [
        { term: 'Adlon', say: 'Ad-lonn' },
        { term: 'Spa', say: 'Schpa', language: 'de' },
      ],
      problems: ['"no equals sign": write it as term = how to say it, with [de] after for German only'],
    });
    expect(pronunciationsAsLines(pronunciationsOf(lines).list)).toBe('Adlon = Ad-lonn\nSpa = Schpa [de]');
    expect(pronunciationsAsLines(undefined)).toBe('');
  });
});

describe("words in several languages in the console's form (a teaser, an agent's greeting)", () => {
  it('is one text, or one tag: text line per language, and reads back as it was written', () => {
    expect(inLanguagesOf('  Questions about our rooms?  ')).toEqual({ value: 'Questions about our rooms?' });
    expect(inLanguagesOf('Ask me: anything\nabout rooms')).toEqual({ value: 'Ask me: anything about rooms' });
    const byLanguage = inLanguagesOf('en: Questions?\nde-DE:  Fragen?\n\nzh-Hans: 有问题吗？');
    expect(byLanguage).toEqual({ value: { en: 'Questions?', 'de-DE': 'Fragen?', 'zh-Hans': '有问题吗？' } });
    expect(inLanguagesLines({ en: 'Questions?', 'de-DE': 'Fragen?', 'zh-Hans': '有问题吗？' })).toBe(
      'en: Questions?\nde-DE: Fragen?\nzh-Hans: 有问题吗？',
    );
    expect(inLanguagesLines('Hi')).toBe('Hi');
    expect(inLanguagesOf('')).toEqual({ value: '' });
    // Words that only look like a tag ("FAQ:", "Note:") are text.
    expect(inLanguagesOf('FAQ: ask me anything')).toEqual({ value: 'FAQ: ask me anything' });
  });

  it('refuses what could be read two ways: a line without a language beside lines with one, or a language twice', () => {
    expect(inLanguagesOf('Questions about our rooms?\nde: Fragen zu unseren Zimmern?')).toEqual({
      problem:
        'Line 1 has no language, but line 2 has (de:). Start every line with its language (en: …), or write one text for every visitor.',
    });
    expect(inLanguagesOf('en: Hello\nde: Hallo\nde: Guten Tag')).toEqual({
      problem: 'de: is there twice (lines 2 and 3); keep one.',
    });
  });

  it('says what a turn kept of its words: the redacted text, or its length when no words were kept', () => {
    const turn = (kept: Turn['words']['kept'], text: string, reply: string) =>
      ({ text, reply_text: reply, words: { kept, text_chars: 31, reply_chars: 40 } }) as Turn;
    const redacted = turn('redacted', 'Call me on [phone]', 'We will call [phone].');
    expect(saidInWords(redacted, 'visitor')).toBe('Call me on [phone]');
    expect(saidInWords(redacted, 'reply')).toBe('We will call [phone].');
    const none = turn('metadata', '', '');
    expect(saidInWords(none, 'visitor')).toBe('words not kept (31 characters)');
    expect(saidInWords(none, 'reply')).toBe('words not kept (40 characters)');
    expect(keptInWords([turn('everything', 'Hi', 'Hello')])).toBeUndefined();
    expect(keptInWords([turn('everything', 'Hi', 'Hello'), redacted])).toContain('(privacy: redacted)');
    expect(keptInWords([redacted, none])).toContain('(privacy: metadata only)');
  });

  it('reads custom guardrails one a line, action first, and says which line is wrong', () => {
    const list = [
      { action: 'retry', criterion: 'promises a discount' },
      { action: 'hand_off', criterion: 'gives medical advice' },
    ];
    expect(customCriteriaOf('retry: promises a discount\n\nhand_off:  gives medical advice ')).toEqual({ list });
    expect(criteriaAsLines(list)).toBe('retry: promises a discount\nhand_off: gives medical advice');
    expect(customCriteriaOf('refuse: ok criterion\nblock: swearing')).toEqual({
      problem: 'Line 2: write it as refuse, retry or hand_off, a colon, then what a sentence must not do',
    });
  });

  it("says what a guardrail did in words, and nests Try it's values into the token's ctx and the page's context", () => {
    expect(
      guardrailInWords({
        rule: 'blocked_terms',
        action: 'refuse',
        detail: 'Grand Hotel',
        sentence: 'Try the Grand Hotel.',
      }),
    ).toBe(
      'Guardrail: a sentence was stopped, it said the blocked term “Grand Hotel”; replaced by the refusal: “Try the Grand Hotel.”',
    );
    expect(guardrailInWords({ rule: 'custom', action: 'retry', detail: 'promises a discount' })).toBe(
      'Guardrail: a sentence was stopped, it broke “promises a discount”; the model was asked to write it again',
    );
    expect(guardrailInWords({ rule: 'topics', action: 'flagged', sentence: 'Hi.' })).toBe(
      'Guardrail: a sentence was not judged in time: it went out, flagged: “Hi.”',
    );
    expect(guardrailsInWords({ refuse: 2, retry: 0, hand_off: 1, flagged: 0 })).toBe(
      '2 refused · 1 handed to a person',
    );
    expect(guardrailsInWords({ refuse: 0, retry: 0, hand_off: 0, flagged: 0 })).toBe('—');
    const played = {
      'visitor.name': 'Ada',
      'ctx.room': '214',
      'ctx.booking.id': 'B-1',
      'page.context.plan': 'pro',
      'ctx.x': ' ',
    };
    expect(nestedValues(played, 'ctx.')).toEqual({ room: '214', booking: { id: 'B-1' } });
    expect(nestedValues(played, 'page.context.')).toEqual({ plan: 'pro' });
    expect(nestedValues({}, 'ctx.')).toBeUndefined();
  });
});
