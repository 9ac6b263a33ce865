import type { Analytics, Delivery, Turn } from './types';

export interface TimelineItem {
  at: string;
  kind:
    | 'visitor'
    | 'knowledge'
    | 'attempt'
    | 'acknowledged'
    | 'part'
    | 'reply'
    | 'resolved'
    | 'heard'
    | 'feedback'
    | 'guardrail'
    | 'failed';
  title: string;
  delivery?: Delivery;
  ok?: boolean;
  /** A streamed reply's parts, folded under its one row. */
  parts?: { at: string; title: string }[];
}

const DONE: Record<Turn['guardrails'][number]['action'], string> = {
  refuse: 'replaced by the refusal',
  retry: 'the model was asked to write it again',
  hand_off: 'handed to a person',
  flagged: 'not judged in time: it went out, flagged',
};

/** A guardrail's decision about a sentence, in words (README, Variables and guardrails): which rule, what was done, the sentence. */
export function guardrailInWords(d: Turn['guardrails'][number]): string {
  const rule =
    d.rule === 'blocked_terms'
      ? `it said the blocked term “${d.detail ?? ''}”`
      : d.rule === 'topics'
        ? "it left the agent's topics"
        : d.rule === 'injection'
          ? "it repeated the agent's instructions"
          : `it broke “${d.detail ?? ''}”`;
  const sentence = d.sentence ? `: “${d.sentence}”` : '';
  return d.action === 'flagged'
    ? `Guardrail: a sentence was ${DONE.flagged}${sentence}`
    : `Guardrail: a sentence was stopped, ${rule}; ${DONE[d.action]}${sentence}`;
}

/** What a reply offered beside its text, in words: `link "Book" (https://…), quick reply "7 pm", client action show_rooms`. */
export function actionsInWords(actions: Turn['reply_actions']): string {
  return actions
    .map((a) =>
      a.type === 'link'
        ? `link "${a.label}" (${a.url})`
        : a.type === 'quick_reply'
          ? `quick reply "${a.label}"`
          : `client action ${a.name}${a.label ? ` "${a.label}"` : ''}`,
    )
    .join(', ');
}

/** A model's or a tool's call in a turn's timeline: which, how it went, and its figures. */
export function modelCallTitle(d: Delivery): string {
  const answer = d.response ? `${d.response.status}` : (d.error ?? 'no answer');
  const why = d.error_detail ? `: ${d.error_detail}` : '';
  if (d.kind === 'tool') {
    const tool = (JSON.parse(d.request.body) as { tool?: string }).tool ?? 'tool';
    return `Tool ${tool}: ${answer} in ${d.duration_ms} ms${why}`;
  }
  const model = (JSON.parse(d.request.body) as { model?: string }).model ?? 'model';
  const usage = d.model_usage;
  const figures = [
    usage?.first_token_ms != null ? `first token in ${usage.first_token_ms} ms` : '',
    usage?.tokens_in != null ? `${usage.tokens_in} tokens in, ${usage.tokens_out ?? '?'} out` : '',
  ].filter(Boolean);
  return `Model ${model} (call ${d.attempt}): ${answer} in ${d.duration_ms} ms${figures.length ? `, ${figures.join(', ')}` : ''}${why}`;
}

/** A hands-free turn's figures: `Hands-free: 1.8 s of speech, its end heard after 640 ms, recognised in 210 ms; the reply's voice 1.2 s after the visitor stopped`. */
export function handsFreeInWords(voice: NonNullable<Turn['voice']>): string {
  const s = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`);
  const waited =
    voice.first_audio_ms === null
      ? 'the reply not spoken'
      : `the reply's voice ${s(voice.first_audio_ms)} after the visitor stopped`;
  return `Hands-free: ${s(voice.speech_ms)} of speech, its end heard after ${s(voice.end_of_turn_ms)}, recognised in ${s(voice.recognition_ms)}; ${waited}`;
}

export const partsInWords = (n: number): string => `${n} part${n === 1 ? '' : 's'}`;

/** What was said as the turn kept it (README, Privacy: what is kept): the text, or how long it was when no words were kept. */
export function saidInWords(turn: Turn, side: 'visitor' | 'reply'): string {
  const text = side === 'visitor' ? turn.text : (turn.reply_text ?? '');
  if (turn.words.kept !== 'metadata') return text;
  const chars = side === 'visitor' ? turn.words.text_chars : turn.words.reply_chars;
  return `words not kept${chars === null ? '' : ` (${chars} characters)`}`;
}

/** Why a conversation's words look as they do: none kept, or personal values replaced; undefined when every word was kept. */
export function keptInWords(turns: readonly Turn[]): string | undefined {
  const kept = new Set(turns.map((t) => t.words.kept));
  if (kept.has('metadata'))
    return 'Its deployment keeps no words of what is said (privacy: metadata only): turns show their timing, lengths, outcomes and ratings.';
  if (kept.has('redacted'))
    return 'Its deployment replaces personal values before anything is stored (privacy: redacted): each stands as its kind, such as [phone] or [name], where it was said.';
  return undefined;
}

/** One turn as it happened, in time order: the question, each hook attempt, the acknowledgement, the reply (its streamed parts folded under it). */
export function turnTimeline(turn: Turn): TimelineItem[] {
  const items: TimelineItem[] = [
    {
      at: turn.created_at,
      kind: 'visitor',
      title: `Visitor (${turn.mode}${turn.language ? `, ${turn.language}` : ''}): ${saidInWords(turn, 'visitor')}`,
    },
  ];
  // A hands-free turn (README, Hands-free voice): what finding it took, and how long the visitor waited for the voice.
  if (turn.voice)
    items.push({
      at: turn.created_at,
      kind: 'visitor',
      title: handsFreeInWords(turn.voice),
    });
  // Where they asked from (README, Greeting visitors first).
  if (turn.page)
    items.push({
      at: turn.created_at,
      kind: 'visitor',
      title: `On the page ${turn.page.title || turn.page.url} (${turn.page.url})`,
    });
  // The agent's knowledge base passages it was given (README, Answers from your documents).
  if (turn.knowledge)
    items.push({
      at: turn.created_at,
      kind: 'knowledge',
      title: turn.knowledge.length
        ? `Knowledge: ${turn.knowledge.map((k) => `${k.title} (${k.score})`).join(', ')}`
        : 'Knowledge: no passage matched',
    });
  for (const d of turn.hook_attempts) {
    const answer = d.response ? `${d.response.status}` : (d.error ?? 'no answer');
    // Why it failed, in the API's words (for egress_refused: the setting that would allow it).
    const refused = !d.error_detail
      ? ''
      : d.error === 'invalid_answer'
        ? `, refused: ${d.error_detail}`
        : `: ${d.error_detail}`;
    items.push({
      at: d.sent_at,
      kind: 'attempt',
      title: `Hook attempt ${d.attempt}: ${answer} in ${d.duration_ms} ms${refused}`,
      delivery: d,
      ok: d.outcome === 'succeeded',
    });
  }
  if (turn.acknowledged_at) items.push({ at: turn.acknowledged_at, kind: 'acknowledged', title: 'Acknowledged' });
  // A model agent's calls (README, An agent without a server): the model's and its tools'.
  for (const d of turn.model_calls)
    items.push({
      at: d.sent_at,
      kind: 'attempt',
      title: modelCallTitle(d),
      delivery: d,
      ok: d.outcome === 'succeeded',
    });
  const parts = turn.parts.map((p) => ({
    at: p.received_at,
    title: `Part ${p.part}${p.received_at === turn.first_part_at ? ' (first)' : ''}: ${p.text}`,
  }));
  const folded = parts.length ? { parts } : {};
  if (turn.reply_received) {
    const dup = turn.reply_received.duplicates;
    const from = turn.replied_by?.type === 'person' ? `Reply from ${turn.replied_by.name}` : 'Reply received';
    items.push({
      at: turn.reply_received.at,
      kind: 'reply',
      title: `${from}${dup ? ` (${dup} duplicate${dup > 1 ? 's' : ''} ignored)` : ''}: ${saidInWords(turn, 'reply')}`,
      ...folded,
    });
  } else if (parts.length) {
    // Still streaming: one row for the reply so far.
    items.push({ at: parts[0]!.at, kind: 'part', title: `Streaming: ${partsInWords(parts.length)} so far`, ...folded });
  }
  // What the visitor heard of the spoken reply (README, The agent's own voice).
  if (turn.heard)
    items.push({
      at: turn.heard.at,
      kind: 'heard',
      title: turn.heard.interrupted
        ? `Interrupted; the visitor heard: ${turn.heard.text ? `“${turn.heard.text}”` : 'nothing of it'}`
        : `Heard in full: “${turn.heard.text}”`,
    });
  if (turn.feedback)
    items.push({
      at: turn.feedback.at,
      kind: 'feedback',
      title: `Rated ${turn.feedback.rating === 'up' ? '👍 helpful' : '👎 not helpful'}${turn.feedback.comment ? `: “${turn.feedback.comment}”` : ''}`,
    });
  for (const decision of turn.guardrails)
    items.push({
      at: turn.reply_received?.at ?? turn.resolved_at ?? turn.created_at,
      kind: 'guardrail',
      title: guardrailInWords(decision),
      ok: decision.action === 'flagged',
    });
  if (turn.status === 'failed' || turn.status === 'expired')
    items.push({
      at: turn.resolved_at ?? turn.created_at,
      kind: 'failed',
      title: `Turn ${turn.status}${turn.failure_reason ? `: ${turn.failure_reason}` : ''}`,
    });
  else if (turn.resolved_at)
    items.push({
      at: turn.resolved_at,
      kind: 'resolved',
      title: turn.reply_actions.length ? `Resolved, offering ${actionsInWords(turn.reply_actions)}` : 'Resolved',
    });
  return items.sort((x, y) => x.at.localeCompare(y.at));
}

/** What guardrails did (README, Variables and guardrails), by what was done; a dash when nothing. */
export function guardrailsInWords(counts: Analytics['totals']['guardrails']): string {
  const words = { refuse: 'refused', retry: 'written again', hand_off: 'handed to a person', flagged: 'flagged' };
  const said = (Object.keys(words) as (keyof typeof words)[])
    .filter((outcome) => counts[outcome])
    .map((outcome) => `${counts[outcome]} ${words[outcome]}`);
  return said.length ? said.join(' · ') : '—';
}
